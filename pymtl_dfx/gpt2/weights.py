"""GPT2Weights: a GPT-2's parameters in memory, and seeded random ones.

Tensors are kept under their Hugging Face names (see `layout`), float32 as
checkpoints store them; `to_fp16()` gives the FP16 copy that DFX keeps in
HBM/DDR (one RNE rounding per value, nothing else).  A NaN, an infinity
or a value that rounds past FP16's largest finite number (65504) would make
every later result silently wrong, so `to_fp16` refuses them with
`WeightError`, naming each tensor and its first bad index.
"""

from dataclasses import dataclass

import numpy as np

from ..config import GPT2Config
from .layout import LM_HEAD, block_name, shape_problems, tensor_shapes

# Largest finite FP16 value; from 65520 up, RNE rounds to infinity.
FP16_MAX = float(np.finfo(np.float16).max)


class WeightError(ValueError):
  """Weights hold values DFX cannot compute with; names each tensor."""


def _first(mask):
  """Index (a tuple) of the first True in `mask`, in C order."""
  return tuple(int(i) for i in np.unravel_index(int(np.argmax(mask)), mask.shape))


def _where(idx):
  return "[" + ", ".join(map(str, idx)) + "]"


def nonfinite_problem(name, t):
  """None, or a sentence naming `t`'s NaN/inf count and the first one."""
  bad = ~np.isfinite(t)
  if not bad.any():
    return None
  idx = _first(bad)
  return (f"tensor '{name}' holds {int(bad.sum())} NaN/inf value(s), the first "
          f"({t[idx]}) at index {_where(idx)}")


def overflow_problem(name, t, narrow):
  """None, or a sentence naming the first finite value of `t` that became
  an infinity in its narrower copy `narrow` (FP16, or FP32 from FP64)."""
  over = np.isinf(narrow) & np.isfinite(t)
  if not over.any():
    return None
  idx = _first(over)
  kind = "FP16" if narrow.dtype == np.float16 else "FP32"
  return (f"tensor '{name}' has {int(over.sum())} value(s) beyond {kind}'s range "
          f"(+-{float(np.finfo(narrow.dtype).max):g}), the first ({float(t[idx])!r}) "
          f"at index {_where(idx)}")


def _summary(problems, limit=8):
  more = len(problems) - limit
  return "; ".join(problems[:limit]) + (f"; and {more} more" if more > 0 else "")


@dataclass(frozen=True, eq=False)   # arrays have no single truth value
class GPT2Weights:
  config: GPT2Config
  tensors: dict    # HF name -> np.ndarray (float32, or float16 after to_fp16)

  def __post_init__(self):
    problems = shape_problems(
      self.config, {k: v.shape for k, v in self.tensors.items()})
    if problems:
      raise ValueError("GPT2Weights do not match the config: " + "; ".join(problems))
    dtypes = sorted({str(t.dtype) for t in self.tensors.values()})
    if dtypes not in (["float32"], ["float16"]):
      raise ValueError(f"GPT2Weights must be all float32 or all float16, "
                       f"got {dtypes}")

  @property
  def dtype(self):
    return next(iter(self.tensors.values())).dtype

  def __getitem__(self, name):
    return self.tensors[name]

  @property
  def lm_head(self):
    """The LM head as [vocab_size, n_embd] (logits = h @ lm_head.T): its
    own tensor when the config unties it, else wte."""
    return self.tensors[LM_HEAD if LM_HEAD in self.tensors else "wte.weight"]

  def layer(self, i: int, suffix: str):
    return self.tensors[block_name(i, suffix)]

  def to_fp16(self) -> "GPT2Weights":
    """The FP16 copy; raises WeightError if any value is NaN/inf or does
    not fit FP16 (the hardware would compute garbage from it silently)."""
    tensors, problems = {}, []
    for k, v in self.tensors.items():
      with np.errstate(over="ignore"):    # overflow is reported below, by name
        t16 = v.astype(np.float16)
      problem = nonfinite_problem(k, v) or overflow_problem(k, v, t16)
      if problem:
        problems.append(problem)
      tensors[k] = t16
    if problems:
      raise WeightError(f"cannot convert the weights of {self.config.name!r} to "
                        f"FP16: {_summary(problems)}")
    return GPT2Weights(self.config, tensors)

  def to_fp32(self) -> "GPT2Weights":
    return GPT2Weights(self.config,
                       {k: v.astype(np.float32) for k, v in self.tensors.items()})

  def replace(self, updates: dict) -> "GPT2Weights":
    """A copy with the tensors named in `updates` swapped (same dtype kept)."""
    new = dict(self.tensors)
    for name, value in updates.items():
      new[name] = np.asarray(value, self.dtype)
    return GPT2Weights(self.config, new)


def random_weights(cfg: GPT2Config, seed: int = 0) -> GPT2Weights:
  """Seeded random weights with GPT-2's initial statistics.

  Matrices (wte and every Conv1D weight) N(0, 0.02), wpe N(0, 0.01) (as
  GPT-2's init), small biases N(0, 0.01) and LayerNorm gamma U(0.9, 1.1),
  beta U(-0.02, 0.02) rather than exactly 1 and 0, so that a mistake in how
  the parameters are applied changes the output.  Tensors are drawn in the
  layout's order from one generator: same (cfg, seed), same bits.
  """
  rng = np.random.default_rng(seed)
  tensors = {}
  for name, shape in tensor_shapes(cfg).items():
    kind = name.split(".")[-2] if name.count(".") else name
    if name == "wpe.weight":
      t = rng.standard_normal(shape, np.float32) * np.float32(0.01)
    elif kind.startswith("ln"):
      if name.endswith("weight"):
        t = rng.uniform(0.9, 1.1, shape).astype(np.float32)
      else:
        t = rng.uniform(-0.02, 0.02, shape).astype(np.float32)
    elif name.endswith(".bias"):
      t = rng.standard_normal(shape, np.float32) * np.float32(0.01)
    else:
      t = rng.standard_normal(shape, np.float32) * np.float32(0.02)
    tensors[name] = t
  return GPT2Weights(cfg, tensors)
