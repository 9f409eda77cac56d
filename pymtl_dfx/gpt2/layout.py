"""GPT-2's tensors: their Hugging Face names and shapes, in the file's order.

The names are those of `GPT2Model` (no `transformer.` prefix).  Linear layers
are HF `Conv1D`s: the weight is stored [in, out], so y = x @ W + b, which is
also the orientation `numerics.matvec` / `numerics.conv1d` take.

This is the one place that knows the checkpoint layout; the loader, the
saver, the random initialiser and the forwards all iterate over it.
"""

from ..config import GPT2Config

# (suffix inside block i, shape as a function of (n_embd, n_inner, attn_dim));
# attn_dim is n_embd in GPT-2 itself (GPT2Config.head_dim)
_BLOCK = [
  ("ln_1.weight",        lambda e, f, a: (e,)),
  ("ln_1.bias",          lambda e, f, a: (e,)),
  ("attn.c_attn.weight", lambda e, f, a: (e, 3 * a)),
  ("attn.c_attn.bias",   lambda e, f, a: (3 * a,)),
  ("attn.c_proj.weight", lambda e, f, a: (a, e)),
  ("attn.c_proj.bias",   lambda e, f, a: (e,)),
  ("ln_2.weight",        lambda e, f, a: (e,)),
  ("ln_2.bias",          lambda e, f, a: (e,)),
  ("mlp.c_fc.weight",    lambda e, f, a: (e, f)),
  ("mlp.c_fc.bias",      lambda e, f, a: (f,)),
  ("mlp.c_proj.weight",  lambda e, f, a: (f, e)),
  ("mlp.c_proj.bias",    lambda e, f, a: (e,)),
]

BLOCK_SUFFIXES = tuple(name for name, _ in _BLOCK)
# GPT2LMHeadModel's output matrix; a parameter of its own only when the
# config unties it from wte.
LM_HEAD = "lm_head.weight"


def block_name(layer: int, suffix: str) -> str:
  return f"h.{layer}.{suffix}"


def tensor_shapes(cfg: GPT2Config) -> dict:
  """Every parameter tensor of `cfg`: name -> shape, in HF's order."""
  e, f, a = cfg.n_embd, cfg.n_inner, cfg.attn_dim
  shapes = {"wte.weight": (cfg.vocab_size, e),
            "wpe.weight": (cfg.n_positions, e)}
  for i in range(cfg.n_layer):
    for suffix, shape in _BLOCK:
      shapes[block_name(i, suffix)] = shape(e, f, a)
  shapes["ln_f.weight"] = (e,)
  shapes["ln_f.bias"] = (e,)
  if not cfg.tie_word_embeddings:
    # nn.Linear's [out, in], as wte: logits = h @ lm_head.weight^T
    shapes[LM_HEAD] = (cfg.vocab_size, e)
  return shapes


def shape_problems(cfg: GPT2Config, found: dict) -> list:
  """Missing, unexpected and wrongly shaped tensors, as readable sentences.

  `found` maps tensor names to their shapes.
  """
  expected = tensor_shapes(cfg)
  problems = []
  for name, shape in expected.items():
    if name not in found:
      problems.append(f"missing tensor '{name}' (expected shape {shape})")
    elif tuple(found[name]) != shape:
      problems.append(f"tensor '{name}' has shape {tuple(found[name])}, "
                      f"expected {shape}")
  for name, shape in found.items():
    if name not in expected:
      problems.append(f"unexpected tensor '{name}' with shape {tuple(shape)} "
                      f"(not a parameter of a GPT-2 with n_layer={cfg.n_layer})")
  return problems
