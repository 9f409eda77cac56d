"""Checkpoint loading and saving: round trip, HF variants, every error case."""

import json
import os

import numpy as np
import pytest
import safetensors.numpy

from pymtl_dfx.config import GPT2Config, gpt2_preset
from pymtl_dfx.gpt2 import (CheckpointError, GPT2Weights, load_checkpoint,
                            random_weights, save_checkpoint, tensor_shapes)

CFG = gpt2_preset("tiny")
E, F = CFG.n_embd, CFG.n_inner


@pytest.fixture
def weights(tiny_weights):
  return tiny_weights


def _tensors(path):
  return safetensors.numpy.load_file(str(path / "model.safetensors"))


def _rewrite(path, tensors):
  safetensors.numpy.save_file(tensors, str(path / "model.safetensors"))


def _assert_same(a: GPT2Weights, b: GPT2Weights):
  assert a.config == b.config
  assert list(a.tensors) == list(b.tensors)
  for name in a.tensors:
    assert a[name].dtype == b[name].dtype == np.float32
    assert np.array_equal(a[name].view(np.uint32), b[name].view(np.uint32)), name


def test_round_trip_is_bit_exact(ckpt, weights):
  loaded = load_checkpoint(ckpt)
  _assert_same(loaded, weights)
  with open(ckpt / "config.json") as f:
    assert json.load(f) == CFG.to_hf_dict()
  # and again: what we load we can write back unchanged
  save_checkpoint(ckpt.parent / "again", loaded)
  _assert_same(load_checkpoint(ckpt.parent / "again"), weights)


def test_dfx_variant_with_head_dim_round_trips(tmp_path):
  """An attention narrower than the residual (head_dim given): config.json
  carries head_dim, c_attn is [n_embd, 3 attn_dim], c_proj [attn_dim, n_embd],
  and a file whose config.json lost head_dim does not match its tensors."""
  cfg = GPT2Config(n_layer=1, n_embd=96, n_head=2, head_dim=32, vocab_size=16,
                   n_positions=8, name="narrow")
  w = random_weights(cfg, 1)
  save_checkpoint(tmp_path / "narrow", w)
  with open(tmp_path / "narrow" / "config.json") as f:
    data = json.load(f)
  assert data["head_dim"] == 32
  _assert_same(load_checkpoint(tmp_path / "narrow"), w)
  assert _tensors(tmp_path / "narrow")["h.0.attn.c_proj.weight"].shape == (64, 96)
  del data["head_dim"]
  (tmp_path / "narrow" / "config.json").write_text(json.dumps(data))
  with pytest.raises(CheckpointError, match=r"'h.0.attn.c_attn.weight' has shape \(96, 192\), "
                                            r"expected \(96, 288\)"):
    load_checkpoint(tmp_path / "narrow")


def test_lm_head_model_layout_loads(ckpt, weights):
  """GPT2LMHeadModel files: 'transformer.' prefix, tied lm_head, mask buffers."""
  t = {"transformer." + k: v for k, v in _tensors(ckpt).items()}
  t["lm_head.weight"] = t["transformer.wte.weight"]
  for i in range(CFG.n_layer):
    t[f"transformer.h.{i}.attn.bias"] = np.tril(np.ones((1, 1, 8, 8), np.float32))
    t[f"transformer.h.{i}.attn.masked_bias"] = np.array(-1e4, np.float32)
  _rewrite(ckpt, t)
  _assert_same(load_checkpoint(ckpt), weights)


def test_fp16_file_loads_as_float32(ckpt, weights):
  _rewrite(ckpt, {k: v.astype(np.float16) for k, v in _tensors(ckpt).items()})
  loaded = load_checkpoint(ckpt)
  assert loaded.dtype == np.float32
  assert np.array_equal(loaded["wte.weight"],
                        weights["wte.weight"].astype(np.float16).astype(np.float32))


def test_to_fp16_is_one_rounding(weights):
  w16 = weights.to_fp16()
  assert w16.dtype == np.float16 and w16.config == weights.config
  for name, t in weights.tensors.items():
    assert np.array_equal(w16[name], t.astype(np.float16))


def test_random_weights_are_seeded_and_shaped():
  a, b, c = random_weights(CFG, 1), random_weights(CFG, 1), random_weights(CFG, 2)
  assert {k: v.shape for k, v in a.tensors.items()} == tensor_shapes(CFG)
  assert all(np.array_equal(a[k], b[k]) for k in a.tensors)
  assert not np.array_equal(a["wte.weight"], c["wte.weight"])
  assert abs(a["h.0.mlp.c_fc.weight"].std() - 0.02) < 0.002
  assert abs(a["wpe.weight"].std() - 0.01) < 0.001
  assert np.all(np.abs(a["ln_f.weight"] - 1) <= 0.1)
  assert np.all(np.abs(a["h.1.ln_2.bias"]) <= 0.02)


# --- errors: one CheckpointError naming the file and what is wrong --------

def _error(path) -> str:
  with pytest.raises(CheckpointError) as info:
    load_checkpoint(path)
  return str(info.value)


def test_missing_directory(tmp_path):
  msg = _error(tmp_path / "nowhere")
  assert "nowhere" in msg and "not found" in msg


def test_missing_config(ckpt):
  os.remove(ckpt / "config.json")
  msg = _error(ckpt)
  assert str(ckpt / "config.json") in msg and "not found" in msg


def test_bad_config_json(ckpt):
  (ckpt / "config.json").write_text("{not json")
  assert "config.json" in _error(ckpt)


def test_config_missing_field(ckpt):
  data = CFG.to_hf_dict()
  del data["n_head"]
  (ckpt / "config.json").write_text(json.dumps(data))
  msg = _error(ckpt)
  assert "config.json" in msg and "n_head" in msg


def test_unsupported_config_option(ckpt):
  data = dict(CFG.to_hf_dict(), activation_function="relu")
  (ckpt / "config.json").write_text(json.dumps(data))
  msg = _error(ckpt)
  assert "activation_function='relu'" in msg and "gelu_new" in msg


def test_missing_safetensors(ckpt):
  os.remove(ckpt / "model.safetensors")
  msg = _error(ckpt)
  assert str(ckpt / "model.safetensors") in msg and "not found" in msg


def test_pytorch_bin_only_is_unsupported(ckpt):
  os.remove(ckpt / "model.safetensors")
  (ckpt / "pytorch_model.bin").write_bytes(b"PK\x03\x04 pickled torch")
  msg = _error(ckpt)
  assert "pytorch_model.bin" in msg and "not supported" in msg


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_corrupt_safetensors(ckpt, damage):
  f = ckpt / "model.safetensors"
  data = f.read_bytes()
  f.write_bytes(b"\x07" * 64 if damage == "garbage" else data[:len(data) // 2])
  msg = _error(ckpt)
  assert str(f) in msg and "safetensors" in msg


def test_missing_tensor(ckpt):
  t = _tensors(ckpt)
  del t["h.1.mlp.c_fc.bias"]
  _rewrite(ckpt, t)
  msg = _error(ckpt)
  assert "model.safetensors" in msg
  assert f"missing tensor 'h.1.mlp.c_fc.bias' (expected shape ({F},))" in msg


def test_wrong_shape(ckpt):
  t = _tensors(ckpt)
  t["h.0.attn.c_attn.weight"] = np.zeros((E, 2 * E), np.float32)   # q, k but no v
  _rewrite(ckpt, t)
  msg = _error(ckpt)
  assert "model.safetensors" in msg
  assert (f"'h.0.attn.c_attn.weight' has shape ({E}, {2 * E}), "
          f"expected ({E}, {3 * E})") in msg


def test_transposed_conv1d_weight_is_a_wrong_shape(ckpt):
  """nn.Linear orientation [out, in] instead of Conv1D's [in, out]."""
  t = _tensors(ckpt)
  t["h.1.mlp.c_fc.weight"] = np.ascontiguousarray(t["h.1.mlp.c_fc.weight"].T)
  _rewrite(ckpt, t)
  assert (f"'h.1.mlp.c_fc.weight' has shape ({F}, {E}), expected ({E}, {F})"
          in _error(ckpt))


def test_config_and_weights_disagree(ckpt):
  """A config with fewer layers than the file: the extra tensors are named."""
  data = dict(CFG.to_hf_dict(), n_layer=1)
  (ckpt / "config.json").write_text(json.dumps(data))
  msg = _error(ckpt)
  assert "unexpected tensor 'h.1.ln_1.weight'" in msg and "n_layer=1" in msg


def test_integer_tensor(ckpt):
  t = _tensors(ckpt)
  t["ln_f.bias"] = np.zeros(E, np.int32)
  _rewrite(ckpt, t)
  msg = _error(ckpt)
  assert "'ln_f.bias' has dtype I32" in msg


def hub_config(cfg, n_positions=True):
  """config.json as the hub's gpt2 has it: n_ctx beside n_positions (or,
  in older files, alone), n_inner null, and many keys DFX does not use."""
  data = {
    "activation_function": "gelu_new", "architectures": ["GPT2LMHeadModel"],
    "attn_pdrop": 0.1, "bos_token_id": cfg.vocab_size - 1, "embd_pdrop": 0.1,
    "eos_token_id": cfg.vocab_size - 1, "initializer_range": 0.02,
    "layer_norm_epsilon": cfg.layer_norm_epsilon, "model_type": "gpt2",
    "n_ctx": cfg.n_positions, "n_embd": cfg.n_embd, "n_head": cfg.n_head,
    "n_inner": None, "n_layer": cfg.n_layer, "resid_pdrop": 0.1,
    "summary_activation": None, "summary_first_dropout": 0.1,
    "summary_proj_to_labels": True, "summary_type": "cls_index",
    "summary_use_proj": True,
    "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
    "vocab_size": cfg.vocab_size,
  }
  if n_positions:
    data["n_positions"] = cfg.n_positions
  return data


@pytest.mark.parametrize("n_positions", [True, False])
def test_hub_style_folder_loads(ckpt, weights, n_positions):
  """The hub's gpt2 files: names without 'transformer.', the attn.bias /
  attn.masked_bias buffers per layer, n_ctx in config.json."""
  t = _tensors(ckpt)
  assert not any(k.startswith("transformer.") for k in t)
  for i in range(CFG.n_layer):
    t[f"h.{i}.attn.bias"] = np.tril(np.ones((1, 1, CFG.n_positions, CFG.n_positions),
                                            np.float32))
    t[f"h.{i}.attn.masked_bias"] = np.array(-1e4, np.float32)
  _rewrite(ckpt, t)
  (ckpt / "config.json").write_text(json.dumps(hub_config(CFG, n_positions)))
  loaded = load_checkpoint(ckpt)
  assert loaded.config.n_positions == CFG.n_positions
  for name in weights.tensors:
    assert np.array_equal(loaded[name], weights[name]), name
