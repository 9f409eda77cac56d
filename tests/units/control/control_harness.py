"""Test bench for the control unit: an instruction source, four test
execution units on a shared register file, and checks against sequential
execution.

A test execution unit (FL) accepts instructions while it has room (a random
capacity and random not-ready cycles), reads its sources at a random cycle
at or after issue (in order within the unit), answers done in order after a
random latency, and writes its destination when its done token leaves.
Values are a deterministic function of the word and the source values, so
an instruction that reads too early (RAW), a write that lands before an
older read (WAR) or out of order (WAW) changes what some instruction reads.
A chain producer's result is streamed into the unit's next instruction when
that is the next instruction of the program (src1 entries it overlaps).
"""

import random

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL
from pymtl3.stdlib.test_utils import config_model_with_cmdline_opts

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import decode, format_inst
from pymtl_dfx.hdl import verilator5
from pymtl_dfx.testing.src_sink import DelaySourceRTL
from pymtl_dfx.units.control.ControlUnitCL import Candidate, stall_reasons
from pymtl_dfx.units.control.msgs import UNITS
from pymtl_dfx.units.control.models import MODELS as CONTROL
from pymtl_dfx.units.control.msgs import DoneMsg, InstMsg

verilator5.apply()

# the control unit's parameters in every control test: one Verilator build
CFG = DFXConfig( d=4, cores=2, vreg_entries=64, scoreboard_entries=4,
                 inst_buffer_entries=2 )
RF_ENTRIES = 16
MASK = ( 1 << 32 ) - 1


def value( word, srcs, k ):
  return hash( ( word, srcs, k ) ) & MASK


def reads_of( fp ):
  return [ e for r in fp.reads for e in range( r.base, r.end ) ]


def run_sequential( words, cfg=CFG, rf_entries=RF_ENTRIES ):
  """Final register file and per-instruction source values, in order."""
  rf = [ i for i in range( rf_entries ) ]
  trace = []
  for w in words:
    fp = Candidate( w, cfg ).fp
    srcs = tuple( rf[e] for e in reads_of( fp ) )
    trace.append( srcs )
    for k, e in enumerate( range( fp.write.base, fp.write.end ) ):
      rf[e] = value( w, srcs, k )
  return rf, trace


class World:
  """State the four units share, and what the test observes."""

  def __init__( s, words, cfg, rf_entries ):
    s.words = [ int( w ) for w in words ]
    s.cands = [ Candidate( w, cfg ) for w in s.words ]
    s.rf = [ i for i in range( rf_entries ) ]
    s.trace = [ None ] * len( words )
    s.issue_cycle = [ None ] * len( words )
    s.done_cycle = [ None ] * len( words )
    s.next_pc = 0
    s.idle_cycle = None       # run_control( until_idle=True ): the unit's idle rises
    s.chain_result = {}       # producer pc -> its result entries
    s.hang = ()               # units that never answer (deadlock test)


class ExecUnitFL( Component ):

  def construct( s, uid, world, seed, max_read=2, max_lat=4, latency=None ):
    """latency: a fixed latency, always ready, read at issue (exact cycle
    counts); otherwise everything random."""
    s.recv = RecvIfcRTL( InstMsg )
    s.send = SendIfcRTL( DoneMsg )
    rng = random.Random( seed )
    s.cap = 8 if latency is not None else rng.randint( 1, 3 )
    s.q = []
    s.now = 0
    s.ready = 0
    s.last_read = 0
    s.last_done = 0

    def read( ent ):
      pc = ent["pc"]
      c = world.cands[pc]
      vals = { e: world.rf[e] for e in reads_of( c.fp ) }
      prod = world.chain_result.get( pc - 1 )
      if prod is not None and r_overlap( c, pc - 1 ):
        base, res = prod
        for e in range( c.fp.reads[0].base, c.fp.reads[0].end ):
          if 0 <= e - base < len( res ):
            vals[e] = res[ e - base ]
      srcs = tuple( vals[e] for e in reads_of( c.fp ) )
      world.trace[pc] = srcs
      ent["result"] = [ value( c.word, srcs, k ) for k in range( c.fp.write.count ) ]
      if c.chain:
        world.chain_result[pc] = ( c.fp.write.base, ent["result"] )
      ent["read"] = True

    def r_overlap( c, ppc ):
      p = world.cands[ ppc ]
      return p.chain and p.unit == c.unit == uid

    @update_once
    def up_exec_comb():
      head = s.q[0] if s.q else None
      s.send.val @= head is not None and head["read"] and head["done_at"] <= s.now \
                    and uid not in world.hang
      s.send.msg @= 1
      s.recv.rdy @= s.ready

    @update_ff
    def up_exec_seq():
      if s.reset:
        s.q, s.now, s.ready = [], 0, 0
        return
      if s.send.val & s.send.rdy:
        ent = s.q.pop( 0 )
        c = world.cands[ ent["pc"] ]
        for k, e in enumerate( range( c.fp.write.base, c.fp.write.end ) ):
          world.rf[e] = ent["result"][k]
        world.done_cycle[ ent["pc"] ] = s.now
      if s.recv.val & s.recv.rdy:
        pc = world.next_pc
        world.next_pc += 1
        if world.cands[pc].word != int( s.recv.msg ) or world.cands[pc].unit != uid:
          raise AssertionError( f"{UNITS[uid]} received {format_inst( decode( int( s.recv.msg ) ) )}"
                                f" but pc {pc} is {format_inst( decode( world.words[pc] ) )}" )
        world.issue_cycle[pc] = s.now
        if latency is not None:
          s.last_read = s.now
          s.last_done = max( s.now + latency, s.last_done + 1 )
        else:
          s.last_read = max( s.now + rng.randint( 0, max_read ), s.last_read )
          s.last_done = max( s.last_read + rng.randint( 1, max_lat ), s.last_done + 1 )
        s.q.append( { "pc": pc, "read": False, "read_at": s.last_read,
                      "done_at": s.last_done } )
      for ent in s.q:
        if not ent["read"] and ent["read_at"] <= s.now:
          read( ent )
      s.now += 1
      s.ready = len( s.q ) < s.cap and ( latency is not None or rng.random() < 0.8 )

  def line_trace( s ):
    return f"{len( s.q )}"


class ControlPorts( Component ):
  """The control unit with plain port names (what Verilator imports)."""

  def construct( s, Ctrl, cfg=CFG, scoreboard=True ):
    s.ctrl = Ctrl() if Ctrl is CONTROL["fl"] else Ctrl( cfg, scoreboard )
    s.inst = RecvIfcRTL( InstMsg )
    s.inst //= s.ctrl.inst
    s.idle = OutPort()
    s.idle //= s.ctrl.idle
    for i, u in enumerate( UNITS ):
      setattr( s, f"issue_{u}", SendIfcRTL( InstMsg ) )
      setattr( s, f"done_{u}", RecvIfcRTL( DoneMsg ) )
      connect( s.ctrl.issue[i], getattr( s, f"issue_{u}" ) )
      connect( getattr( s, f"done_{u}" ), s.ctrl.done[i] )

  def line_trace( s ):
    return s.ctrl.line_trace()


class ControlBench( Component ):

  def construct( s, dut, world, seed, src_delay=0, latency=None ):
    s.dut = dut
    s.src = DelaySourceRTL( InstMsg, [ InstMsg( w ) for w in world.words ], src_delay, seed )
    s.src.send //= s.dut.inst
    s.units = [ ExecUnitFL( i, world, seed * 7 + 1 + i, latency=latency ) for i in range( len( UNITS ) ) ]
    for i, u in enumerate( UNITS ):
      connect( getattr( s.dut, f"issue_{u}" ), s.units[i].recv )
      connect( s.units[i].send, getattr( s.dut, f"done_{u}" ) )

  def line_trace( s ):
    return s.dut.line_trace() + " " + " ".join( x.line_trace() for x in s.units )


class Deadlock( AssertionError ):
  pass


def diagnose( world, cfg ):
  """Why the next instruction has not issued, from the bench's own view."""
  pc = world.next_pc
  if pc >= len( world.words ):
    stuck = [ p for p in range( len( world.words ) ) if world.done_cycle[p] is None ]
    return "all issued; no done token for " + ", ".join(
      f"pc {p} ({format_inst( decode( world.words[p] ) )})" for p in stuck )
  c = world.cands[pc]

  class E:
    def __init__( s, p ):
      s.unit, s.fp = world.cands[p].unit, world.cands[p].fp
      s.label = f"pc {p} ({format_inst( decode( world.words[p] ) )})"
  inflight = [ p for p in range( pc ) if world.done_cycle[p] is None ]
  entries = [ E( p ) for p in inflight ]
  entries += [ None ] * max( 0, cfg.scoreboard_entries - len( entries ) )
  chain = None
  if pc and world.cands[ pc - 1 ].chain and ( pc - 1 ) in inflight:
    chain = inflight.index( pc - 1 )
  why = stall_reasons( c, entries, chain ) or [ f"{UNITS[ c.unit ]} not ready" ]
  return ( f"pc {pc} ({format_inst( decode( world.words[pc] ) )}, {c.fp}) "
           f"waits for: " + "; ".join( why ) )


def run_control( words, level, cmdline_opts=None, seed=0, scoreboard=True,
                 cfg=CFG, rf_entries=RF_ENTRIES, max_cycles=None, src_delay=0,
                 latency=None, hang=(), line_trace=False, until_idle=False ):
  """Run a program through the control unit at `level`; returns the World
  (until_idle: on after the last done token until the unit reports idle,
  its cycle in `idle_cycle`)."""
  world = World( words, cfg, rf_entries )
  world.hang = tuple( hang )
  dut = ControlPorts( CONTROL[ level ], cfg, scoreboard )
  th = ControlBench( dut, world, seed, src_delay, latency )
  opts = dict( cmdline_opts or {} )
  translating = level == "rtl" and bool( opts.get( "test_verilog" ) )
  th.elaborate()
  if translating:
    verilator5.name_without_double_underscores( th.dut )
    for k, v in ( ( "test_yosys_verilog", "" ), ( "dump_vcd", "" ), ( "dump_vtb", "" ),
                  ( "dump_textwave", False ) ):
      opts.setdefault( k, v )
    th = config_model_with_cmdline_opts( th, opts, duts=[ "dut" ] )
  th.apply( DefaultPassGroup( linetrace=line_trace ) )
  limit = max_cycles or 200 + 40 * len( words )
  try:
    th.sim_reset()
    while not all( x is not None for x in world.done_cycle ):
      if th.sim_cycle_count() >= limit:
        raise Deadlock( f"control unit at {level} made no progress in {limit} cycles: "
                        + diagnose( world, cfg ) )
      th.sim_tick()
    while until_idle and not th.dut.idle:
      if th.sim_cycle_count() >= limit:
        raise Deadlock( f"control unit at {level} not idle in {limit} cycles after its "
                        f"last done token" )
      th.sim_tick()
    if until_idle:
      world.idle_cycle = th.units[0].now
  finally:
    if translating:
      th.dut.finalize()
  return world


def listing( words ):
  return "\n".join( f"  {pc:3d}: {format_inst( decode( w ) )}" for pc, w in enumerate( words ) )


def check_sequential( words, world ):
  """The run's reads and final register file equal sequential execution."""
  rf, trace = run_sequential( words, rf_entries=len( world.rf ) )
  for pc, ( got, want ) in enumerate( zip( world.trace, trace ) ):
    if got != want:
      raise AssertionError(
        f"pc {pc} ({format_inst( decode( words[pc] ) )}) read values that differ "
        f"from sequential execution (issued cycle {world.issue_cycle[pc]}); "
        f"program:\n{listing( words )}" )
  assert world.rf == rf, f"final register file differs; program:\n{listing( words )}"


# Isolated scoreboard cases: every unit has a fixed latency of CASE_LATENCY
# and is always ready; (name, what it shows, program).
CASE_LATENCY = 5
CASES = [
  ( "no_hazard", "disjoint ranges on two units overlap",
    "exp v0, v4, len=4\nddr_read v8, 0, vecs=1" ),
  ( "raw", "exp reads v0 that ddr_read writes: waits for its done",
    "ddr_read v0, 0, vecs=1\nexp v4, v0, len=4" ),
  ( "war", "ddr_read writes v0 that exp reads: waits for its done",
    "exp v4, v0, len=4\nddr_read v0, 0, vecs=1" ),
  ( "waw", "both write v0: the second waits",
    "exp v0, v4, len=4\nddr_read v0, 0, vecs=1" ),
  ( "full", "five independent reads, four scoreboard entries",
    "\n".join( f"ddr_read v{i}, {i}, vecs=1" for i in range( 5 ) ) ),
  ( "chain", "mul chains into accum: issues right after it",
    "mul v0, v4, v4, len=4 chain\naccum v8, v0, len=4" ),
  ( "unchained", "the same pair without chain: RAW",
    "mul v0, v4, v4, len=4\naccum v8, v0, len=4" ),
  ( "wait_dma", "no register overlap, but wait_dma",
    "ddr_read v0, 0, vecs=1\nexp v8, v4, len=4 wait_dma" ),
]


def case_words( text ):
  from pymtl_dfx.isa import assemble, encode
  return [ encode( i ) for i in assemble( text ) ]


def run_case( name, level, cmdline_opts=None ):
  text = dict( ( n, t ) for n, _, t in CASES )[ name ]
  words = case_words( text )
  world = run_control( words, level, cmdline_opts, latency=CASE_LATENCY )
  check_sequential( words, world )
  return world
