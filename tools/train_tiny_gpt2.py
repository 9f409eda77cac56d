#!/usr/bin/env python3
"""Train the shipped tiny English GPT-2 (pymtl_dfx/models/tiny-english).

Reproducible from a seed, offline, on one CPU thread:

  apt-get install diatheke sword-text-web        # the corpus (public domain)
  pip install -e '.[train]'                       # torch (CPU), tokenizers
  python tools/train_tiny_gpt2.py --seed 0        # ~30 min on one core

Steps (each writes into --work, default build/tiny-english; nothing there is
committed):

1. corpus: the World English Bible (Debian package sword-text-web, public
   domain) read with the SWORD tool `diatheke`, footnotes removed, curly
   quotes and dashes made ASCII, one paragraph per chapter, the books
   separated by <|endoftext|>.  Its sha256 goes in the model card.
2. tokenizer: a GPT-2 byte-level BPE (Hugging Face `tokenizers`, GPT-2's
   pre-tokenisation pattern, the 256 byte tokens, <|endoftext|> as id 0)
   of --vocab tokens, saved as tokenizer.json and vocab.json + merges.txt.
3. model: GPT-2 exactly as Hugging Face's GPT2LMHeadModel computes it
   (learned positions, pre-LayerNorm, GELU tanh "gelu_new", LM head tied to
   wte), head width 64, trained on random windows of the corpus with AdamW
   for a fixed number of steps (not a time budget, so a rerun gives the same
   weights on the same torch build).
4. export: model.safetensors (FP32, GPT2Model names) and config.json through
   the project's own saver; the project's loader reads it back, its FP32
   reference must match torch's logits, and the greedy tokens of the model
   card's prompts (FP32 reference and DFX numerics) go to expected.json,
   which tests/gpt2/test_shipped_model.py checks.

Only this script needs torch and tokenizers (`[train]` extra); the package
never imports it.
"""

import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import time

# One thread everywhere (the machine is shared); set before the imports
# that read them.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
             "RAYON_NUM_THREADS", "RAYON_RS_NUM_CPUS"):
  os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

SWORD_MODULE = "engWEB2015eb"
SWORD_PACKAGE = "sword-text-web"
EOT = "<|endoftext|>"
# Prompts whose greedy continuations are recorded in expected.json.
PROMPTS = ["There was a man", "The king said to", "He went up to"]
N_NEW = 24

_VERSE = re.compile(r"^\s*(\S.*?) (\d+):(\d+): ?(.*)$")
_GLOSSARY = "The following words used in the World English Bible"
_PSALM_151_TITLE = "This Psalm is a genuine one of David, though extra,"


# -- 1. corpus -------------------------------------------------------------------

def sword_text():
  """The whole module as diatheke's plain text, footnotes in [c:v ...]."""
  try:
    out = subprocess.run(["diatheke", "-b", SWORD_MODULE, "-f", "plain", "-o", "f",
                          "-k", "Gen 1:1 - Rev 22:21"],
                         check=True, capture_output=True, text=True).stdout
  except FileNotFoundError:
    sys.exit("diatheke not found: apt-get install diatheke sword-text-web")
  if "Genesis 1:1:" not in out:
    sys.exit(f"diatheke printed no Genesis 1:1: is {SWORD_PACKAGE} installed?")
  return out


def strip_footnotes(text):
  """Drop every "[c:v ...]" footnote (brackets inside one nest)."""
  out, depth, i = [], 0, 0
  while i < len(text):
    c = text[i]
    if c == "[" and (depth or re.match(r"\[\d+:\d+", text[i:])):
      depth += 1
    elif c == "]" and depth:
      depth -= 1
    elif not depth:
      out.append(c)
    i += 1
  return "".join(out)


_ASCII = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                        "\u2013": "-", "\u2014": " - ", "\u00a0": " "})


def clean(text):
  text = strip_footnotes(text).translate(_ASCII)
  text = re.sub(r"<[^>]*>", " ", text)     # stray OSIS markup diatheke leaks
  text = re.sub(r"\s+", " ", text).strip()
  return re.sub(r" ([,.;:?!])", r"\1", text)


def build_corpus(raw):
  """Books -> chapters -> verses; poetry lines continue their verse."""
  books = {}            # book -> {chapter -> [verse texts]}
  verse = None
  glossary = []
  heading = []          # a title after a blank line opens the next verse
  seen = set()
  blank = False
  for line in raw.split("\n"):
    if not line.strip():
      blank = True
      continue
    if line.strip() == f"({SWORD_MODULE})" or line.rstrip().endswith("[]"):
      continue          # diatheke repeats a psalm's title before each verse
    if _GLOSSARY in line:
      head, _, tail = line.partition(_GLOSSARY)
      if verse is not None:
        verse.append(head)
      glossary.append(_GLOSSARY + tail)
      verse = glossary
      continue
    if line.startswith(_PSALM_151_TITLE):
      if _PSALM_151_TITLE in seen:
        continue        # diatheke prints it before every later verse too
      seen.add(_PSALM_151_TITLE)
    if "<" in line:
      line = line[line.rfind(">") + 1:]    # markup before an empty verse
    m = _VERSE.match(line)
    if m:
      book, chapter, _, text = m.groups()
      verse, heading = heading + [text], []
      books.setdefault(book, {}).setdefault(chapter, []).append(verse)
    elif blank or verse is None:
      # diatheke also repeats a title (Psalm 151's, say) before later verses:
      # a title is kept where it first appears
      key = clean(line)
      if key not in seen:
        seen.add(key)
        heading.append(line)
    else:
      verse.append(line)          # a poem's next line
    blank = False
  docs = []
  for chapters in books.values():
    paras = [" ".join(t for t in (clean(" ".join(v)) for v in verses) if t)
             for verses in chapters.values()]
    docs.append("\n\n".join(p for p in paras if p))
  docs.append(clean(" ".join(glossary)))
  return f"\n{EOT}\n".join(d for d in docs if d) + "\n"


def package_version(name):
  try:
    return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", name],
                          check=True, capture_output=True, text=True).stdout
  except (OSError, subprocess.CalledProcessError):
    return "unknown"


# -- 2. tokenizer ------------------------------------------------------------------

def train_tokenizer(corpus_path, vocab_size, out_dir):
  from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
  tok = Tokenizer(models.BPE())
  tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
  tok.decoder = decoders.ByteLevel()
  trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[EOT],
                                initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                show_progress=False)
  tok.train([corpus_path], trainer)
  tok.save(os.path.join(out_dir, "tokenizer.json"))
  tok.model.save(out_dir)          # vocab.json, merges.txt
  return tok


def encode_corpus(tok, text):
  """Ids of the corpus, chapter by chapter (paragraphs are independent of
  each other under the pre-tokeniser, so this equals encoding the whole)."""
  ids = []
  for k, doc in enumerate(text.split(EOT)):
    if k:
      ids.append(tok.token_to_id(EOT))
    ids.extend(tok.encode(doc).ids)
  return ids


# -- 3. model ----------------------------------------------------------------------

def make_model(V, P, E, L, H):
  import torch
  import torch.nn as nn
  import torch.nn.functional as F

  class Block(nn.Module):
    def __init__(self):
      super().__init__()
      self.ln_1, self.ln_2 = nn.LayerNorm(E, eps=1e-5), nn.LayerNorm(E, eps=1e-5)
      self.c_attn, self.attn_proj = nn.Linear(E, 3 * E), nn.Linear(E, E)
      self.c_fc, self.mlp_proj = nn.Linear(E, 4 * E), nn.Linear(4 * E, E)

    def forward(self, x):
      B, T, _ = x.shape
      q, k, v = (t.view(B, T, H, E // H).transpose(1, 2)
                 for t in self.c_attn(self.ln_1(x)).split(E, 2))
      a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
      x = x + self.attn_proj(a.transpose(1, 2).reshape(B, T, E))
      return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

  class GPT2(nn.Module):
    def __init__(self):
      super().__init__()
      self.wte, self.wpe = nn.Embedding(V, E), nn.Embedding(P, E)
      self.h = nn.ModuleList(Block() for _ in range(L))
      self.ln_f = nn.LayerNorm(E, eps=1e-5)
      # GPT-2's initialisation; residual projections scaled by 1/sqrt(2L)
      for name, p in self.named_parameters():
        if name.endswith("bias"):
          nn.init.zeros_(p)
        elif "ln" not in name:
          std = 0.02 / math.sqrt(2 * L) if name.endswith("proj.weight") else 0.02
          nn.init.normal_(p, 0.0, 0.01 if name.startswith("wpe") else std)

    def forward(self, idx):
      x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
      for block in self.h:
        x = block(x)
      return self.ln_f(x) @ self.wte.weight.T     # tied LM head

  return GPT2()


def hf_tensors(model, L):
  """GPT2Model names and Conv1D ([in, out]) orientation, float32 numpy."""
  sd = {k: v.detach().numpy().astype("float32") for k, v in model.state_dict().items()}
  out = {"wte.weight": sd["wte.weight"], "wpe.weight": sd["wpe.weight"]}
  for i in range(L):
    p = f"h.{i}."
    for ours, hf, transpose in (("ln_1.weight", "ln_1.weight", False),
                                ("ln_1.bias", "ln_1.bias", False),
                                ("c_attn.weight", "attn.c_attn.weight", True),
                                ("c_attn.bias", "attn.c_attn.bias", False),
                                ("attn_proj.weight", "attn.c_proj.weight", True),
                                ("attn_proj.bias", "attn.c_proj.bias", False),
                                ("ln_2.weight", "ln_2.weight", False),
                                ("ln_2.bias", "ln_2.bias", False),
                                ("c_fc.weight", "mlp.c_fc.weight", True),
                                ("c_fc.bias", "mlp.c_fc.bias", False),
                                ("mlp_proj.weight", "mlp.c_proj.weight", True),
                                ("mlp_proj.bias", "mlp.c_proj.bias", False)):
      t = sd[p + ours]
      out[p + hf] = (t.T if transpose else t).copy()
  out["ln_f.weight"], out["ln_f.bias"] = sd["ln_f.weight"], sd["ln_f.bias"]
  return out


def train(args, ids, log):
  import torch
  import torch.nn.functional as F
  torch.set_num_threads(1)
  torch.manual_seed(args.seed)
  torch.use_deterministic_algorithms(True)
  V, P, E, L = args.vocab, args.n_positions, args.n_embd, args.n_layer
  model = make_model(V, P, E, L, E // 64)
  data = torch.tensor(ids, dtype=torch.long)
  n_val = len(data) // 50                     # the last 2% is held out
  train_data, val_data = data[:-n_val], data[-n_val:]
  gen = torch.Generator().manual_seed(args.seed)

  def batch(src, n, g):
    starts = torch.randint(0, len(src) - P - 1, (n,), generator=g)
    x = torch.stack([src[s:s + P + 1] for s in starts.tolist()])
    return x[:, :-1], x[:, 1:]

  val_x, val_y = batch(val_data, 16, torch.Generator().manual_seed(args.seed + 1))
  decay = [p for n, p in model.named_parameters() if p.dim() == 2 and not n.startswith("wpe")]
  other = [p for n, p in model.named_parameters() if not (p.dim() == 2 and not n.startswith("wpe"))]
  opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                           {"params": other, "weight_decay": 0.0}],
                          lr=args.lr, betas=(0.9, 0.95), eps=1e-8)

  def lr_at(step):
    if step < args.warmup:
      return args.lr * (step + 1) / args.warmup
    frac = (step - args.warmup) / max(1, args.steps - args.warmup)
    return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))

  def val_loss():
    model.eval()
    with torch.no_grad():
      loss = F.cross_entropy(model(val_x).reshape(-1, V), val_y.reshape(-1)).item()
    model.train()
    return loss

  t0 = time.time()
  history = []
  running = None
  for step in range(args.steps):
    for group in opt.param_groups:
      group["lr"] = lr_at(step)
    x, y = batch(train_data, args.batch, gen)
    loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
    if (step + 1) % args.eval_every == 0 or step + 1 == args.steps:
      v = val_loss()
      history.append({"step": step + 1, "train_loss": round(running, 4),
                      "val_loss": round(v, 4), "seconds": round(time.time() - t0, 1)})
      log(f"step {step + 1}/{args.steps}  train {running:.3f}  val {v:.3f}  "
          f"{time.time() - t0:.0f} s")
  return model, history, time.time() - t0


# -- 4. export and check -------------------------------------------------------------

def export(args, model, out_dir):
  import numpy as np
  import torch
  from pymtl_dfx.config import GPT2Config
  from pymtl_dfx.gpt2 import GPT2Weights, ReferenceModel, load_checkpoint
  from pymtl_dfx.gpt2.checkpoint import save_checkpoint
  cfg = GPT2Config(n_layer=args.n_layer, n_embd=args.n_embd, n_head=args.n_embd // 64,
                   vocab_size=args.vocab, n_positions=args.n_positions,
                   name="tiny-english")
  save_checkpoint(out_dir, GPT2Weights(cfg, hf_tensors(model, args.n_layer)))
  hf = cfg.to_hf_dict()
  hf.update({"bos_token_id": 0, "eos_token_id": 0, "torch_dtype": "float32"})
  with open(os.path.join(out_dir, "config.json"), "w") as f:
    f.write(json.dumps(hf, indent=2) + "\n")
  # the project's loader and FP32 reference against torch
  w = load_checkpoint(out_dir)
  ids = list(range(1, 40))
  want = model.eval()(torch.tensor([ids]))[0].detach().numpy()
  got = ReferenceModel(w).forward(ids)
  err = float(np.abs(got - want).max())
  if err > 1e-3:
    sys.exit(f"the project's reference differs from torch by {err}")
  return w, err


def expected_tokens(w, out_dir):
  from pymtl_dfx.gpt2 import DFXForward, ReferenceModel, generate
  from pymtl_dfx.gpt2.tokenizer import GPT2Tokenizer
  tok = GPT2Tokenizer.from_dir(out_dir)
  ref, dfx = ReferenceModel(w), DFXForward(w.to_fp16())
  cases = []
  for prompt in PROMPTS:
    ids = tok.encode(prompt)
    fp32 = generate(ref, ids, N_NEW)
    fp16 = generate(dfx, ids, N_NEW)
    cases.append({"prompt": prompt, "prompt_ids": ids, "n_new": N_NEW,
                  "fp32_reference": fp32, "dfx_numerics": fp16,
                  "text_fp32": tok.decode(fp32), "text_dfx": tok.decode(fp16)})
  return cases


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--work", default=os.path.join(REPO, "build", "tiny-english"))
  ap.add_argument("--out", default=os.path.join(REPO, "pymtl_dfx", "models", "tiny-english"))
  ap.add_argument("--corpus", help="use this corpus file instead of extracting it")
  ap.add_argument("--vocab", type=int, default=4096)
  ap.add_argument("--n-embd", type=int, default=128)
  ap.add_argument("--n-layer", type=int, default=4)
  ap.add_argument("--n-positions", type=int, default=256)
  ap.add_argument("--batch", type=int, default=16)
  ap.add_argument("--steps", type=int, default=1200)
  ap.add_argument("--warmup", type=int, default=100)
  ap.add_argument("--lr", type=float, default=2e-3)
  ap.add_argument("--eval-every", type=int, default=100)
  ap.add_argument("--rerecord", action="store_true",
                  help="only recompute expected.json's greedy tokens for --out")
  args = ap.parse_args(argv)
  if args.rerecord:
    return rerecord(args.out, lambda msg: print(msg, flush=True))
  os.makedirs(args.work, exist_ok=True)
  os.makedirs(args.out, exist_ok=True)

  def log(msg):
    print(msg, flush=True)

  corpus_path = args.corpus or os.path.join(args.work, "corpus.txt")
  if not args.corpus:
    text = build_corpus(sword_text())
    with open(corpus_path, "w", encoding="utf-8") as f:
      f.write(text)
  with open(corpus_path, encoding="utf-8") as f:
    text = f.read()
  digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
  log(f"corpus {corpus_path}: {len(text.encode())} bytes, sha256 {digest}")

  tok = train_tokenizer(corpus_path, args.vocab, args.out)
  ids = encode_corpus(tok, text)
  log(f"tokenizer: {tok.get_vocab_size()} tokens; corpus {len(ids)} tokens")

  model, history, seconds = train(args, ids, log)
  w, err = export(args, model, args.out)
  cases = expected_tokens(w, args.out)
  for c in cases:
    log(f"{c['prompt']!r} -> {c['text_fp32']!r}"
        + ("" if c["fp32_reference"] == c["dfx_numerics"] else f" (DFX: {c['text_dfx']!r})"))
  meta = {
    "corpus": {"source": f"Debian package {SWORD_PACKAGE} {package_version(SWORD_PACKAGE)} "
                         f"(SWORD module {SWORD_MODULE}), via diatheke",
               "bytes": len(text.encode()), "tokens": len(ids), "sha256": digest},
    "training": {k: getattr(args, k) for k in
                 ("seed", "vocab", "n_embd", "n_layer", "n_positions", "batch",
                  "steps", "warmup", "lr")}
                | {"torch": __import__("torch").__version__,
                   "tokenizers": __import__("tokenizers").__version__,
                   "seconds": round(seconds), "history": history,
                   "reference_vs_torch_max_abs": err},
    "cases": cases,
  }
  write_expected(args.out, meta)
  log(f"wrote {args.out} in {seconds:.0f} s of training")


def write_expected(out_dir, meta):
  text = json.dumps(meta, indent=1)
  # a list of numbers on one line
  text = re.sub(r"\[\s*(-?\d[\d\s,.-]*?)\s*\]",
                lambda m: "[" + ", ".join(m.group(1).replace(",", " ").split()) + "]", text)
  with open(os.path.join(out_dir, "expected.json"), "w") as f:
    f.write(text + "\n")


def rerecord(out_dir, log):
  """Only the cases of expected.json, from the shipped folder's weights
  (after a change of PROMPTS; the training record is kept)."""
  from pymtl_dfx.gpt2 import load_checkpoint
  with open(os.path.join(out_dir, "expected.json")) as f:
    meta = json.load(f)
  meta["cases"] = expected_tokens(load_checkpoint(out_dir), out_dir)
  for c in meta["cases"]:
    log(f"{c['prompt']!r} -> {c['text_fp32']!r}")
  write_expected(out_dir, meta)


if __name__ == "__main__":
  main()
