"""A step the performance model cannot finish stops at the cycle limit the
host derives from the programs (`appliance.liveness`), naming each core's
stuck instruction and its units' state, instead of replaying for ever."""

import pytest

from pymtl_dfx.appliance.liveness import StepTimeout, cycle_limit
from pymtl_dfx.compiler import stats as S
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import Kind, assemble, encode, op_of
from pymtl_dfx.perf.appliance import ApplianceTiming
from pymtl_dfx.units.control.msgs import unit_of
from pymtl_dfx.units.dma.msgs import mk_dma_types

CFG = DFXConfig( d=32, l=8, hbm_channels=4, vreg_entries=256, mreg_entries=16,
                 psum_entries=16 )

# the matrix has no `hbm_read mpu` before it: its weights never come
NO_WEIGHTS = """
ddr_read  v0, 0, vecs=2
conv1d    v8, v0, rows=40 cols=24 bias=v4
ddr_write v8, 100, vecs=1
"""
# core 0 syncs; core 1 never does, so the ring never completes
LONE_SYNC = "sync v20, len=8\nddr_write v20, 8, vecs=1\n"
IDLE = "ddr_read v0, 0, vecs=1\n"


def run( cfg, texts ):
  progs = [ assemble( t ) for t in texts ]
  words = [ [ int( encode( i ) ) for i in p ] for p in progs ]
  units = [ [ unit_of( op_of( i ), Kind( int( i.hdr.kind ) ) ) for i in p ] for p in progs ]
  classes = [ [ S.CLASSES[0] ] * len( p ) for p in progs ]
  with pytest.raises( StepTimeout ) as e:
    ApplianceTiming( cfg, len( texts ) ).step( words, units, classes, what="test step" )
  limit = cycle_limit( cfg, mk_dma_types( cfg ), progs )
  assert limit < 100_000, "the bound is from the program, not a fixed large number"
  return str( e.value ), limit


def test_matrix_without_weights_names_the_matrix():
  msg, limit = run( CFG, [ NO_WEIGHTS ] )
  assert msg.startswith( f"test step did not finish in {limit} cycles; core 0:" )
  assert "oldest incomplete pc 1: conv1d" in msg
  assert "mpu 1/0" in msg          # issued, never completed
  assert "1 words not yet taken" not in msg and "0 words not yet taken" in msg


def test_lone_sync_names_every_core():
  msg, limit = run( CFG.with_overrides( [ "cores=2" ] ), [ LONE_SYNC, IDLE ] )
  assert f"did not finish in {limit} cycles" in msg
  core0, core1 = msg.split( "; core 1: " )
  assert "oldest incomplete pc 0: sync" in core0 and "head waits" in core0
  assert "all instructions completed" in core1
