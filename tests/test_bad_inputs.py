"""Bad inputs: each is refused with one error that names the problem (the
tensor, field or line, and the values involved), and nothing is written.

Cases not already covered by test_gpt2_checkpoint.py, test_tokenizer.py,
test_config.py and compiler/test_image_file.py (see those for the rest).
"""

import json

import numpy as np
import pytest
import safetensors.numpy

from pymtl_dfx.config import ConfigError, DFXConfig, GPT2Config, gpt2_preset
from pymtl_dfx.gpt2 import (CheckpointError, WeightError, load_checkpoint,
                            random_weights, save_checkpoint)
from pymtl_dfx.gpt2.tokenizer import TokenizerError, load_tokenizer

CFG = gpt2_preset("tiny")
E, V, P = CFG.n_embd, CFG.vocab_size, CFG.n_positions


@pytest.fixture
def weights(tiny_weights):
  return tiny_weights


def _snapshot(d):
  return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def _refused(path, error=CheckpointError, load=load_checkpoint):
  """The message of the error loading `path` raises; loading wrote nothing."""
  before = _snapshot(path)
  with pytest.raises(error) as e:
    load(path)
  assert _snapshot(path) == before
  return str(e.value)


# --- config.json ------------------------------------------------------------

@pytest.mark.parametrize("change, named", [
  (dict(activation_function="gelu"), "activation_function='gelu' (supported: 'gelu_new')"),
  (dict(activation_function="silu"), "activation_function='silu'"),
  (dict(model_type="gpt_neo"), "model_type='gpt_neo'"),
  (dict(scale_attn_weights=False), "scale_attn_weights=False"),
  (dict(scale_attn_by_inverse_layer_idx=True), "scale_attn_by_inverse_layer_idx=True"),
  (dict(reorder_and_upcast_attn=True), "reorder_and_upcast_attn=True"),
  (dict(n_inner=1000), "n_inner=1000 (supported: 4 * n_embd)"),
  (dict(n_head=3), "n_embd=128 (must be a multiple of n_head=3)"),
  (dict(n_head=0), "n_head=0 (must be positive)"),
  (dict(n_layer="2"), "n_layer='2' (must be an integer)"),
  (dict(n_embd=128.0), "n_embd=128.0 (must be an integer)"),
  (dict(n_layer=True), "n_layer=True (must be an integer)"),
  (dict(vocab_size=-1), "vocab_size=-1 (must be positive)"),
  (dict(n_positions=None), "n_positions=None (must be an integer)"),
  (dict(layer_norm_epsilon=0), "layer_norm_epsilon=0 (must be a positive number)"),
  (dict(layer_norm_epsilon="1e-5"), "layer_norm_epsilon='1e-5'"),
])
def test_bad_config_value(ckpt, change, named):
  (ckpt / "config.json").write_text(json.dumps(dict(CFG.to_hf_dict(), **change)))
  msg = _refused(ckpt)
  assert "config.json" in msg and named in msg


@pytest.mark.parametrize("content, named", [
  (b"", "not readable JSON"),
  (b"[1, 2]", "expected a JSON object, found a list"),
  (b'"gpt2"', "expected a JSON object, found a string"),
  (b"\xff\xfe{}", "not readable JSON"),
  (b'{"n_layer": 2,', "not readable JSON"),
])
def test_unreadable_config(ckpt, content, named):
  (ckpt / "config.json").write_bytes(content)
  msg = _refused(ckpt)
  assert "config.json" in msg and named in msg


@pytest.mark.parametrize("change, named", [
  # the config says one thing, the tensors another: both are named
  (dict(n_embd=256, n_head=4), f"'wte.weight' has shape ({V}, {E}), expected ({V}, 256)"),
  (dict(vocab_size=300), f"'wte.weight' has shape ({V}, {E}), expected (300, {E})"),
  (dict(n_positions=64), f"'wpe.weight' has shape ({P}, {E}), expected (64, {E})"),
  (dict(n_layer=3), "missing tensor 'h.2.ln_1.weight'"),
])
def test_config_disagrees_with_tensors(ckpt, change, named):
  (ckpt / "config.json").write_text(json.dumps(dict(CFG.to_hf_dict(), **change)))
  msg = _refused(ckpt)
  assert "model.safetensors" in msg and named in msg


# --- model.safetensors: tensors ----------------------------------------------

def _edit(ckpt, change):
  t = safetensors.numpy.load_file(str(ckpt / "model.safetensors"))
  change(t)
  safetensors.numpy.save_file(t, str(ckpt / "model.safetensors"))


def _set(name, idx, value, dtype=None):
  def change(t):
    a = t[name].astype(dtype or t[name].dtype)
    a[idx] = value
    t[name] = a
  return change


@pytest.mark.parametrize("change, named", [
  (lambda t: t.update({"h.0.attn.extra": np.zeros(3, np.float32)}),
   "unexpected tensor 'h.0.attn.extra' with shape (3,)"),
  (lambda t: t.pop("wte.weight"), f"missing tensor 'wte.weight' (expected shape ({V}, {E}))"),
  (lambda t: t.pop("ln_f.bias"), f"missing tensor 'ln_f.bias' (expected shape ({E},))"),
  (lambda t: t.update({"ln_f.weight": np.ones((E, 1), np.float32)}),
   f"'ln_f.weight' has shape ({E}, 1), expected ({E},)"),
  (lambda t: t.update({"h.1.attn.c_proj.bias": np.array(0, np.float32)}),
   f"'h.1.attn.c_proj.bias' has shape (), expected ({E},)"),
  (lambda t: t.update({"wpe.weight": np.zeros((P, E), np.int8)}), "'wpe.weight' has dtype I8"),
  (lambda t: t.update({"ln_f.bias": np.zeros(E, np.uint8)}), "'ln_f.bias' has dtype U8"),
  (lambda t: t.update({"ln_f.bias": np.zeros(E, bool)}), "'ln_f.bias' has dtype BOOL"),
  (lambda t: t.update({"transformer.ln_f.bias": t["ln_f.bias"]}),
   "tensor 'ln_f.bias' stored twice (as 'ln_f.bias' and 'transformer.ln_f.bias')"),
  (_set("wte.weight", (3, 5), np.nan), "tensor 'wte.weight' holds 1 NaN/inf value(s), "
   "the first (nan) at index [3, 5]"),
  (_set("h.1.mlp.c_proj.bias", 7, np.inf), "tensor 'h.1.mlp.c_proj.bias' holds 1 NaN/inf "
   "value(s), the first (inf) at index [7]"),
  (_set("h.1.ln_2.bias", 4, 1e300, np.float64), "tensor 'h.1.ln_2.bias' has 1 value(s) beyond "
   "FP32's range (+-3.40282e+38), the first (1e+300) at index [4]"),
  (_set("h.0.ln_1.weight", 0, -np.inf, np.float16), "tensor 'h.0.ln_1.weight' holds 1 "
   "NaN/inf value(s), the first (-inf) at index [0]"),
])
def test_bad_tensor(ckpt, change, named):
  _edit(ckpt, change)
  msg = _refused(ckpt)
  assert str(ckpt / "model.safetensors") in msg and named in msg


# --- model.safetensors: damaged files ----------------------------------------

def _damage(data, how):
  n = int.from_bytes(data[:8], "little")
  return {
    "empty": b"",
    "four bytes": data[:4],
    "header only": data[:8 + n],
    "header cut": data[:8 + n // 2],
    "header length huge": (1 << 40).to_bytes(8, "little") + data[8:],
    "header not JSON": data[:8] + b"#" + data[9:],
    "last byte cut": data[:-1],
  }[how]


@pytest.mark.parametrize("how", ["empty", "four bytes", "header only", "header cut",
                                 "header length huge", "header not JSON", "last byte cut"])
def test_damaged_safetensors(ckpt, how):
  f = ckpt / "model.safetensors"
  f.write_bytes(_damage(f.read_bytes(), how))
  msg = _refused(ckpt)
  assert f"{f}: not a readable safetensors file" in msg


# --- weights -> FP16 -----------------------------------------------------------

@pytest.mark.parametrize("name, idx, value, named", [
  ("h.1.mlp.c_fc.weight", (3, 7), 70000.0, "'h.1.mlp.c_fc.weight' has 1 value(s) beyond "
   "FP16's range (+-65504), the first (70000.0) at index [3, 7]"),
  ("wte.weight", (0, 0), -1e6, "the first (-1000000.0) at index [0, 0]"),
  ("ln_f.bias", (5,), 65520.0, "'ln_f.bias' has 1 value(s) beyond FP16's range"),
  ("wpe.weight", (2, 1), np.nan, "'wpe.weight' holds 1 NaN/inf value(s), the first (nan) "
   "at index [2, 1]"),
  ("h.0.attn.c_attn.bias", (9,), -np.inf, "'h.0.attn.c_attn.bias' holds 1 NaN/inf"),
])
def test_to_fp16_refuses(weights, name, idx, value, named):
  t = weights[name].copy()
  t[idx] = value
  with pytest.raises(WeightError) as e:
    weights.replace({name: t}).to_fp16()
  assert "cannot convert the weights of 'tiny' to FP16" in str(e.value)
  assert named in str(e.value)


def test_to_fp16_keeps_values_that_round_to_the_largest(weights):
  t = weights["ln_f.bias"].copy()
  t[0], t[1] = 65519.0, -65504.0       # RNE: both are +-65504 in FP16
  w16 = weights.replace({"ln_f.bias": t}).to_fp16()
  assert w16["ln_f.bias"][:2].tolist() == [65504.0, -65504.0]


def test_all_bad_tensors_in_one_message(weights):
  a, b = weights["wte.weight"].copy(), weights["ln_f.weight"].copy()
  a[1, 2], b[3] = np.inf, 1e9
  with pytest.raises(WeightError) as e:
    weights.replace({"wte.weight": a, "ln_f.weight": b}).to_fp16()
  assert "'wte.weight'" in str(e.value) and "'ln_f.weight'" in str(e.value)


# --- tokenizer files -----------------------------------------------------------

def _tok_dir(tmp_path, vocab, merges):
  d = tmp_path / "tok"
  d.mkdir()
  for name, content in (("vocab.json", vocab), ("merges.txt", merges)):
    (d / name).write_bytes(content if isinstance(content, bytes) else content.encode())
  return d


def _byte_vocab():
  from pymtl_dfx.gpt2.tokenizer import bytes_to_unicode
  return {c: i for i, c in enumerate(bytes_to_unicode().values())}


@pytest.mark.parametrize("vocab, merges, named", [
  (b"", "#version: 0.2\n", "vocab.json: not readable JSON"),
  (b"null", "", "vocab.json: expected a JSON object (token -> id), found NoneType"),
  (None, "#version: 0.2\nĠ t\n", "merge 0 'Ġ t' uses tokens not in the vocabulary: 'Ġt'"),
  (None, "Ġ t x\n", "merges.txt: line 1 'Ġ t x' is not two tokens"),
  (None, b"\x80\x81\n", "merges.txt: not readable text"),
  ("big", "", "token ids go up to 300, past the model's vocab_size of 256"),
])
def test_bad_tokenizer_files(tmp_path, vocab, merges, named):
  if vocab is None or vocab == "big":
    v = _byte_vocab()
    if vocab == "big":
      v["<|endoftext|>"] = 300
    vocab = json.dumps(v)
  d = _tok_dir(tmp_path, vocab, merges)
  msg = _refused(d, TokenizerError, lambda p: load_tokenizer(p, V))
  assert named in msg


# --- configurations ------------------------------------------------------------

@pytest.mark.parametrize("fields, named", [
  (dict(d=0), "d=0 (must be positive)"),
  (dict(l=24), "l=24 (must be a power of two)"),
  (dict(cores=1.0), "cores=1.0 (must be an integer)"),
  (dict(cores=True), "cores=True (must be an integer)"),
  (dict(ring_gbps=float("nan")), "ring_gbps=nan (must be a positive number)"),
  (dict(hbm_latency_ns=float("inf")), "hbm_latency_ns=inf"),
  (dict(psum_entries=1000), "psum_entries=1000 (must be a power of two)"),
  (dict(weight_fifo_entries=0), "weight_fifo_entries=0 (must be positive)"),
])
def test_bad_dfx_config(fields, named):
  with pytest.raises(ConfigError) as e:
    DFXConfig(**fields)
  assert named in str(e.value)


@pytest.mark.parametrize("fields, named", [
  (dict(n_embd=100, n_head=3), "n_embd=100 (must be a multiple of n_head=3)"),
  (dict(n_positions=0), "n_positions=0 (must be positive)"),
  (dict(layer_norm_epsilon=float("nan")), "layer_norm_epsilon=nan"),
  (dict(vocab_size="50257"), "vocab_size='50257' (must be an integer)"),
])
def test_bad_gpt2_config(fields, named):
  with pytest.raises(ConfigError) as e:
    GPT2Config(**fields)
  assert named in str(e.value)


@pytest.mark.parametrize("sets, named", [
  (["ring_gbps=nan"], "ring_gbps=nan (must be a positive number)"),
  (["d=1e3"], "d='1e3' (must be an integer)"),
  (["=4"], "'=4' (expected key=value)"),
  (["d=32", "l=x", "q=1"], "l='x'"),
])
def test_bad_set(sets, named):
  with pytest.raises(ConfigError) as e:
    DFXConfig().with_overrides(sets)
  assert named in str(e.value)


# --- a --dask address ----------------------------------------------------------

@pytest.mark.parametrize("address", ["not a url", "", "host", "tcp://host", "tcp://h:0",
                                     "tcp://h:99999", "tcp://h:87a6", "http://h:8786",
                                     "tcp://h:8786/x", "tcp://[::1:8786"])
def test_malformed_dask_address(address):
  # said to be malformed, not tried: Dask's answer is "no scheduler there"
  from pymtl_dfx.sweep.run import DaskAddressError, dask_client
  with pytest.raises(DaskAddressError) as e:
    dask_client(address)
  assert "not a scheduler address; expected tcp://HOST:PORT" in str(e.value)
