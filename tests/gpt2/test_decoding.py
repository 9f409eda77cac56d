"""Token choice: greedy (the default) and seeded sampling (`Sampler`), and the
one decoding loop the reference models and the host share."""

import numpy as np
import pytest

from pymtl_dfx.config import gpt2_preset
from pymtl_dfx.gpt2 import (NaNLogitsError, ReferenceModel, Sampler, decode_loop, generate,
                            greedy_token)


def test_temperature_zero_is_greedy():
  logits = np.array([0.1, 3.0, 3.0, -2.0], np.float32)
  assert Sampler(0.0, top_k=2, seed=5)(logits) == greedy_token(logits) == 1


def test_same_seed_same_tokens_and_top_k_limits_the_choice():
  rng = np.random.default_rng(0)
  rows = rng.normal(size=(200, 50)).astype(np.float32)
  s1, s2 = Sampler(1.0, top_k=3, seed=7), Sampler(1.0, top_k=3, seed=7)
  a = [s1(r) for r in rows]
  assert a == [s2(r) for r in rows]
  for r, t in zip(rows, a):
    assert t in np.argsort(-r)[:3]
  assert sum(t != np.argmax(r) for r, t in zip(rows, a)) > 20    # not always greedy


def test_top_k_one_is_greedy_and_low_temperature_is_nearly_so():
  rows = np.random.default_rng(1).normal(size=(50, 30)) * 4
  s = Sampler(2.0, top_k=1, seed=3)
  assert [s(r) for r in rows] == [greedy_token(r) for r in rows]
  assert [Sampler(1e-3, seed=3)(r) for r in rows] == [greedy_token(r) for r in rows]


def test_high_temperature_follows_the_softmax():
  logits = np.log(np.array([0.5, 0.3, 0.2]))
  s = Sampler(1.0, seed=11)
  counts = np.bincount([s(logits) for _ in range(4000)], minlength=3) / 4000
  assert np.allclose(counts, [0.5, 0.3, 0.2], atol=0.03)


def test_fp16_logits_and_infinities():
  assert Sampler(1.0, seed=0)(np.array([-np.inf, 0, -np.inf], np.float16)) == 1
  assert Sampler(1.0, seed=0)(np.array([1, np.inf, 2], np.float32)) == 1


@pytest.mark.parametrize("kw, message", [
  (dict(temperature=-1.0), "temperature must be a finite number >= 0"),
  (dict(temperature=float("nan")), "temperature must be a finite number >= 0"),
  (dict(temperature=1.0, top_k=-2), "top_k must be >= 0"),
])
def test_bad_settings(kw, message):
  with pytest.raises(ValueError, match=message):
    Sampler(**kw)


def test_nan_logits_raise():
  with pytest.raises(NaNLogitsError, match="logits are NaN"):
    Sampler(1.0)(np.array([0.0, np.nan]))


def test_loop_stops_after_the_stop_token_and_feeds_back_all_but_the_last():
  fed = []

  def step(tok, want):
    fed.append((tok, want))
    return np.eye(10)[(tok + 1) % 10]     # next token = tok + 1

  seen = []
  out, last = decode_loop(step, [3, 4], 5, on_token=seen.append)
  assert out == seen == [5, 6, 7, 8, 9]
  assert fed == [(3, False), (4, True), (5, True), (6, True), (7, True), (8, True)]
  fed.clear()
  assert decode_loop(step, [3], 5, stop_token=6)[0] == [4, 5, 6]


def test_reference_generate_samples_with_a_seed(tiny_weights):
  m = ReferenceModel(tiny_weights)
  a = generate(m, [1, 2], 6, choose=Sampler(1.5, top_k=20, seed=4))
  assert a == generate(m, [1, 2], 6, choose=Sampler(1.5, top_k=20, seed=4))
  assert generate(m, [1, 2], 6) == generate(m, [1, 2], 6, choose=Sampler(0.0))
  assert gpt2_preset("tiny").vocab_size > max(a)


def test_one_context_rule():
  """A generation takes prompt + new positions (`context_problem`): the
  reference's generate and the host (tests/appliance) refuse the same
  lengths with the same words as the CLI's hint."""
  from pymtl_dfx.gpt2 import random_weights
  from pymtl_dfx.gpt2.decoding import context_problem
  cfg = gpt2_preset("tiny")
  P = cfg.n_positions
  assert context_problem(2, P - 2, P, "it has 9") is None
  assert context_problem(2, P - 1, P, "it has 9") == (
    f"2 prompt tokens + {P - 1} new tokens = {P + 1} positions, but it has 9; "
    f"use n_new <= {P - 2} or a shorter prompt")
  assert context_problem(P, 1, P, "it has 9", "--out", "--in") == (
    f"{P} prompt tokens + 1 new tokens = {P + 1} positions, but it has 9; "
    f"the prompt alone fills them: use --in <= {P - 1}")
  m = ReferenceModel(random_weights(cfg, 0))
  with pytest.raises(ValueError, match=rf"= {P + 1} positions, but the model has n_positions={P}; "
                                       rf"use n_new <= {P - 2} or a shorter prompt"):
    generate(m, [1, 2], P - 1)
  with pytest.raises(ValueError, match="n_new must be >= 0"):
    generate(m, [1, 2], -1)
