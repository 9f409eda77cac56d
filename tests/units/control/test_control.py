"""Control unit: each instruction goes to its unit in program order; an
instruction issues only after every earlier instruction it conflicts with
has completed (FL: after every earlier instruction); the scoreboard cases'
exact cycles; CL == RTL cycle for cycle."""

import pytest

from pymtl_dfx.isa import assemble, encode, make, ComputeOp as C, DmaOp as D
from pymtl_dfx.testing import select_or_skip
from pymtl_dfx.testing.levels import run_matching_cl
from pymtl_dfx.units.control.ControlUnitCL import Candidate
from pymtl_dfx.units.control.footprint import Range, footprint, hazards

from control_harness import (CASES, CFG, CONTROL, check_sequential, run_case,
                             run_control)

PROGRAM = """
ddr_read  v0, 0, vecs=2
hbm_read  mpu, 0x40, vecs=16
conv1d    v8, v0, rows=8 cols=16 bias=v4
add       v12, v8, v8, len=16
sync      v12, len=8
exp       v12, v12, len=16
mm        v2, v12, rows=16 cols=4
ddr_write v2, 100, vecs=1
ddr_read  v20, 8, vecs=4
mul       v24, v20, v20, len=16 chain
accum     v28, v24, len=16
hbm_write v24, 0x80, vecs=4
"""


def conflicts( cands, i, j ):
  """Must j (later) wait for i's done token?"""
  a, b = cands[i], cands[j]
  chained = j == i + 1 and a.chain and a.unit == b.unit
  return bool( hazards( b.fp, a.fp, chained ) ) or a.unit in b.waits


def test_issue_order_and_routing( level, cmdline_opts ):
  select_or_skip( level, **CONTROL )
  words = [ encode( i ) for i in assemble( PROGRAM ) ]
  for seed in range( 3 ):
    w = run_control( words, level, cmdline_opts, seed=seed, src_delay=1, rf_entries=32 )
    # each unit received exactly its instructions in program order (the test
    # units check every word against the program) and the values are the
    # sequential ones
    check_sequential( words, w )
    issue, done = w.issue_cycle, w.done_cycle
    assert issue == sorted( issue )
    for j in range( len( words ) ):
      for i in range( j ):
        if level == "fl" or conflicts( w.cands, i, j ):
          assert issue[j] > done[i], ( i, j )
    overlapped = any( issue[j] <= done[j - 1] for j in range( 1, len( words ) ) )
    assert overlapped == ( level != "fl" )


@pytest.mark.parametrize( "case", [ c[0] for c in CASES ] )
def test_scoreboard_case( level, cmdline_opts, case ):
  select_or_skip( level, **CONTROL )
  w = run_matching_cl( level, cmdline_opts, lambda lv, opts: run_case( case, lv, opts ),
                       key=lambda w: ( w.issue_cycle, w.done_cycle ) )
  timed = "fl" if level == "fl" else "cl_rtl"
  assert ( w.issue_cycle, w.done_cycle ) == EXPECTED[ case ][ timed ]


# (issue cycles, done cycles) with every unit's latency CASE_LATENCY = 5;
# reports/control_cycles.py prints them as docs/control.md's table
FL_PAIR = ( [ 2, 8 ], [ 7, 13 ] )
EXPECTED = {
  "no_hazard": { "fl": FL_PAIR, "cl_rtl": ( [ 2, 3 ], [ 7, 8 ] ) },
  "raw":       { "fl": FL_PAIR, "cl_rtl": ( [ 2, 8 ], [ 7, 13 ] ) },
  "war":       { "fl": FL_PAIR, "cl_rtl": ( [ 2, 8 ], [ 7, 13 ] ) },
  "waw":       { "fl": FL_PAIR, "cl_rtl": ( [ 2, 8 ], [ 7, 13 ] ) },
  "full":      { "fl": ( [ 2, 8, 14, 20, 26 ], [ 7, 13, 19, 25, 31 ] ),
                 "cl_rtl": ( [ 2, 3, 4, 5, 8 ], [ 7, 8, 9, 10, 13 ] ) },
  "chain":     { "fl": FL_PAIR, "cl_rtl": ( [ 2, 3 ], [ 7, 8 ] ) },
  "unchained": { "fl": FL_PAIR, "cl_rtl": ( [ 2, 8 ], [ 7, 13 ] ) },
  "wait_dma":  { "fl": FL_PAIR, "cl_rtl": ( [ 2, 8 ], [ 7, 13 ] ) },
}


# -- the footprint definition ------------------------------------------------

def fp_of( inst, d=4, cores=2 ):
  return footprint( encode( inst ), d, cores )


def test_footprint_examples():
  f = fp_of( make( C.CONV1D, dst=8, src1=0, rows=9, cols=16, bias=4, post=2 ) )
  assert f.reads == ( Range( 0, 3 ), Range( 4, 4 ) ) and f.write == Range( 8, 5 )
  assert f.weights == "pop"
  f = fp_of( make( C.MM, dst=8, src1=0, rows=4, cols=5 ) )
  assert f.reads == ( Range( 0, 1 ), Range( 0, 0 ) ) and f.write == Range( 8, 2 )
  f = fp_of( make( C.ADD, dst=1, src1=2, src2=3, len=9, bcast=1 ) )
  assert f.reads == ( Range( 2, 3 ), Range( 3, 1 ) ) and f.write == Range( 1, 3 )
  f = fp_of( make( C.REDMAX, dst=1, src1=2, len=9 ) )
  assert f.reads[0] == Range( 2, 3 ) and f.write == Range( 1, 1 )
  f = fp_of( make( D.HBM_READ, mpu=1, addr=0, vecs=16 ) )
  assert not any( r.count for r in f.reads ) and not f.write.count and f.weights == "push"
  f = fp_of( make( D.DDR_WRITE, rf=3, addr=0, vecs=2 ) )
  assert f.reads[0] == Range( 3, 2 ) and not f.write.count
  from pymtl_dfx.isa import RouterOp
  f = fp_of( make( RouterOp.SYNC, rf=3, len=6 ) )       # 2 cores x 6 = 12 elements
  assert f.reads[0] == f.write == Range( 3, 3 )
  assert hazards( f, f ) == [ "RAW", "WAR", "WAW" ]


def test_footprint_matches_semantics():
  """The entries the FL semantics touch are inside the footprint."""
  import numpy as np
  from pymtl_dfx.units.regfile.state import VectorRegisterFile
  from pymtl_dfx.units.vpu.semantics import vector_op
  from pymtl_dfx.units.dma.semantics import dma_op

  class Recording( VectorRegisterFile ):
    def __init__( s, *a ):
      super().__init__( *a )
      s.r, s.w = set(), set()
    def read( s, e, n ):
      s.r |= set( range( e, e + -( -n // s.d ) ) )
      return super().read( e, n )
    def read_entries( s, e, n ):
      s.r |= set( range( e, e + n ) )
      return super().read_entries( e, n )
    def write( s, e, v ):
      n = np.asarray( v ).size
      s.w |= set( range( e, e + -( -n // s.d ) ) )
      super().write( e, v )

  d = 4
  insts = [ make( op, dst=1, src1=5, len=n, **( dict( src2=9, bcast=b ) if op.is_binary else {} ) )
            for op in C if op.on_vpu for n in ( 1, 4, 7 ) for b in ( 0, 1 ) ]
  insts += [ make( op, rf=2, addr=0, vecs=3 ) for op in ( D.DDR_READ, D.DDR_WRITE, D.HBM_READ, D.HBM_WRITE ) ]
  for inst in insts:
    rf = Recording( 32, d )
    rf.mem[:] = np.float16( 1.5 )
    word = encode( inst )
    c = Candidate( word, CFG )
    if c.unit == 2:
      vector_op( op_of_word( word ), inst, rf )
    else:
      mem = np.zeros( ( 64, d ), np.float16 )
      dma_op( op_of_word( word ), inst, rf, mem, mem.copy(), 4 )
    want_r = { e for r in c.fp.reads for e in range( r.base, r.end ) }
    want_w = set( range( c.fp.write.base, c.fp.write.end ) )
    assert ( rf.r, rf.w ) == ( want_r, want_w ), inst


def op_of_word( word ):
  from pymtl_dfx.units.control.decode_cache import decoded
  return decoded( word )[1]


def test_footprint_rtl_matches():
  """FootprintRTL computes footprint() for random valid instructions."""
  from hypothesis import given, settings, HealthCheck
  from pymtl3 import DefaultPassGroup
  from pymtl_dfx.isa.strategies import insts
  from pymtl_dfx.units.control.FootprintRTL import FootprintRTL

  m = FootprintRTL( CFG )
  m.elaborate()
  m.apply( DefaultPassGroup() )
  m.sim_reset()

  @settings( max_examples=300, deadline=None, derandomize=True,
             suppress_health_check=list( HealthCheck ) )
  @given( insts() )
  def check( inst ):
    word = encode( inst )
    m.word @= word
    m.sim_eval_combinational()
    c = Candidate( word, CFG )
    got = [ ( int( m.r0_base ), int( m.r0_end ) ), ( int( m.r1_base ), int( m.r1_end ) ),
            ( int( m.w_base ), int( m.w_end ) ) ]
    want = [ ( r.base, r.end ) for r in ( *c.fp.reads, c.fp.write ) ]
    # an empty range's base does not matter
    got = [ g if w[0] != w[1] else ( 0, 0 ) if g[0] == g[1] else g for g, w in zip( got, want ) ]
    want = [ w if w[0] != w[1] else ( 0, 0 ) for w in want ]
    assert got == want
    assert int( m.unit ) == c.unit and int( m.chain ) == c.chain
    assert { u for u in range( 4 ) if int( m.waits ) >> u & 1 } == set( c.waits )

  check()
