"""MemAxiMasterRTL -> AxiMemSlaveRTL -> MemoryRTL (one channel): random
programs of reads and strobed writes in runs of one kind, random delays on
the core's request and response streams and random back-pressure on every
AXI channel; every response (in order) and the final contents (read back)
against a Python model; the protocol checked on both sides of the stalls;
error injection; a stream of one kind at one word per cycle.  Both AXI
components are Verilator models under --test-verilog."""

import random
from fractions import Fraction

import pytest

from pymtl3 import *

from pymtl_dfx.kernel.axi import MEM_ADDR_BITS
from pymtl_dfx.kernel.AxiMemSlaveRTL import AxiMemSlaveRTL
from pymtl_dfx.kernel.MemAxiMasterRTL import AxiConfigError, MemAxiMasterRTL
from pymtl_dfx.testing.axi_check import AxiCheckRTL, AxiStallRTL, run_with_duts, watch
from pymtl_dfx.testing.levels import python_rtl
from pymtl_dfx.testing.src_sink import CheckSinkRTL, DelaySourceRTL, received
from pymtl_dfx.units.memory.msgs import MemorySpec
from pymtl_dfx.units.memory.MemoryRTL import MemoryRTL

DEPTH = 16


# outstanding = latency + 4: what a stream needs at one word per cycle
def spec_of( elems=8, latency=4, outstanding=8 ):
  return MemorySpec( "HBM", 1, Fraction( 1 ), latency, outstanding, DEPTH, elems )


class Chain( Component ):
  """source -> master (dut) -> [stalls] -> slave -> MemoryRTL; sink on resp."""

  def construct( s, spec, reqs, resps, base, outstanding, p_stall, max_delay, seed, fail_at,
                 rdy_on_val=False ):
    D = 16 * spec.word_elems
    T = spec.types
    s.src  = DelaySourceRTL( T["Req"], reqs, max_delay, seed )
    s.sink = CheckSinkRTL( T["Resp"], resps, max_delay, seed + 1, strict=True )
    s.dut   = MemAxiMasterRTL( spec, outstanding )
    s.slave = AxiMemSlaveRTL( spec )
    s.mem   = MemoryRTL( spec, DEPTH )
    s.chk_m = AxiCheckRTL( MEM_ADDR_BITS, D, "master" )
    s.chk_s = AxiCheckRTL( MEM_ADDR_BITS, D, "slave" )
    s.src.send //= s.dut.req
    if rdy_on_val:
      # a core whose rdy depends on val, as the DMA's read engine's does
      # (it takes a beat when every channel of it has a word): a master
      # whose resp.val waited for resp.rdy would never see either rise
      s.sink.recv.val //= s.dut.resp.val
      s.sink.recv.msg //= s.dut.resp.msg

      @update
      def up_rdy_on_val():
        s.dut.resp.rdy @= s.sink.recv.rdy & s.dut.resp.val
    else:
      s.dut.resp //= s.sink.recv
    s.dut.base //= base
    s.slave.base //= base
    if p_stall:
      s.stall = AxiStallRTL( MEM_ADDR_BITS, D, p_stall, seed + 2 )
      s.dut.axi //= s.stall.m
      s.stall.sl //= s.slave.axi
      watch( s.chk_m, s.dut.axi, s.stall.m )
      watch( s.chk_s, s.stall.sl, s.slave.axi )
    else:
      s.dut.axi //= s.slave.axi
      watch( s.chk_m, s.dut.axi, s.slave.axi )
      watch( s.chk_s, s.dut.axi, s.slave.axi )
    s.slave.req //= s.mem.req[0]
    s.mem.resp[0] //= s.slave.resp
    s.mem.host_req.val //= 0
    s.mem.host_req.msg //= spec.types["Req"]()   # pymtl_dfx.units.memory.ports: the host port unused
    s.mem.host_resp.rdy //= 0
    s.fail = Wire()
    s.slave.fail //= s.fail
    s.errors = 0
    s.cycle = 0
    s.after = 0                # cycles since the sink got its last response

    @update_ff
    def up_chain():
      if s.reset:
        s.cycle, s.errors, s.after = 0, 0, 0
        s.fail <<= 0
        return
      s.cycle += 1
      s.after = s.after + 1 if s.sink.done() else 0
      s.errors += int( s.dut.error )
      s.fail <<= int( fail_at( s.cycle ) )

  # `error` pulses the cycle after its response's handshake: the last
  # response's pulse comes after the sink is done
  def done( s ):
    return s.src.done() and s.after >= 2

  def line_trace( s ):
    return f"{s.dut.line_trace()} {s.slave.line_trace()}"


class Model:
  def __init__( s, spec ):
    s.E, s.mem = spec.word_elems, [ 0 ] * DEPTH

  def access( s, wr, row, strb, data ):
    if not wr:
      return s.mem[ row ]
    word = s.mem[ row ]
    for k in range( s.E ):
      if ( strb >> k ) & 1:
        m = 0xFFFF << ( 16 * k )
        word = ( word & ~m ) | ( data & m )
    s.mem[ row ] = word
    return 0


def program( spec, n, seed ):
  """n requests in runs of one kind (1..6 long) on DEPTH rows, then a read
  of every row; requests and their responses from the model."""
  rng = random.Random( seed )
  T, m = spec.types, Model( spec )
  ops = []
  while len( ops ) < n:
    wr = rng.random() < 0.5
    for _ in range( rng.randint( 1, 6 ) ):
      row = rng.randrange( DEPTH )
      strb = rng.choice( [ spec.all_elems, 0, rng.getrandbits( spec.word_elems ) ] ) if wr else 0
      data = rng.getrandbits( 16 * spec.word_elems ) if wr else 0
      ops.append( ( int( wr ), row, strb, data ) )
  ops += [ ( 0, row, 0, 0 ) for row in range( DEPTH ) ]
  reqs = [ T["Req"]( *op ) for op in ops ]
  resps = [ T["Resp"]( m.access( *op ) ) for op in ops ]
  return reqs, resps, m


def run_chain( spec, reqs, resps, cmdline_opts, base=0, outstanding=None, p_stall=0.0,
               max_delay=0, seed=0, fail_at=lambda c: 0, rdy_on_val=False ):
  th = Chain( spec, reqs, resps, base, outstanding, p_stall, max_delay, seed, fail_at,
              rdy_on_val )
  th, _ = run_with_duts( th, [ "dut", "slave" ], cmdline_opts,
                         2000 + 20 * ( max_delay + 4 ) * len( reqs ), "the AXI chain",
                         lambda: "received " + received( { "resp": th.sink } ) )
  return th


def assert_single_beats( th, reqs ):
  writes = sum( int( r.wr ) for r in reqs )
  for chk in ( th.chk_m, th.chk_s ):
    b = chk.beats
    assert ( b["aw"], b["w"], b["b"] ) == ( writes, writes, writes ), b
    assert ( b["ar"], b["r"] ) == ( len( reqs ) - writes, ) * 2, b


# every response in order and the final contents, under delays and stalls on
# every stream and AXI channel; a base above 4 GB and base 0; two widths
@pytest.mark.parametrize( "elems,base,outstanding,p_stall,seed", [
  ( 8, 0x1_2345_6000, None, 0.5, 1 ),
  ( 8, 0, None, 0.2, 2 ),
  ( 8, 0x4000, 1, 0.6, 3 ),
  ( 32, 0x8000_0000, None, 0.5, 4 ),
] )
def test_random_program( elems, base, outstanding, p_stall, seed, cmdline_opts ):
  spec = spec_of( elems )
  n = 40 if python_rtl( "rtl", cmdline_opts ) else 200
  reqs, resps, _ = program( spec, n, seed )
  th = run_chain( spec, reqs, resps, cmdline_opts, base, outstanding, p_stall,
                  max_delay=2, seed=seed )
  assert th.errors == 0
  assert_single_beats( th, reqs )


# the core's rdy combinationally from the master's val: R and B reach the
# core in the cycle they arrive and the core's rdy goes straight back;
# every response in order under delays and stalls, as above
def test_core_rdy_on_val( cmdline_opts ):
  spec = spec_of()
  reqs, resps, _ = program( spec, 40, seed=7 )
  th = run_chain( spec, reqs, resps, cmdline_opts, p_stall=0.3, max_delay=2, seed=7,
                  rdy_on_val=True )
  assert th.errors == 0
  assert_single_beats( th, reqs )


# fail=1 all the time: every B and R raises `error` once and every response
# still comes back (the writes still happen: the read-back is right)
def test_error_every_response( cmdline_opts ):
  spec = spec_of()
  reqs, resps, _ = program( spec, 20, seed=5 )
  th = run_chain( spec, reqs, resps, cmdline_opts, base=0x1000, p_stall=0.3, max_delay=1,
                  seed=5, fail_at=lambda c: 1 )
  assert th.errors == len( reqs )


# fail in bursts: some responses fail, none is lost, nothing hangs
def test_error_some_responses( cmdline_opts ):
  spec = spec_of()
  reqs, resps, _ = program( spec, 30, seed=6 )
  th = run_chain( spec, reqs, resps, cmdline_opts, p_stall=0.2, seed=6,
                  fail_at=lambda c: ( c // 9 ) % 3 == 0 )
  assert 0 < th.errors < len( reqs )


# with no stalls a run of one kind moves one word per cycle once the
# pipeline is full: outstanding covers the latency plus the adapters' four
# cycles (the module docstring's rule); one slot fewer and it does not, at
# two latencies (None: spec_of's latency + 4)
@pytest.mark.parametrize( "wr,latency,outstanding", [
  ( 0, 4, None ), ( 1, 4, None ), ( 0, 4, 7 ), ( 1, 4, 7 ), ( 0, 10, None ), ( 1, 10, 13 ) ] )
def test_one_word_per_cycle( wr, latency, outstanding, cmdline_opts ):
  spec = spec_of( latency=latency, outstanding=latency + 4 )
  T = spec.types
  n = 30
  reqs = [ T["Req"]( wr, k % DEPTH, spec.all_elems, k + 1 ) for k in range( n ) ]
  m = Model( spec )
  resps = [ T["Resp"]( m.access( wr, k % DEPTH, spec.all_elems, k + 1 ) ) for k in range( n ) ]
  th = run_chain( spec, reqs, resps, cmdline_opts, outstanding=outstanding )
  arr = th.sink.arrivals
  if outstanding is None:
    assert arr[-1] - arr[0] == n - 1, arr
  else:
    assert arr[-1] - arr[0] > n - 1, arr


# a kind switch waits for the other kind to drain: a read right after a write
# to the same row sees it, even when the write's W is held back longest
def test_read_after_write_same_row( cmdline_opts ):
  spec = spec_of()
  T, m = spec.types, Model( spec )
  ops = []
  for k in range( 12 ):
    ops += [ ( 1, k % 3, spec.all_elems, 1000 + k ), ( 0, k % 3, 0, 0 ) ]
  reqs = [ T["Req"]( *op ) for op in ops ]
  resps = [ T["Resp"]( m.access( *op ) ) for op in ops ]
  th = run_chain( spec, reqs, resps, cmdline_opts, p_stall=0.7, seed=9 )
  assert_single_beats( th, reqs )


@pytest.mark.parametrize( "elems,outstanding,match", [
  ( 6, None, "power-of-two" ), ( 8, 0, "outstanding=0" ), ( 8, "4", "outstanding='4'" ) ] )
def test_bad_parameters( elems, outstanding, match ):
  with pytest.raises( AxiConfigError, match=match ):
    MemAxiMasterRTL( spec_of( elems ), outstanding ).elaborate()
