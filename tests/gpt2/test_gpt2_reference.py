"""The FP32 reference: cached decoding against full-prefix recomputation."""

import numpy as np
import pytest

from pymtl_dfx.config import GPT2Config, gpt2_preset
from pymtl_dfx.gpt2 import (NaNLogitsError, ReferenceModel, generate,
                            greedy_token, random_weights, teacher_forced_logits)
from pymtl_dfx.gpt2.reference import gelu32, layernorm32

CFG = gpt2_preset("tiny")


@pytest.fixture(scope="module")
def model():
  return ReferenceModel(random_weights(CFG, seed=5))


def test_cached_steps_equal_full_prefix(model):
  ids = np.random.default_rng(0).integers(0, CFG.vocab_size, 40)
  cached = teacher_forced_logits(model, ids)
  full = model.forward(ids)
  assert cached.dtype == full.dtype == np.float32
  assert np.abs(cached - full).max() <= 1e-5


def test_prefix_logits_do_not_see_the_future(model):
  ids = np.random.default_rng(1).integers(0, CFG.vocab_size, 12)
  other = ids.copy()
  other[8:] = (other[8:] + 1) % CFG.vocab_size
  assert np.array_equal(model.forward(ids)[:8], model.forward(other)[:8])


def test_generate_is_greedy_and_repeatable(model):
  prompt = [1, 2, 3]
  new = generate(model, prompt, 6)
  assert new == generate(model, prompt, 6)
  ids = prompt + new
  full = model.forward(ids[:-1])
  assert [greedy_token(r) for r in full[len(prompt) - 1:]] == new


def test_generate_checks_its_arguments(model):
  with pytest.raises(ValueError, match="at least one token"):
    generate(model, [], 3)
  with pytest.raises(ValueError, match="positions"):
    generate(model, [1] * 100, CFG.n_positions)
  with pytest.raises(ValueError, match="out of range"):
    generate(model, [CFG.vocab_size], 1)


def test_context_overflow_is_an_error():
  small = ReferenceModel(random_weights(GPT2Config(n_layer=1, n_embd=8, n_head=2,
                                                   vocab_size=10, n_positions=3), 0))
  for tok in (1, 2, 3):
    small.step(tok)
  with pytest.raises(ValueError, match="past the context"):
    small.step(4)


def test_building_blocks():
  x = np.random.default_rng(2).standard_normal((3, 16)).astype(np.float32)
  y = layernorm32(x, np.ones(16, np.float32), np.zeros(16, np.float32), 1e-5)
  assert np.allclose(y.mean(-1), 0, atol=1e-6) and np.allclose(y.std(-1), 1, atol=1e-4)
  # gelu_new at a few points, from the tanh formula by hand
  assert gelu32(np.float32([0.0]))[0] == 0
  assert abs(gelu32(np.float32([1.0]))[0] - 0.8411920) < 1e-6
  assert abs(gelu32(np.float32([-3.0]))[0] - -0.0036373) < 1e-6


def test_greedy_token_rules():
  assert greedy_token(np.float32([0.1, 0.7, 0.7])) == 1           # first of ties
  assert greedy_token(np.float16([-0.0, 0.0])) == 1               # comparator: -0 < +0
  assert greedy_token(np.float16([-np.inf, -1.0])) == 1
  with pytest.raises(NaNLogitsError, match="NaN"):
    greedy_token(np.float16([0.0, np.nan, 1.0]))


# A DFX variant of tiny: the residual and the MLP 192 wide, the attention
# 2 heads of 64 = 128 wide inside (gpt2-xl-dfx-1600's shape: 1600 and 24 x 64)
NARROW_ATTN = GPT2Config(n_layer=2, n_embd=192, n_head=2, head_dim=64, vocab_size=256,
                         n_positions=128, name="tiny-attn128")


def _numpy_gpt2(w, ids):
  """GPT-2's forward written out in float64 einsums from the tensors by
  their Hugging Face names, with none of the reference's code: the heads'
  count and width come from c_attn's shape and the config's n_head alone."""
  cfg = w.config
  t = {k: v.astype(np.float64) for k, v in w.tensors.items()}
  ids = np.asarray(ids)
  n = len(ids)

  def ln(x, g, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + cfg.layer_norm_epsilon) * g + b

  def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))

  x = t["wte.weight"][ids] + t["wpe.weight"][:n]
  for i in range(cfg.n_layer):
    p = lambda s: t[f"h.{i}.{s}"]                               # noqa: E731
    h = ln(x, p("ln_1.weight"), p("ln_1.bias"))
    qkv = np.einsum("te,ec->tc", h, p("attn.c_attn.weight")) + p("attn.c_attn.bias")
    width = qkv.shape[1] // 3
    q, k, v = (qkv[:, j * width:(j + 1) * width].reshape(n, cfg.n_head, -1)
               for j in range(3))
    s = np.einsum("thd,uhd->htu", q, k) / np.sqrt(q.shape[-1])
    s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    pr = np.exp(s - s.max(-1, keepdims=True))
    pr /= pr.sum(-1, keepdims=True)
    a = np.einsum("htu,uhd->thd", pr, v).reshape(n, width)
    x = x + np.einsum("ta,ae->te", a, p("attn.c_proj.weight")) + p("attn.c_proj.bias")
    h = ln(x, p("ln_2.weight"), p("ln_2.bias"))
    f = gelu(np.einsum("te,ef->tf", h, p("mlp.c_fc.weight")) + p("mlp.c_fc.bias"))
    x = x + np.einsum("tf,fe->te", f, p("mlp.c_proj.weight")) + p("mlp.c_proj.bias")
  hf = ln(x, t["ln_f.weight"], t["ln_f.bias"])
  return np.einsum("te,ve->tv", hf, t["wte.weight"])


@pytest.mark.parametrize("cfg", [CFG, NARROW_ATTN], ids=lambda c: c.name)
def test_reference_is_gpt2_written_out(cfg):
  """Cached steps and the full prefix both equal the float64 einsum GPT-2,
  on tiny and on its variant with a narrower attention (whose c_attn is
  192 x 384 and attention c_proj 128 x 192)."""
  w = random_weights(cfg, seed=3)
  assert w["h.0.attn.c_attn.weight"].shape == (cfg.n_embd, 3 * cfg.attn_dim)
  assert w["h.0.attn.c_proj.weight"].shape == (cfg.attn_dim, cfg.n_embd)
  ids = np.random.default_rng(4).integers(0, cfg.vocab_size, 12)
  want = _numpy_gpt2(w, ids)
  model = ReferenceModel(w)
  assert np.abs(model.forward(ids) - want).max() <= 1e-5
  assert np.abs(teacher_forced_logits(model, ids) - want).max() <= 1e-5
