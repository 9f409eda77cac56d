"""The ring's kernel boundary: RingTxRTL -> RingRxRTL back to back and through
LinkModelRTL (two clock-domain crossings, flow control, back-pressure
bursts), the AsyncFifoRTL alone, and framing errors into RingRxRTL.  Every
test body runs in pymtl3's simulation and, under --test-verilog, on the
Verilated tops."""

import random

import pytest
from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.kernel.AsyncFifoRTL import AsyncFifoRTL
from pymtl_dfx.kernel.LinkModelRTL import (BurstStallRTL, ClockEnableRTL, LinkModelRTL,
                                           headroom, mk_axis_beat)
from pymtl_dfx.kernel.RingRxRTL import RingRxRTL
from pymtl_dfx.kernel.RingTxRTL import RingTxRTL
from pymtl_dfx.kernel.ring_frame import beats_packet, packet_beats, ring_layout
from pymtl_dfx.testing.harness import _plain_opts, elaborate_for, run_until_done
from pymtl_dfx.testing.src_sink import CheckSinkRTL, DelaySourceRTL
from pymtl_dfx.hdl.wide_ports import (FieldRecvIfcRTL, FieldSendIfcRTL, connect_fields,
                                          connect_stream)
from pymtl_dfx.units.router.msgs import mk_ring_packet

CFG = DFXConfig()                       # W = 64: 1,048 bits, 3 beats
CFG32 = DFXConfig( router_words=32 )    # 536 bits, 2 beats
CFG8 = DFXConfig( router_words=8 )      # 152 bits, 1 beat
Beat = mk_axis_beat()


def random_packets( cfg, n, seed ):
  rng = random.Random( seed )
  Packet = mk_ring_packet( cfg )
  return [ Packet( rng.randrange( 256 ), rng.randrange( 1 << 16 ),
                   [ rng.randrange( 1 << 16 ) for _ in range( cfg.router_words ) ] )
           for _ in range( n ) ]


def _axis( master, slave ):
  for name in ( "tvalid", "tready", "tdata", "tkeep", "tlast" ):
    connect( getattr( master, name ), getattr( slave, name ) )


class ChainTop( Component ):
  """Tx -> (LinkModelRTL or a wire) -> Rx; the packet ports split into
  fields (a W = 64 packet is wider than a Verilated port can be)."""

  def construct( s, cfg, link=None ):
    Packet = mk_ring_packet( cfg )
    s.inp = FieldRecvIfcRTL( Packet )
    s.out = FieldSendIfcRTL( Packet )
    s.error = OutPort()
    s.drops = OutPort( Bits32 )
    s.xoff = OutPort()
    s.tx = RingTxRTL( cfg )
    s.rx = RingRxRTL( cfg )
    connect_fields( s.tx.pkt.msg, s.inp )
    s.tx.pkt.val //= s.inp.val
    s.tx.pkt.rdy //= s.inp.rdy
    connect_fields( s.rx.pkt.msg, s.out )
    s.out.val //= s.rx.pkt.val
    s.out.rdy //= s.rx.pkt.rdy
    s.error //= s.rx.error
    s.fill = OutPort( mk_bits( ( link or {} ).get( "far_depth", 1 ).bit_length() ) )
    if link is None:
      _axis( s.tx.axis, s.rx.axis )
      s.drops //= 0
      s.xoff //= 0
      s.fill //= 0
    else:
      s.link = LinkModelRTL( **link )
      s.fill //= s.link.fill
      _axis( s.tx.axis, s.link.rx )
      _axis( s.link.tx, s.rx.axis )
      s.drops //= s.link.drops
      s.xoff //= s.link.xoff

  def line_trace( s ):
    mid = s.link.line_trace() if hasattr( s, "link" ) else ""
    return f"{s.tx.line_trace()}>{mid}>{s.rx.line_trace()}"


class RxTop( Component ):
  """Beats (data, keep, last) from a source into RingRxRTL."""

  def construct( s, cfg ):
    Packet = mk_ring_packet( cfg )
    s.beats = RecvIfcRTL( Beat )
    s.out = FieldSendIfcRTL( Packet )
    s.error = OutPort()
    s.rx = RingRxRTL( cfg )
    s.rx.axis.tvalid //= s.beats.val
    s.rx.axis.tready //= s.beats.rdy
    s.rx.axis.tdata //= s.beats.msg.data
    s.rx.axis.tkeep //= s.beats.msg.keep
    s.rx.axis.tlast //= s.beats.msg.last
    connect_fields( s.rx.pkt.msg, s.out )
    s.out.val //= s.rx.pkt.val
    s.out.rdy //= s.rx.pkt.rdy
    s.error //= s.rx.error

  def line_trace( s ):
    return s.rx.line_trace()


class FifoTop( Component ):
  """AsyncFifoRTL between two phase-accumulator clock enables."""

  def construct( s, Type, depth, w_ratio, r_ratio ):
    s.enq = RecvIfcRTL( Type )
    s.deq = SendIfcRTL( Type )
    P = mk_bits( depth.bit_length() )
    s.wptr = OutPort( P )
    s.rptr = OutPort( P )
    s.w_level = OutPort( P )
    s.w_en = OutPort()
    s.ce_w = ClockEnableRTL( *w_ratio )
    s.ce_r = ClockEnableRTL( *r_ratio, phase=r_ratio[1] // 2 )
    s.fifo = AsyncFifoRTL( Type, depth )
    s.fifo.w_en //= s.ce_w.en
    s.fifo.r_en //= s.ce_r.en
    s.enq //= s.fifo.enq
    s.deq //= s.fifo.deq
    s.wptr //= s.fifo.wptr
    s.rptr //= s.fifo.rptr
    s.w_level //= s.fifo.w_level
    s.w_en //= s.ce_w.en

  def line_trace( s ):
    return s.fifo.line_trace()


class ProbeCL( Component ):
  """Records the named ports of the DUT every cycle after reset."""

  def construct( s, widths ):
    s.names = list( widths )
    s.ins = [ InPort( w ) for w in widths.values() ]
    s.log = { n: [] for n in s.names }
    logs = [ s.log[ n ] for n in s.names ]
    n = len( logs )

    @update_ff
    def up_probe():
      for i in range( n ):
        _record( s.reset, logs[i], s.ins[i] )

  def port( s, name ):
    return s.ins[ s.names.index( name ) ]


def _record( reset, log, value ):
  # outside the block: pymtl3 checks the fields a block names
  if reset:
    log.clear()
  else:
    log.append( int( value ) )


class Harness( Component ):

  def construct( s, dut, src_port, sink_port, Types, msgs, expected, probes,
                 src_delay=0, sink_delay=0, seed=0, first_wait=None ):
    """Types: the source's and the sink's message types (one type for both,
    or a pair)."""
    InT, OutT = Types if isinstance( Types, tuple ) else ( Types, Types )
    s.dut = dut
    s.src = DelaySourceRTL( InT, msgs, src_delay, seed )
    s.sink = CheckSinkRTL( OutT, expected, sink_delay, seed + 1, strict=True )
    if first_wait is not None and s.sink.delays:
      s.sink.delays[0] = first_wait
    connect_stream( s.src.send, getattr( dut, src_port ) )
    connect_stream( s.sink.recv, getattr( dut, sink_port ) )
    s.probe = ProbeCL( probes )
    for n in probes:
      connect( s.probe.port( n ), getattr( dut, n ) )

  def done( s ):
    return s.src.done() and s.sink.done()

  def line_trace( s ):
    return s.dut.line_trace()


def run( th, cmdline_opts, limit, tail=4 ):
  """Run to done plus `tail` cycles (a registered error pulse lands after
  its beat); returns (cycles, the probe's log, the harness)."""
  th = elaborate_for( th, "rtl", _plain_opts( cmdline_opts ) )
  done = th.done
  left = [ tail ]

  def finished():
    if not done():
      return False
    left[0] -= 1
    return left[0] < 0
  th.done = finished
  cycles = run_until_done( th, limit, type( th.dut ).__name__,
                           lambda: f"received {len( th.sink.arrivals )}/{len( th.sink.expected )}" )
  return cycles, th.probe.log, th


def pulses( trace ):
  """Number of separate high runs, and the longest."""
  runs, at, longest = 0, 0, 0
  for v in trace + [ 0 ]:
    if v:
      at += 1
    else:
      if at:
        runs += 1
        longest = max( longest, at )
      at = 0
  return runs, longest


# -- the layout ---------------------------------------------------------------

def test_layout():
  L = ring_layout( CFG )
  assert ( L.bits, L.beats, L.last_keep ) == ( 1048, 3, 0b111 )
  # the payload fills beats 0 and 1, the header the last beat's 3 bytes
  assert [ ( x.beat, x.lo ) for x in L.slots if x.field == "data" ][ 32 ] == ( 1, 0 )
  assert [ ( x.field, x.beat, x.lo, x.nbits ) for x in L.slots[ -2: ] ] == \
         [ ( "idx", 2, 0, 16 ), ( "src", 2, 16, 8 ) ]
  assert ( ring_layout( CFG32 ).beats, ring_layout( CFG32 ).last_keep ) == ( 2, 0b111 )
  assert ( ring_layout( CFG8 ).beats, ring_layout( CFG8 ).last_keep ) == ( 1, ( 1 << 19 ) - 1 )
  # a field across a beat boundary becomes two slots (a 120-bit stream)
  L = ring_layout( CFG8, 120 )
  split = [ x for x in L.slots if x.field == "data" and x.index == 7 ]
  assert [ ( x.beat, x.lo, x.nbits, x.field_lo ) for x in split ] == [ ( 0, 112, 8, 0 ), ( 1, 0, 8, 8 ) ]
  pkt = random_packets( CFG, 1, 3 )[0]
  beats = packet_beats( CFG, pkt )
  assert beats_packet( CFG, [ d for d, _, _ in beats ] ) == pkt
  assert beats[0][0] & 0xffff == int( pkt.data[0] )
  assert beats[2] == ( int( pkt.idx ) | int( pkt.src ) << 16, 0b111, 1 )


# -- Tx -> Rx and Tx -> link -> Rx ---------------------------------------------

@pytest.mark.parametrize( "cfg", [ CFG, CFG32, CFG8 ], ids=[ "W64", "W32", "W8" ] )
def test_tx_rx_back_to_back( cfg, cmdline_opts ):
  pkts = random_packets( cfg, 30, seed=cfg.router_words )
  Packet = mk_ring_packet( cfg )
  th = Harness( ChainTop( cfg ), "inp", "out", Packet, pkts, pkts, { "error": 1 },
                src_delay=2, sink_delay=3, seed=5 )
  cycles, log, _ = run( th, cmdline_opts, 2000 )
  assert not any( log["error"] )


def test_tx_rx_full_rate( cmdline_opts ):
  """No bubble: one W = 64 packet every 3 cycles with nothing stalling."""
  pkts = random_packets( CFG, 20, seed=9 )
  Packet = mk_ring_packet( CFG )
  th = Harness( ChainTop( CFG ), "inp", "out", Packet, pkts, pkts, { "error": 1 } )
  _, _, th = run( th, cmdline_opts, 500 )
  gaps = { b - a for a, b in zip( th.sink.arrivals, th.sink.arrivals[ 1: ] ) }
  assert gaps == { 3 }


LINK_CASES = {
  # (a, link, b) enables; the link slower, then faster-looking than the kernels
  "link_slower": dict( a_ratio=( 7, 9 ), link_ratio=( 5, 11 ), b_ratio=( 7, 9 ) ),
  "link_faster": dict( a_ratio=( 5, 11 ), link_ratio=( 7, 9 ), b_ratio=( 5, 11 ) ),
  "default_ratio": dict(),
}


@pytest.mark.parametrize( "case", sorted( LINK_CASES ) )
def test_through_link( case, cmdline_opts ):
  """Random packets, random back-pressure at Rx's output, bursts at the far
  end: every packet once, in order, bit-exact; no beat lost; XOFF used."""
  link = dict( latency=6, near_depth=8, far_depth=32, duty=0.5, burst=8, seed=0x1D2B,
               **LINK_CASES[ case ] )
  pkts = random_packets( CFG, 40, seed=len( case ) )
  Packet = mk_ring_packet( CFG )
  th = Harness( ChainTop( CFG, link ), "inp", "out", Packet, pkts, pkts,
                { "error": 1, "drops": 32, "xoff": 1 }, src_delay=1, sink_delay=4, seed=11 )
  _, log, _ = run( th, cmdline_opts, 20000 )
  assert not any( log["error"] )
  assert log["drops"][-1] == 0
  assert any( log["xoff"] ), "the bursts never filled the far FIFO: flow control untested"


def test_headroom_is_tight( cmdline_opts ):
  """The receiver takes nothing for a long time: the far FIFO fills to
  exactly xoff_at + 2 x latency + 1 = far_depth and drops nothing."""
  latency, depth = 5, 32
  link = dict( latency=latency, link_ratio=( 5, 11 ), near_depth=16, far_depth=depth, duty=0 )
  pkts = random_packets( CFG, 30, seed=4 )
  Packet = mk_ring_packet( CFG )
  top = ChainTop( CFG, link )
  th = Harness( top, "inp", "out", Packet, pkts, pkts, { "drops": 32, "fill": depth.bit_length() },
                first_wait=600 )
  _, log, _ = run( th, cmdline_opts, 5000 )
  assert top.link.params["xoff_at"] + headroom( latency ) == depth
  assert max( log["fill"] ) == depth
  assert log["drops"][-1] == 0


def test_without_flow_control_beats_are_lost( cmdline_opts ):
  """The same stall on a link that ignores XOFF: beats are dropped at the
  far FIFO, Rx sees framing errors and packets go missing (the checks
  above can fail)."""
  link = dict( latency=5, link_ratio=( 5, 11 ), near_depth=16, far_depth=32, duty=0.75,
               burst=16, seed=0x1D2B, flow_control=False )
  pkts = random_packets( CFG, 30, seed=4 )
  Packet = mk_ring_packet( CFG )
  th = Harness( ChainTop( CFG, link ), "inp", "out", Packet, pkts, pkts,
                { "drops": 32, "error": 1 } )
  with pytest.raises( AssertionError ):      # the sink never gets its 30 packets
    run( th, cmdline_opts, 2000 )
  log = th.probe.log
  assert log["drops"][-1] > 0
  assert pulses( log["error"] )[0] >= 1
  assert len( th.sink.arrivals ) < len( pkts )


# -- the async FIFO alone -------------------------------------------------------

@pytest.mark.parametrize( "depth,w_ratio,r_ratio", [
  ( 4, ( 7, 9 ), ( 5, 11 ) ), ( 8, ( 5, 11 ), ( 7, 9 ) ), ( 4, ( 1, 1 ), ( 1, 1 ) ) ] )
def test_async_fifo( depth, w_ratio, r_ratio, cmdline_opts ):
  msgs = [ Bits16( ( 37 * i + 5 ) & 0xffff ) for i in range( 60 ) ]
  P = depth.bit_length()
  th = Harness( FifoTop( Bits16, depth, w_ratio, r_ratio ), "enq", "deq", Bits16, msgs, msgs,
                { "wptr": P, "rptr": P, "w_level": P, "w_en": 1 }, src_delay=1, sink_delay=2,
                seed=depth, first_wait=120 )
  _, log, th = run( th, cmdline_opts, 3000 )
  # Gray pointers: one bit per step, and the code of the count so far
  for name in ( "wptr", "rptr" ):
    seq = log[ name ]
    steps = 0
    for a, b in zip( seq, seq[ 1: ] ):
      if a != b:
        assert bin( a ^ b ).count( "1" ) == 1, f"{name} {a:b} -> {b:b}"
        steps += 1
        assert b == ( steps % ( 1 << P ) ) ^ ( ( steps % ( 1 << P ) ) >> 1 )
    assert steps == len( msgs )
  # full at exactly `depth`: before the reader's first take, `depth` writes
  first = th.sink.arrivals[0]
  assert sum( 1 for c in th.src.sent if c < first ) == depth
  assert max( log["w_level"] ) == depth
  # empty at the end: the strict sink would have failed on an extra message
  assert th.sink.arrivals == sorted( th.sink.arrivals )


def test_clock_enable_ratio( cmdline_opts ):
  """num enables per den cycles, evenly spread (the FIFO idles)."""
  th = Harness( FifoTop( Bits8, 2, ( 5, 11 ), ( 7, 9 ) ), "enq", "deq", Bits8, [], [],
                { "w_en": 1 } )
  _, log, _ = run( th, cmdline_opts, 200, tail=110 )
  en = log["w_en"][ :110 ]
  assert sum( en ) == 50
  assert all( sum( en[ i:i + 11 ] ) == 5 for i in range( 0, 99 ) )


# -- framing errors into Rx -------------------------------------------------------

def _frames( cfg, pkts ):
  return [ [ Beat( d, k, l ) for d, k, l in packet_beats( cfg, p ) ] for p in pkts ]


def test_framing_errors( cmdline_opts ):
  """Broken frames: an error pulse each, the packets the resynchronisation
  rule loses are lost, every other packet arrives whole and in order."""
  pkts = random_packets( CFG, 12, seed=21 )
  f = _frames( CFG, pkts )
  beats = []
  beats += f[0]
  beats += f[1][ 1: ]                         # first beat lost: tlast early -> p1 lost
  beats += f[2]
  beats += f[3][ :-1 ] + [ Beat( f[3][-1].data, f[3][-1].keep, 0 ) ]   # tlast missing
  beats += f[4]                               # ... swallowed while hunting for a tlast
  beats += f[5]
  beats += [ Beat( 0, 0xff, 1 ) ]             # a one-beat runt: tlast early
  beats += f[6] + f[7]
  beats += f[8][ :-1 ]                        # last beat lost: p9's first beat is at
  beats += f[9]                               # p8's last place, no tlast: both lost
  beats += f[10] + f[11]
  want = [ pkts[i] for i in ( 0, 2, 5, 6, 7, 10, 11 ) ]
  Packet = mk_ring_packet( CFG )
  th = Harness( RxTop( CFG ), "beats", "out", ( Beat, Packet ), beats, want, { "error": 1 },
                src_delay=1, sink_delay=3, seed=2 )
  _, log, _ = run( th, cmdline_opts, 3000 )
  assert pulses( log["error"] ) == ( 4, 1 )


def rx_reference( cfg, beats ):
  """RingRxRTL's resynchronisation rule on Python values: (packets, errors)."""
  n = ring_layout( cfg ).beats
  out, errors, kept, hunting = [], 0, [], False
  for b in beats:
    last = bool( int( b.last ) )
    if hunting:
      hunting = not last
    elif len( kept ) == n - 1:
      if last:
        out.append( beats_packet( cfg, kept + [ b.data ] ) )
      else:
        errors += 1
        hunting = True
      kept = []
    elif last:
      errors += 1
      kept = []
    else:
      kept.append( b.data )
  return out, errors


@pytest.mark.parametrize( "seed", [ 1, 2 ] )
def test_random_framing_errors( seed, cmdline_opts ):
  """Beats lost, tlasts lost or early, runts, at random, under back-pressure:
  RingRxRTL delivers what its rule says and pulses once per error."""
  rng = random.Random( seed )
  pkts = random_packets( CFG, 40, seed=seed + 50 )
  beats = []
  for f in _frames( CFG, pkts ):
    what = rng.choice( [ "ok", "ok", "ok", "drop", "no_last", "early", "runt" ] )
    if what == "drop":
      del f[ rng.randrange( len( f ) ) ]
    elif what == "no_last":
      f[-1] = Beat( f[-1].data, f[-1].keep, 0 )
    elif what == "early":
      i = rng.randrange( len( f ) - 1 )
      f[i] = Beat( f[i].data, f[i].keep, 1 )
    elif what == "runt":
      f.insert( 0, Beat( rng.randrange( 1 << 64 ), 0xff, 1 ) )
    beats += f
  want, errors = rx_reference( CFG, beats )
  assert 0 < len( want ) < len( pkts ) and errors > 0
  th = Harness( RxTop( CFG ), "beats", "out", ( Beat, mk_ring_packet( CFG ) ), beats, want,
                { "error": 1 }, src_delay=1, sink_delay=3, seed=seed )
  _, log, _ = run( th, cmdline_opts, 4000 )
  assert sum( log["error"] ) == errors          # one cycle each (back to back if two beats are)


def test_framing_errors_one_beat( cmdline_opts ):
  pkts = random_packets( CFG8, 4, seed=2 )
  f = _frames( CFG8, pkts )
  beats = f[0] + [ Beat( f[1][0].data, f[1][0].keep, 0 ) ] + f[2] + f[3]
  th = Harness( RxTop( CFG8 ), "beats", "out", ( Beat, mk_ring_packet( CFG8 ) ), beats, [ pkts[0], pkts[3] ], { "error": 1 },
                sink_delay=2, seed=3 )
  _, log, _ = run( th, cmdline_opts, 1000 )
  assert pulses( log["error"] ) == ( 1, 1 )


# -- bad parameters ---------------------------------------------------------------

@pytest.mark.parametrize( "make", [
  lambda: AsyncFifoRTL( Bits8, 3 ),
  lambda: AsyncFifoRTL( Bits8, 1 ),
  lambda: ClockEnableRTL( 0, 5 ),
  lambda: ClockEnableRTL( 6, 5 ),
  lambda: ClockEnableRTL( 1, 5, phase=5 ),
  lambda: BurstStallRTL( 0, 0.5, 4 ),
  lambda: BurstStallRTL( 1, 1.0, 4 ),
  lambda: BurstStallRTL( 1, 0.5, 0 ),
  lambda: LinkModelRTL( latency=0 ),
  lambda: LinkModelRTL( latency=8, far_depth=16 ),            # no room for the headroom
  lambda: LinkModelRTL( latency=4, far_depth=32, xoff_at=30 ),
  lambda: LinkModelRTL( latency=4, far_depth=32, xoff_at=10, xon_at=10 ),
  lambda: LinkModelRTL( link_ratio=( 3, 2 ) ),
  lambda: LinkModelRTL( a_ratio=5 ),
  lambda: LinkModelRTL( near_depth=12 ),
  lambda: ring_layout( CFG, 500 ),
  lambda: RingTxRTL( CFG, 500 ),
  lambda: RingRxRTL( CFG, 0 ),
] )
def test_bad_parameters( make ):
  with pytest.raises( ValueError ):
    x = make()
    if isinstance( x, Component ):
      x.elaborate()             # a component's parameters are checked in construct


def test_default_link():
  """The defaults the 2-kernel co-simulation uses (55-cycle latency, a
  512-beat far FIFO), in pymtl3's simulation only: the co-simulation
  Verilates this model itself."""
  pkts = random_packets( CFG, 40, seed=8 )
  Packet = mk_ring_packet( CFG )
  th = Harness( ChainTop( CFG, dict( far_depth=512 ) ), "inp", "out", Packet, pkts, pkts,
                { "error": 1, "drops": 32 }, sink_delay=2, seed=4 )
  cycles, log, _ = run( th, {}, 3000 )
  assert not any( log["error"] ) and log["drops"][-1] == 0
  assert cycles > 2 * 55            # the latency pipe is in the path
