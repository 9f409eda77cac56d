"""Load and save GPT-2 checkpoints in the Hugging Face directory layout.

A checkpoint is a directory holding `config.json` and `model.safetensors`
(tensor names as `layout` lists them).  Files written by GPT2LMHeadModel put
`transformer.` in front of every name and add `lm_head.weight`; older ones
also carry the attention-mask buffers `h.{i}.attn.bias` / `.masked_bias`.
The prefix is stripped, and the mask buffers are skipped (the mask is
implicit in token-by-token decoding).  `lm_head.weight` is a parameter when
config.json says `tie_word_embeddings: false` (then it must be there); with
tied embeddings (the default) a stored copy must equal `wte.weight` - a
different one would leave it unclear which matrix the model means.

Every problem with a checkpoint raises one `CheckpointError` whose message
names the file and, for tensors, every bad tensor with the expected and
found shape, so that a wrong or truncated download is diagnosed in one go.
The header is checked before any tensor data is read; NaN or infinite
values are refused after (naming each tensor and its first bad index).
"""

import os

import numpy as np
import safetensors
import safetensors.numpy

from ..atomic import atomic_path, write_text
from ..config import ConfigError, GPT2Config
from ..files import check_input, load_json, short_repr, type_name
from ..printable import shown
from .layout import LM_HEAD, shape_problems, tensor_shapes
from .weights import GPT2Weights, nonfinite_problem, overflow_problem

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
PREFIX = "transformer."
# The files of a folder that the project reads (the tokenizer's too).
MODEL_FILES = (CONFIG_FILE, WEIGHTS_FILE, "tokenizer.json", "vocab.json", "merges.txt")

# Other formats that a Hugging Face directory may hold instead of ours.
_UNSUPPORTED_FILES = ["pytorch_model.bin", "model.safetensors.index.json",
                      "pytorch_model.bin.index.json", "tf_model.h5",
                      "flax_model.msgpack", "model.ckpt.index"]
# safetensors dtypes we convert (exactly) to float32.
_FLOAT_DTYPES = {"F32", "F16", "F64"}
# config.json options that change the computation and that DFX does not do.
_CONFIG_REQUIREMENTS = {
  "model_type": ("gpt2",),
  "activation_function": ("gelu_new",),
  "scale_attn_weights": (True,),
  "scale_attn_by_inverse_layer_idx": (False,),
  "reorder_and_upcast_attn": (False,),
}


class CheckpointError(ValueError):
  """A checkpoint cannot be used; the message names the file and what is wrong."""


def _is_skipped(name: str, cfg: GPT2Config) -> bool:
  return ((name == LM_HEAD and cfg.tie_word_embeddings) or name.endswith(".attn.bias")
          or name.endswith(".attn.masked_bias"))


def _summary(problems, limit=12):
  """Join problems; a wholly wrong file would otherwise list hundreds."""
  more = len(problems) - limit
  return "; ".join(problems[:limit]) + (f"; and {more} more" if more > 0 else "")


def read_config(path) -> GPT2Config:
  """The GPT2Config of a checkpoint directory, from its config.json alone
  (cheap: callers check a model against their limits before loading it)."""
  path = os.fspath(path)
  cfg_path = os.path.join(path, CONFIG_FILE)
  if not os.path.lexists(cfg_path):
    raise CheckpointError(f"{shown(cfg_path)}: file not found (a GPT-2 checkpoint "
                          f"directory needs {CONFIG_FILE} and {WEIGHTS_FILE})")
  data = load_json(cfg_path, CheckpointError)
  if not isinstance(data, dict):
    raise CheckpointError(f"{shown(cfg_path)}: expected a JSON object, "
                          f"found {type_name(data)}")
  # Every other file the folder's readers open must be a regular file too:
  # a FIFO there would block them, a directory give a confusing error.
  for name in MODEL_FILES:
    if name != CONFIG_FILE and os.path.lexists(os.path.join(path, name)):
      check_input(os.path.join(path, name), CheckpointError)
  bad = [f"{k}={short_repr(data[k])} (supported: {', '.join(map(repr, ok))})"
         for k, ok in _CONFIG_REQUIREMENTS.items() if k in data and data[k] not in ok]
  n_inner, n_embd = data.get("n_inner"), data.get("n_embd")
  # (a wrongly typed n_embd is GPT2Config's to name)
  if n_inner is not None and isinstance(n_embd, int) and n_inner != 4 * n_embd:
    bad.append(f"n_inner={short_repr(n_inner)} (supported: 4 * n_embd)")
  if bad:
    raise CheckpointError(f"{shown(cfg_path)}: unsupported GPT-2 option(s): " + "; ".join(bad))
  try:
    return GPT2Config.from_hf_dict(data, name=os.path.basename(os.path.normpath(path)))
  except (ConfigError, TypeError) as e:
    raise CheckpointError(f"{shown(cfg_path)}: {e}") from None


def _weights_file(path: str) -> str:
  st_path = os.path.join(path, WEIGHTS_FILE)
  if os.path.lexists(st_path):
    check_input(st_path, CheckpointError)    # a regular file, readable
    return st_path
  others = [f for f in _UNSUPPORTED_FILES if os.path.exists(os.path.join(path, f))]
  if others:
    raise CheckpointError(
      f"{st_path}: file not found; the directory holds {', '.join(others)}, "
      f"which is not supported (only a single {WEIGHTS_FILE} is; convert "
      f"the checkpoint with transformers' save_pretrained(safe_serialization=True))")
  raise CheckpointError(f"{st_path}: file not found")


def load_checkpoint(path) -> GPT2Weights:
  """Read a Hugging Face GPT-2 directory into float32 `GPT2Weights`."""
  path = os.fspath(path)
  if not os.path.isdir(path):
    raise CheckpointError(f"{path}: checkpoint directory not found")
  cfg = read_config(path)
  st_path = _weights_file(path)
  try:
    with safetensors.safe_open(st_path, framework="np") as f:
      return _read_tensors(f, st_path, cfg)
  except CheckpointError:
    raise
  except Exception as e:   # the Rust reader raises SafetensorError and others
    raise CheckpointError(f"{st_path}: not a readable safetensors file "
                          f"({type(e).__name__}: {e})") from None


def _read_tensors(f, st_path: str, cfg: GPT2Config) -> GPT2Weights:
  # First pass: header only (names, shapes, dtypes), so that a mismatch is
  # reported without reading gigabytes.
  stored = {}     # our name -> stored name
  problems = []
  tied_copy = None  # stored name of a tied config's lm_head.weight
  for key in f.keys():
    name = key[len(PREFIX):] if key.startswith(PREFIX) else key
    if name == LM_HEAD and cfg.tie_word_embeddings:
      tied_copy = key
    if _is_skipped(name, cfg):
      continue
    if name in stored:
      problems.append(f"tensor '{name}' stored twice (as '{stored[name]}' and '{key}')")
    stored[name] = key
  headers = {name: f.get_slice(key) for name, key in stored.items()}
  problems += shape_problems(cfg, {n: h.get_shape() for n, h in headers.items()})
  problems += [f"tensor '{n}' has dtype {h.get_dtype()} (supported: "
               f"{', '.join(sorted(_FLOAT_DTYPES))})"
               for n, h in headers.items() if h.get_dtype() not in _FLOAT_DTYPES]
  if problems:
    raise CheckpointError(f"{st_path}: does not match {CONFIG_FILE} "
                          f"(n_layer={cfg.n_layer}, n_embd={cfg.n_embd}, "
                          f"vocab_size={cfg.vocab_size}, n_positions="
                          f"{cfg.n_positions}): " + _summary(problems))
  # NaN/inf in a checkpoint is a broken file, not a model to run; so is an
  # F64 value that FP32 cannot hold.
  tensors, problems = {}, []
  for name in tensor_shapes(cfg):
    raw = f.get_tensor(stored[name])
    with np.errstate(over="ignore"):
      tensors[name] = np.ascontiguousarray(raw, np.float32)
    problem = nonfinite_problem(name, raw) or overflow_problem(name, raw, tensors[name])
    if problem:
      problems.append(problem)
  if problems:
    raise CheckpointError(f"{st_path}: " + _summary(problems))
  if tied_copy is not None:
    _check_tied_copy(f, st_path, tied_copy, tensors["wte.weight"])
  return GPT2Weights(cfg, tensors)


def _check_tied_copy(f, st_path, key, wte):
  """A tied config's stored lm_head.weight: a copy of wte (older
  GPT2LMHeadModel files hold one), or refused."""
  h = f.get_slice(key)
  if tuple(h.get_shape()) == wte.shape and h.get_dtype() in _FLOAT_DTYPES:
    with np.errstate(over="ignore"):
      if np.array_equal(np.asarray(f.get_tensor(key), np.float32), wte):
        return
  raise CheckpointError(
    f"{st_path}: tensor '{key}' differs from 'wte.weight', but {CONFIG_FILE} ties the "
    f"LM head to wte (tie_word_embeddings is true or absent); set "
    f"\"tie_word_embeddings\": false to use '{key}', or remove it")


def save_checkpoint(path, weights: GPT2Weights) -> None:
  """Write `weights` as a Hugging Face GPT-2 directory (created if needed).

  Names carry no prefix (GPT2Model's layout, which GPT2LMHeadModel also
  loads); the metadata says format "pt" as transformers expects.  Each file
  is written atomically (`pymtl_dfx.atomic`), the weights first: an
  interrupted save leaves the old files, or new weights without a
  config.json, which load_checkpoint refuses by name; never half a file.
  """
  path = os.fspath(path)
  os.makedirs(path, exist_ok=True)
  tensors = {k: np.ascontiguousarray(weights.tensors[k])
             for k in tensor_shapes(weights.config)}
  with atomic_path(os.path.join(path, WEIGHTS_FILE)) as tmp:
    safetensors.numpy.save_file(tensors, tmp, metadata={"format": "pt"})
  write_text(os.path.join(path, CONFIG_FILE), weights.config.to_json() + "\n")
