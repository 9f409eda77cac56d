"""Folding repeated decoder layers (`perf/fold.py`) changes no cycle: on
deeper models (the small model's width, 12 and 16 layers, also with the
weight reads moved ahead) every step's
total, op-class and per-unit busy cycles are the unfolded replay's (which
is CL's, `test_perf_vs_cl.py`), and the fold did skip layers."""

import functools

import pytest

from pymtl_dfx import perf
from pymtl_dfx.config import DFXConfig, GPT2Config


def planned( n_layer, cores, hbm_channels=4, done_latency=0, read_ahead=0 ):
  gpt = GPT2Config( n_layer=n_layer, n_embd=64, n_head=2, vocab_size=128, n_positions=32,
                    name=f"deep{n_layer}" )
  dfx = DFXConfig( d=32, l=8, cores=cores, hbm_channels=hbm_channels, vreg_entries=256,
                   mreg_entries=16, psum_entries=16, done_latency_cycles=done_latency,
                   weight_read_ahead=read_ahead, weight_fifo_entries=64 if read_ahead else 4 )
  return perf.planned( gpt, dfx, cores, max_tokens=3 )


@functools.lru_cache( maxsize=None )
def both( n_layer, cores, prompt, new, hbm_channels=4, done_latency=0, read_ahead=0 ):
  m = planned( n_layer, cores, hbm_channels, done_latency, read_ahead )
  return ( perf.run( m, list( prompt ), new, fold=False ),
           perf.run( m, list( prompt ), new, fold=True ) )


@pytest.mark.parametrize( "n_layer, cores, prompt, new, hbm_channels, done_latency, read_ahead", [
  # bodies of 2 layers: a layer's DDR parameters are 26 words apart, 2 mod
  # the 4 DDR channels
  ( 12, 1, ( 5, 17 ), 2, 4, 0, 0 ),
  ( 16, 2, ( 5, ), 1, 4, 0, 0 ),
  # 16 HBM channels, 4 DDR: each memory's addresses are taken mod its own
  # channel count (mod 16 the DDR stride would need bodies of 8 layers)
  ( 12, 1, ( 5, ), 1, 16, 0, 0 ),
  # entries freed 3 cycles after their done tokens: the delay lines are
  # state a fold compares and keeps
  ( 12, 1, ( 5, ), 1, 4, 3, 0 ),
  # the weight reads moved ahead (`compiler.read_ahead`): a layer's first
  # read sits in the layer before, so the bodies start inside the first layer
  ( 12, 1, ( 5, ), 1, 4, 0, 1 ),
] )
def test_fold_keeps_every_cycle( n_layer, cores, prompt, new, hbm_channels, done_latency,
                                 read_ahead ):
  plain, folded = both( n_layer, cores, prompt, new, hbm_channels, done_latency, read_ahead )
  assert folded["step_cycles"] == plain["step_cycles"]
  assert folded["step_classes"] == plain["step_classes"]
  assert folded["unit_busy"] == plain["unit_busy"]
  assert folded["unit_stalls"] == plain["unit_stalls"]
  assert all( n > 0 for n in folded["folded_layers"] )
  assert not any( plain["folded_layers"] )
  # what a fold skipped is cycles of the step that were not simulated
  host = DFXConfig().host_step_cycles
  assert all( 0 < n < c - host for n, c in zip( folded["skipped_cycles"], folded["step_cycles"] ) )
  assert not any( plain["skipped_cycles"] )


def test_no_fold_below_three_bodies():
  # two layers: nothing repeats often enough to prove a stretch repeats
  plain, folded = both( 2, 1, ( 5, ), 1 )
  assert folded["step_cycles"] == plain["step_cycles"] and folded["folded_layers"] == [ 0 ]
