"""InstFetchRTL -> [stalls] -> AxiMemSlaveRTL -> MemoryRTL (the program
memory of `inst_memory_spec`, loaded through its host port): runs of N
instructions in order under back-pressure on `inst` and on every AXI
channel (protocol checked on both sides), a run of count 0, starts while
busy ignored, busy's window, error pulses on SLVERR, one instruction per
cycle without stalls.  The fetcher and the slave are Verilator models
under --test-verilog."""

import random

import pytest

from pymtl3 import *

from pymtl_dfx.kernel.axi import MEM_ADDR_BITS
from pymtl_dfx.kernel.AxiMemSlaveRTL import AxiMemSlaveRTL
from pymtl_dfx.kernel.InstFetchRTL import InstFetchRTL, inst_memory_spec
from pymtl_dfx.kernel.interface import inst_data_bits
from pymtl_dfx.kernel.MemAxiMasterRTL import AxiConfigError
from pymtl_dfx.testing.axi_check import AxiCheckRTL, AxiStallRTL, run_with_duts, watch
from pymtl_dfx.testing.src_sink import CheckSinkRTL, DelaySourceRTL, done_by, received
from pymtl_dfx.units.control.msgs import InstMsg
from pymtl_dfx.units.memory.MemoryRTL import MemoryRTL
from pymtl_dfx.units.memory.ports import mk_host_types

WORDS = 32
WB = inst_data_bits() // 8
BASE = 0x3_0000_0000
LATENCY = 15             # DDR's (DFXConfig.ddr_latency_cycles)


class Driver( Component ):
  """After the program is loaded, runs (addr, count, offsets) one after
  another: a start pulse, then a start with other arguments at each offset
  (cycles after the start, while busy: to be ignored), then waits for busy
  to fall (or, for count 0, a few cycles).  Logs busy every cycle."""

  def construct( s, runs, loaded ):
    s.start = OutPort()
    s.addr  = OutPort( MEM_ADDR_BITS )
    s.count = OutPort( 32 )
    s.busy  = InPort()
    s.runs = runs
    s.loaded = loaded
    s.cycle, s.run, s.t0 = 0, 0, None
    s.starts, s.busy_log = [], {}

    @update_ff
    def up_driver():
      if s.reset:
        s.cycle, s.run, s.t0 = 0, 0, None
        s.starts, s.busy_log = [], {}
        s.start <<= 0
        return
      s.cycle += 1
      s.busy_log[ s.cycle ] = int( s.busy )
      s.start <<= 0
      if s.run >= len( s.runs ) or not s.loaded( s.cycle ):
        return
      addr, count, offsets = s.runs[ s.run ]
      if s.t0 is None:
        s.t0 = s.cycle + 1                 # the start is seen in the next cycle
        s.starts.append( s.t0 )
        s.start <<= 1
        s.addr <<= addr
        s.count <<= count
        return
      k = s.cycle + 1 - s.t0
      if k in offsets:
        s.start <<= 1
        s.addr <<= addr + 3 * WB
        s.count <<= count + 5
      if ( count and k > 1 and not s.busy ) or ( not count and k > 4 ):
        s.run, s.t0 = s.run + 1, None

  def done( s ):
    return s.run >= len( s.runs )


class Bench( Component ):

  def construct( s, words, runs, p_stall, max_delay, seed, entries, fail=0 ):
    spec = inst_memory_spec( WORDS, LATENCY, 32 )   # the memory keeps up with the default fetch
    H = mk_host_types( spec )
    expected = [ InstMsg( words[ ( a - BASE ) // WB + k ] ) for a, n, _ in runs for k in range( n ) ]
    s.load = DelaySourceRTL( H["Req"], [ H["Req"]( 1, a, spec.all_elems, w )
                                          for a, w in enumerate( words ) ] )
    s.acks = CheckSinkRTL( H["Resp"], [ H["Resp"]( 0 ) ] * len( words ) )
    s.drv = Driver( runs, lambda c: done_by( s.acks, c ) )
    s.dut = InstFetchRTL() if entries is None else InstFetchRTL( entries=entries )
    s.slave = AxiMemSlaveRTL( spec )
    s.mem = MemoryRTL( spec, WORDS )
    s.sink = CheckSinkRTL( InstMsg, expected, max_delay, seed, strict=True )
    s.chk_m = AxiCheckRTL( MEM_ADDR_BITS, inst_data_bits(), "fetch" )
    s.chk_s = AxiCheckRTL( MEM_ADDR_BITS, inst_data_bits(), "slave" )
    s.load.send //= s.mem.host_req
    s.mem.host_resp //= s.acks.recv
    s.dut.start //= s.drv.start
    s.dut.addr //= s.drv.addr
    s.dut.count //= s.drv.count
    s.drv.busy //= s.dut.busy
    s.dut.inst //= s.sink.recv
    if p_stall:
      s.stall = AxiStallRTL( MEM_ADDR_BITS, inst_data_bits(), p_stall, seed + 1 )
      s.dut.axi //= s.stall.m
      s.stall.sl //= s.slave.axi
      watch( s.chk_m, s.dut.axi, s.stall.m )
      watch( s.chk_s, s.stall.sl, s.slave.axi )
    else:
      s.dut.axi //= s.slave.axi
      watch( s.chk_m, s.dut.axi, s.slave.axi )
      watch( s.chk_s, s.dut.axi, s.slave.axi )
    s.slave.base //= BASE
    s.slave.fail //= fail
    s.slave.req //= s.mem.req[0]
    s.mem.resp[0] //= s.slave.resp
    s.errors = 0

    @update_ff
    def up_bench():
      if s.reset:
        s.errors = 0
      else:
        s.errors += int( s.dut.error )

  def done( s ):
    return s.drv.done() and s.sink.done()

  def line_trace( s ):
    return f"{s.dut.line_trace()} {s.slave.line_trace()}"


def run( runs, cmdline_opts, p_stall=0.4, max_delay=3, seed=0, entries=2, fail=0 ):
  words = [ random.Random( seed ).getrandbits( 128 ) for _ in range( WORDS ) ]
  th = Bench( words, runs, p_stall, max_delay, seed, entries, fail )
  th, _ = run_with_duts( th, [ "dut", "slave" ], cmdline_opts, 4000, "the fetch",
                         lambda: "received " + received( { "inst": th.sink } ) )
  return th


def check_busy( th, runs ):
  """busy is 1 from the cycle after each start through the cycle of its
  last instruction, 0 the cycle after (and never for count 0)."""
  got = 0
  for t0, ( _, n, _ ) in zip( th.drv.starts, runs ):
    if n == 0:
      assert all( th.drv.busy_log.get( t, 0 ) == 0 for t in range( t0, t0 + 5 ) )
      continue
    last = th.sink.arrivals[ got + n - 1 ]
    got += n
    assert [ th.drv.busy_log[t] for t in range( t0 + 1, last + 1 ) ] == [ 1 ] * ( last - t0 )
    assert th.drv.busy_log[ t0 ] == 0 and th.drv.busy_log[ last + 1 ] == 0


RUNS = [ ( BASE, 12, ( 1, 3, 7 ) ), ( BASE + 4 * WB, 0, () ), ( BASE + 20 * WB, 9, ( 2, ) ),
         ( BASE + 31 * WB, 1, ( 1, ) ) ]


# a 2-entry buffer: back-pressure on inst fills it and holds reads back
@pytest.mark.parametrize( "p_stall,max_delay,seed", [ ( 0.4, 3, 1 ), ( 0.0, 4, 2 ), ( 0.6, 1, 3 ) ] )
def test_fetch_runs( p_stall, max_delay, seed, cmdline_opts ):
  th = run( RUNS, cmdline_opts, p_stall, max_delay, seed )
  check_busy( th, RUNS )
  assert th.errors == 0
  # the ignored starts read nothing: one read per instruction
  assert th.chk_s.beats[ "ar" ] == th.chk_s.beats[ "r" ] == sum( n for _, n, _ in RUNS )
  assert th.chk_s.beats[ "aw" ] == th.chk_s.beats[ "w" ] == 0


def test_fetch_error_still_delivers( cmdline_opts ):
  runs = [ ( BASE, 6, () ) ]
  th = run( runs, cmdline_opts, seed=4, fail=1 )
  assert th.errors == 6


# no stalls, an always-ready sink, the default buffer (more entries than
# DDR's round trip): one instruction per cycle after the first
def test_fetch_one_per_cycle( cmdline_opts ):
  runs = [ ( BASE, 30, () ) ]
  th = run( runs, cmdline_opts, p_stall=0, max_delay=0, entries=None )
  arr = th.sink.arrivals
  assert arr[-1] - arr[0] == 29, arr


def test_inst_memory_spec_matches_the_fetch_width():
  spec = inst_memory_spec( 64, 5, 3 )
  assert ( spec.channels, spec.words, spec.latency, spec.outstanding ) == ( 1, 64, 5, 3 )
  assert 16 * spec.word_elems == inst_data_bits() == InstMsg.nbits


@pytest.mark.parametrize( "kw,match", [
  ( dict( data_bits=64 ), "data_bits=64" ), ( dict( data_bits=192 ), "data_bits=192" ),
  ( dict( entries=0 ), "entries=0" ) ] )
def test_bad_parameters( kw, match ):
  with pytest.raises( AxiConfigError, match=match ):
    InstFetchRTL( **kw ).elaborate()
