"""`perf.sampled`: a generation from timed steps at a few positions, the
rest interpolated; exactly `perf.run` when every step is timed; timed steps
kept in a cache keyed by model, configuration, position, token and the
timing code."""

import functools
import json

import pytest

from pymtl_dfx import perf
from pymtl_dfx.config import DFXConfig, GPT2Config
from pymtl_dfx.perf import sampled

GPT = GPT2Config( n_layer=2, n_embd=64, n_head=2, vocab_size=128, n_positions=32, name="small" )
N_IN, N_OUT = 4, 6


@functools.lru_cache( maxsize=None )
def model( cores=1, hbm_channels=4 ):
  dfx = DFXConfig( d=32, l=8, cores=cores, hbm_channels=hbm_channels, vreg_entries=256,
                   mreg_entries=16, psum_entries=16 )
  return perf.planned( GPT, dfx, cores, max_tokens=N_IN + N_OUT )


@functools.lru_cache( maxsize=None )
def exact_run( cores=1 ):
  vocab = GPT.vocab_size
  return perf.run( model( cores ), [ k % vocab for k in range( N_IN ) ], N_OUT,
                   tokens=[ k % vocab for k in range( N_IN, N_IN + N_OUT - 1 ) ] )


@pytest.mark.parametrize( "cores", [ 1, 2 ] )
def test_every_step_timed_is_run_exactly( cores ):
  a, b = exact_run( cores ), sampled.estimate( model( cores ), N_IN, N_OUT, samples=None )
  for k in ( "cycles", "step_cycles", "step_classes", "stage_cycles", "class_cycles", "unit_busy",
             "unit_stalls" ):
    assert b[k] == a[k], k
  assert b["interpolated_steps"] == [] and b["timed_steps"] == list( range( N_IN + N_OUT - 1 ) )


def test_sampled_steps_are_exact_and_the_rest_close( tmp_path ):
  a = exact_run()
  b = sampled.estimate( model(), N_IN, N_OUT, samples=2, cache=sampled.StepCache( tmp_path ) )
  # prompt steps 0..2 (no logits), logits steps 3..8: ends timed, the middle interpolated
  assert b["timed_steps"] == [ 0, 2, 3, 8 ]
  assert b["interpolated_steps"] == [ 1, 4, 5, 6, 7 ]
  for p in b["timed_steps"]:
    assert b["step_cycles"][p] == a["step_cycles"][p]
    assert b["step_classes"][p] == a["step_classes"][p]
  for p in b["interpolated_steps"]:
    assert sum( b["step_classes"][p].values() ) == b["step_cycles"][p]
    lo = min( a["step_cycles"][ p - 1 ], a["step_cycles"][ p + 1 ] )
    assert abs( b["step_cycles"][p] - a["step_cycles"][p] ) <= 0.01 * lo
  assert b["stage_cycles"]["summarization"] + b["stage_cycles"]["generation"] == b["cycles"]


def test_cache_is_read_back_and_keyed_by_config( tmp_path, monkeypatch ):
  cache = sampled.StepCache( tmp_path )
  first = sampled.estimate( model(), N_IN, N_OUT, samples=2, cache=cache )
  files = sorted( tmp_path.iterdir() )
  assert len( files ) == 4 and all( f.suffix == ".json" for f in files )   # no temporary left
  assert all( "cycles" in json.loads( f.read_text() ) for f in files )

  def no_timing( task ):
    raise AssertionError( "a cached step was timed again" )
  monkeypatch.setattr( sampled, "_time_one", no_timing )
  assert sampled.estimate( model(), N_IN, N_OUT, samples=2, cache=cache ) == first
  # another configuration is another key
  with pytest.raises( AssertionError, match="timed again" ):
    sampled.estimate( model( hbm_channels=8 ), N_IN, N_OUT, samples=2, cache=cache )


def test_given_positions_bracket_the_steps():
  with pytest.raises( ValueError, match=r"do not bracket the logits steps 3\.\.8" ):
    sampled.estimate( model(), N_IN, N_OUT, positions={ False: [ 0, 2 ], True: [ 3, 7 ] } )
  # positions past a generation's ends serve it (shared by longer generations)
  a = exact_run()
  b = sampled.estimate( model(), N_IN, N_OUT - 2, positions={ False: [ 0, 2 ], True: [ 3, 8 ] } )
  assert b["timed_steps"] == [ 0, 2, 3, 8 ] and b["interpolated_steps"] == [ 1, 4, 5, 6 ]
  assert b["step_cycles"][3] == a["step_cycles"][3]


def test_sample_positions():
  assert sampled.sample_positions( 0, 10, 3 ) == [ 0, 5, 10 ]
  assert sampled.sample_positions( 3, 4, 5 ) == [ 3, 4 ]
  assert sampled.sample_positions( 5, 4, 2 ) == []


def test_stall_cycles_per_unit():
  """A unit's issue stalls: cycles its next instruction waited at the head
  of the in-order issue, by reason.  At most one head waits per cycle, and
  a core that does not run never waits."""
  from pymtl_dfx.perf.core import STALLS
  res = exact_run( 2 )
  for core in res["unit_stalls"]:
    assert set( core ) == { "dma", "mpu", "vpu", "router" }
    assert all( set( why ) == set( STALLS ) for why in core.values() )
    waited = sum( n for why in core.values() for n in why.values() )
    assert 0 < waited < res["cycles"]
  total = lambda k: sum( c[u][k] for c in res["unit_stalls"] for u in c )   # noqa: E731
  # this model's programs do all four: a vector op waits on a matrix's
  # result, the router waits for the ring, the DMA for the MPU's FIFO ...
  assert total( "dependency" ) > 0 and total( "unit_busy" ) > 0
  # the router (sync) only ever waits on the data it sends
  assert res["unit_stalls"][0]["router"]["dependency"] > 0
