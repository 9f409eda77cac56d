"""Acceptance (issue #13 item 2): a Hugging Face GPT-2 folder as the hub has
it (names without 'transformer.', attn.bias / attn.masked_bias buffers,
n_ctx in config.json) with its tokenizer as tokenizer.json only, or as
vocab.json + merges.txt only, gives through `dfx generate --prompt TEXT`
the tokens of the project's FP32 reference under greedy decoding."""

import json
import shutil

import numpy as np
import pytest
import safetensors.numpy

from pymtl_dfx.cli import main
from pymtl_dfx.config import GPT2Config
from pymtl_dfx.gpt2 import ReferenceModel, generate, random_weights, save_checkpoint
from pymtl_dfx.gpt2.tokenizer import GPT2Tokenizer
from pymtl_dfx.printable import stream_text
from test_gpt2_checkpoint import hub_config
from test_tokenizer import MERGES, _vocab, _write, write_tokenizer_json

pytestmark = pytest.mark.no_verilog   # nothing to translate

PROMPT = "the then hé 🙂"
N_NEW = 8


@pytest.fixture(scope="module")
def hub_folder(tmp_path_factory):
  """Weights only (no tokenizer): a 2-layer GPT-2 over the test vocabulary."""
  vocab = _vocab()
  cfg = GPT2Config(n_layer=2, n_embd=128, n_head=2, vocab_size=len(vocab), n_positions=64,
                   name="hub")
  w = random_weights(cfg, seed=22)     # greedy output that changes token (not one id repeated)
  path = tmp_path_factory.mktemp("hub") / "weights"
  save_checkpoint(path, w)
  t = safetensors.numpy.load_file(str(path / "model.safetensors"))
  for i in range(cfg.n_layer):
    t[f"h.{i}.attn.bias"] = np.tril(np.ones((1, 1, 64, 64), np.float32))
    t[f"h.{i}.attn.masked_bias"] = np.array(-1e4, np.float32)
  safetensors.numpy.save_file(t, str(path / "model.safetensors"), metadata={"format": "pt"})
  hf = hub_config(cfg, n_positions=False)
  hf["bos_token_id"] = hf["eos_token_id"] = vocab["<|endoftext|>"]
  (path / "config.json").write_text(json.dumps(hf, indent=2))
  return path, w


def _with_tokenizer(hub_folder, tmp_path, kind):
  src, w = hub_folder
  path = tmp_path / kind
  shutil.copytree(src, path)
  if kind == "tokenizer.json":
    write_tokenizer_json(path, _vocab(), MERGES)
  else:
    _write(path, _vocab(), MERGES)
  return path, w


@pytest.mark.parametrize("kind", ["tokenizer.json", "vocab+merges"])
def test_dfx_generate_gives_the_fp32_reference_tokens(capsys, tmp_path, hub_folder, kind):
  path, w = _with_tokenizer(hub_folder, tmp_path, kind)
  assert main(["generate", "--model", str(path), "--prompt", PROMPT, "--new-tokens", str(N_NEW),
               "--cores", "2", "--json"]) == 0
  out = json.loads(capsys.readouterr().out)
  tok = GPT2Tokenizer(_vocab(), [m.split() for m in MERGES])
  ids = tok.encode(PROMPT)
  assert out["prompt_ids"] == ids and len(ids) < len(PROMPT.encode())    # merges applied
  want = generate(ReferenceModel(w), ids, N_NEW)
  assert out["tokens"] == want and len(set(want)) >= 3
  assert out["text"] == tok.decode(want)
  # streamed: the prompt and the generated text, whole (control characters
  # escaped: a random model's text holds some)
  assert main(["generate", "--model", str(path), "--prompt", PROMPT, "--new-tokens",
               str(N_NEW)]) == 0
  assert capsys.readouterr().out == stream_text(tok.decode(ids + want)) + "\n"


def test_stop_at_eos_with_the_folder_tokenizer(capsys, tmp_path, hub_folder):
  path, _ = _with_tokenizer(hub_folder, tmp_path, "tokenizer.json")
  assert main(["generate", "--model", str(path), "--prompt", PROMPT, "--new-tokens", "4",
               "--stop-at-eos", "--json"]) == 0
  out = json.loads(capsys.readouterr().out)
  assert out["decoding"]["stop_at_eos"] and len(out["tokens"]) <= 4


def test_a_post_processor_template_adds_its_tokens_to_the_prompt(capsys, tmp_path, hub_folder):
  """tokenizer.json's post-processor is honoured: a template that puts
  "<|endoftext|>" before each text gives the model that BOS first."""
  from test_tokenizer import BOS_TEMPLATE
  path, w = _with_tokenizer(hub_folder, tmp_path, "vocab+merges")
  write_tokenizer_json(path, _vocab(), MERGES, post_processor=BOS_TEMPLATE)
  assert main(["generate", "--model", str(path), "--prompt", PROMPT, "--new-tokens", "3",
               "--json"]) == 0
  out = json.loads(capsys.readouterr().out)
  tok = GPT2Tokenizer(_vocab(), [m.split() for m in MERGES])
  ids = [tok.eot_id] + tok.encode(PROMPT)
  assert out["prompt_ids"] == ids
  assert out["tokens"] == generate(ReferenceModel(w), ids, 3)
