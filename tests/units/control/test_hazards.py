"""Hazard testing: generated programs on a 16-entry register file (so ranges
overlap often) run through the control unit with random-timing execution
units; every instruction must read what it reads in sequential execution and
the final register file must be the sequential one.  A failure prints the
hypothesis example and the program's disassembly; a deadlock names the
stuck instruction and what it waits for.
"""

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from pymtl_dfx.isa import ComputeOp as C, DmaOp as D, RouterOp, encode, make
from pymtl_dfx.testing import select_or_skip
from pymtl_dfx.testing.levels import run_matching_cl

from control_harness import (CFG, CONTROL, RF_ENTRIES, Deadlock,
                             check_sequential, listing, run_control)

D_ = CFG.d
MAX_LEN = 24
# the ops CFG's core runs (gelu only with `vpu_gelu`)
UNARY = list( C.group( "is_unary", CFG ) )
REDUCE = list( C.group( "is_reduction", CFG ) )
BINARY = list( C.group( "is_binary", CFG ) )


@st.composite
def span( draw, max_entries=4 ):
  """(base, entries) inside the register file."""
  n = draw( st.integers( 1, max_entries ) )
  return draw( st.integers( 0, RF_ENTRIES - n ) ), n


def elems( draw, n ):
  return n * D_ - draw( st.integers( 0, D_ - 1 ) )


@st.composite
def vector( draw, chain=0, src1=None ):
  op = draw( st.sampled_from( UNARY + REDUCE + BINARY ) )
  n = draw( st.integers( 1, 4 ) )
  lim = RF_ENTRIES - n
  s1 = src1 if src1 is not None and src1 <= lim else draw( st.integers( 0, lim ) )
  f = dict( dst=draw( st.integers( 0, lim ) ), src1=s1, len=elems( draw, n ), chain=chain )
  if op in BINARY:
    f.update( src2=draw( st.integers( 0, lim ) ), bcast=draw( st.integers( 0, 1 ) ) )
  return make( op, **f )


@st.composite
def matrix( draw ):
  op = draw( st.sampled_from( [ C.CONV1D, C.MM, C.MASKEDMM ] ) )
  r, nr = draw( span() )
  nc = draw( st.integers( 1, 3 ) )
  post = draw( st.sampled_from( [ 0, 2 ] ) )
  f = dict( dst=draw( st.integers( 0, RF_ENTRIES - nc - ( post == 2 ) ) ), src1=r,
            rows=elems( draw, nr ), cols=elems( draw, nc ), post=post )
  if op == C.CONV1D:
    f["bias"] = draw( st.integers( 0, RF_ENTRIES - nc ) )
  return make( op, **f )


@st.composite
def dma( draw ):
  op = draw( st.sampled_from( list( D ) ) )
  base, n = draw( span() )
  if op == D.HBM_READ and draw( st.booleans() ):
    return make( op, mpu=1, addr=draw( st.integers( 0, 63 ) ), vecs=n )
  return make( op, rf=base, addr=draw( st.integers( 0, 63 ) ), vecs=n )


@st.composite
def sync( draw ):
  base, n = draw( span() )       # cores * len elements = n entries
  return make( RouterOp.SYNC, rf=base, len=max( 1, n * D_ // CFG.cores - draw( st.integers( 0, 1 ) ) ) )


@st.composite
def chained_pair( draw ):
  p = draw( vector( chain=1 ) )
  c = draw( vector( src1=int( p.dst ) if draw( st.integers( 0, 3 ) ) else None ) )
  return [ p, c ]


@st.composite
def with_waits( draw, inst ):
  w = draw( st.integers( 0, 15 ) )
  if w >= 3:
    return inst
  hdr = inst.hdr
  setattr( hdr, ( "wait_dma", "wait_compute", "wait_router" )[w], hdr.chain.__class__( 1 ) )
  return inst


@st.composite
def programs( draw ):
  n = draw( st.integers( 1, MAX_LEN ) )
  prog = []
  while len( prog ) < n:
    kind = draw( st.sampled_from( [ "vec", "vec", "mat", "dma", "dma", "sync", "chain" ] ) )
    if kind == "chain":
      prog += draw( chained_pair() )
      continue
    inst = draw( { "vec": vector(), "mat": matrix(), "dma": dma(), "sync": sync() }[ kind ] )
    prog.append( draw( with_waits( inst ) ) )
  return [ encode( i ) for i in prog ]


STATS = { "programs": 0, "longest": 0 }

# examples per level (Verilator: --test-verilog runs rtl only)
EXAMPLES = { "fl": 30, "cl": 200, "rtl": 100, "verilog": 25 }


def run_checked( words, level, cmdline_opts, seed, scoreboard=True ):
  STATS["programs"] += 1
  STATS["longest"] = max( STATS["longest"], len( words ) )
  try:
    w = run_control( words, level, cmdline_opts, seed=seed, scoreboard=scoreboard )
  except Deadlock as e:
    raise AssertionError( f"{e}\nprogram (seed {seed}):\n{listing( words )}" ) from None
  check_sequential( words, w )
  return w


def test_hazards_random_programs( level, cmdline_opts ):
  select_or_skip( level, **CONTROL )
  verilog = bool( ( cmdline_opts or {} ).get( "test_verilog" ) )
  n = EXAMPLES[ "verilog" if verilog and level == "rtl" else level ]

  @settings( max_examples=n, deadline=None, derandomize=True, database=None,
             suppress_health_check=list( HealthCheck ), phases=[ Phase.generate, Phase.shrink ],
             print_blob=True )
  @given( programs(), st.integers( 0, 1 << 16 ) )
  def check( words, seed ):
    # at rtl: cycle-exact with CL
    run_matching_cl( level, cmdline_opts, lambda lv, opts: run_checked( words, lv, opts, seed ),
                     key=lambda w: ( w.issue_cycle, w.done_cycle ),
                     cl_run=lambda lv, opts: run_control( words, lv, seed=seed ),
                     why=f"CL and RTL differ; program:\n{listing( words )}" )

  STATS.update( programs=0, longest=0 )
  check()
  print( f"\n{level}: {STATS['programs']} programs, longest {STATS['longest']} instructions" )


def test_hazards_found_without_scoreboard():
  """The same check fails when the scoreboard is off: the test can fail."""
  found = []

  # one failure is enough: several distinct ones would come as an ExceptionGroup
  @settings( max_examples=200, deadline=None, derandomize=True, database=None,
             suppress_health_check=list( HealthCheck ), phases=[ Phase.generate ],
             report_multiple_bugs=False )
  @given( programs(), st.integers( 0, 1 << 16 ) )
  def check( words, seed ):
    try:
      run_checked( words, "cl", None, seed, scoreboard=False )
    except AssertionError as e:
      found.append( str( e ) )
      raise

  with pytest.raises( AssertionError, match="differ" ):
    check()
  assert found


def test_deadlock_is_diagnosed():
  """A unit that never answers: the cycle limit names the waiting instruction."""
  from pymtl_dfx.isa import assemble
  words = [ encode( i ) for i in assemble( "ddr_read v0, 0, vecs=1\nexp v4, v0, len=4" ) ]
  with pytest.raises( Deadlock, match=r"pc 1 \(exp v4, v0, len=4.*RAW with pc 0 \(ddr_read" ):
    run_control( words, "cl", max_cycles=100, hang=[ 0 ] )


@pytest.mark.parametrize( "entries,buffer", [ ( 1, 1 ), ( 3, 3 ) ] )
def test_hazards_other_sizes( cmdline_opts, entries, buffer ):
  """Other scoreboard and buffer sizes (1 entry: one instruction in flight),
  RTL in Python simulation against CL."""
  if ( cmdline_opts or {} ).get( "test_verilog" ):
    pytest.skip( "runs in the plain pass" )
  cfg = CFG.replace( scoreboard_entries=entries, inst_buffer_entries=buffer )

  @settings( max_examples=15, deadline=None, derandomize=True, database=None,
             suppress_health_check=list( HealthCheck ), phases=[ Phase.generate, Phase.shrink ] )
  @given( programs(), st.integers( 0, 1 << 16 ) )
  def check( words, seed ):
    w = run_matching_cl( "rtl", {}, lambda lv, opts: run_control( words, lv, seed=seed, cfg=cfg ),
                         key=lambda w: ( w.issue_cycle, w.done_cycle ) )
    check_sequential( words, w )
    if entries == 1:
      assert all( w.issue_cycle[j] > w.done_cycle[j - 1] for j in range( 1, len( words ) ) )

  check()
