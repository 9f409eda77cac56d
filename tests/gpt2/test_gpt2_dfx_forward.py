"""DFXForward computes the documented order, bit for bit.

The independent check is `slow_dfx`: the same order written per element
with numerics' single operations, its own tree reductions, LayerNorm and
softmax.  Every traced intermediate of every layer must have identical bits.
"""

import os
import sys

import numpy as np
import pytest

from pymtl_dfx import numerics as nm
from pymtl_dfx.config import DFXConfig, gpt2_preset
from pymtl_dfx.gpt2 import (DFXForward, dfx_forward, generate, random_weights,
                            teacher_forced_logits)

sys.path.insert(0, os.path.dirname(__file__))   # the helper beside this file,
from slow_dfx import SlowDFX                      # whatever pytest's import mode

CFG = gpt2_preset("tiny")


@pytest.fixture(scope="module")
def weights():
  return random_weights(CFG, seed=11)


def _same_bits(a, b):
  return np.array_equal(nm.bits(a), nm.bits(b))


# d=64: products of width 32 pad one chunk; d=4: several chunks everywhere,
# including the attention-value sum over T = 5 positions.
@pytest.mark.parametrize("d, tokens", [(64, [7, 40, 7]), (4, [3, 63, 0, 21, 3])])
def test_matches_slow_per_element_order(weights, d, tokens):
  fast = DFXForward(weights, DFXConfig(d=d))
  slow = SlowDFX(weights, d)
  for t, tok in enumerate(tokens):
    want, got = {}, {}
    slow.step(tok, want)
    fast.step(tok, trace=got)
    assert want["h0.scores"].shape == (CFG.n_head, t + 1)
    assert len(want) == 3 + 10 * CFG.n_layer and set(want) <= set(got)
    bad = [k for k in want if not _same_bits(want[k], got[k])]
    assert not bad, f"position {t}: {bad} differ"


def test_deterministic_and_thread_count_invariant(weights, monkeypatch):
  ids = [5, 9, 60, 1, 33, 33, 2, 17]
  a = teacher_forced_logits(DFXForward(weights), ids)
  b = teacher_forced_logits(DFXForward(weights), ids)
  # threads split the large products by columns; force a split on tiny shapes
  monkeypatch.setattr(dfx_forward, "_MIN_SPLIT_ELEMS", 1)
  threaded = DFXForward(weights, threads=3)
  assert len(threaded.lm_head.blocks) == 3
  c = teacher_forced_logits(threaded, ids)
  assert a.dtype == np.float16
  assert _same_bits(a, b) and _same_bits(a, c)


def test_logits_only_when_asked(weights):
  m = DFXForward(weights)
  assert m.step(3, logits=False) is None
  first = m.step(4)
  m.reset()
  m.step(3)
  assert _same_bits(first, m.step(4))     # skipping the LM head changes nothing


def test_cache_is_fp16_and_reset_clears_it(weights):
  m = DFXForward(weights)
  trace = {}
  m.step(8, trace=trace)
  assert m.k_cache[1].dtype == np.float16
  e = CFG.n_embd
  assert _same_bits(m.k_cache[1][:, 0].reshape(-1), trace["h1.qkv"][e:2 * e])
  assert _same_bits(m.v_cache[1][:, 0].reshape(-1), trace["h1.qkv"][2 * e:])
  m.reset()
  assert m.pos == 0


def test_generate_uses_comparator_argmax(weights):
  m = DFXForward(weights)
  new = generate(m, [1, 2], 5)
  logits = teacher_forced_logits(m, [1, 2] + new[:-1])
  keys = nm.order_key(logits[1:])
  assert new == [int(np.argmax(k)) for k in keys]
