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
