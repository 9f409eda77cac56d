"""The co-simulation's model of one card-to-card link: Aurora 64B/66B with
native flow control (NFC) between one kernel's ring_tx (into `rx`) and the
next kernel's ring_rx (out of `tx`), with the clock-domain crossings a
real link has.

Clocks.  The link runs on its own clock (the Aurora user clock), unrelated
to the kernels' ap_clk.  pymtl3 simulates one clock, so each domain is a
clock enable from a phase accumulator (`ClockEnableRTL`: num/den enables
per cycle, ratios like 6103/6250 whose pattern repeats only after den
cycles): `a_ratio` the sending kernel's side, `link_ratio` the link, and
`b_ratio` the receiving kernel's side.  The ports are on the simulation
clock (the kernels' ap_clk); with a_ratio or b_ratio below 1 the kernel
sides tick slower, which makes the link look faster than the kernels.

Path of a beat (a beat = tdata, tkeep, tlast):

  rx -> near AsyncFifo (A -> link) -> transmitter -> latency pipe (link)
     -> far AsyncFifo (link -> B) -> burst stall -> output register -> tx

- rx.tready is the near FIFO's enq.rdy (A's enable and not full).
- The transmitter sends one beat per link cycle from the near FIFO unless
  XOFF is in effect.
- The latency pipe (`latency` link cycles, default 55: PG074's 54-55
  user-clock cycles through the core) is the cable: it cannot stall, so a
  beat that reaches a full far FIFO is lost and counted in `drops`.
- The far FIFO is the receiving Aurora kernel's RX FIFO (AuroraFlow's:
  written in the user clock's domain, read in ap_clk's).  Flow control
  (as AuroraFlow's NFC module does with its RX FIFO's programmable-full
  and -empty flags): when the FIFO's level as its link side sees it
  reaches `xoff_at`, the receiver asks for XOFF; when it falls to
  `xon_at`, for XON.  The request travels back to the transmitter through
  a second `latency`-cycle pipe (the NFC message on the reverse lane), and
  the transmitter stops while XOFF is in effect; the near FIFO fills, and
  rx.tready falls: the sending kernel's router stalls, nothing is lost.
- Headroom: after the level first reaches xoff_at (in link cycle t) the
  transmitter may still send in cycles t-latency .. t+latency beats the
  level does not count yet: at most 2 x latency + 1 (`headroom`), so
  xoff_at <= far_depth - headroom keeps the link lossless (the level
  rises by at most one per cycle, and the writer's view of the level is
  never below the true one).
- Back-pressure bursts at the receiving end: in B's domain an LFSR
  (`seed`, 16 bits, x^16+x^14+x^13+x^11+1) steps every `burst` cycles and
  stalls the far FIFO's reader while its low byte is below duty x 256,
  i.e. about `duty` of the time, in bursts of whole multiples of `burst`
  cycles; a stall only keeps a new beat off tx, a beat already offered
  stays until taken (AXI4-Stream).
- The output register (ap_clk) holds tx's beat until tready, so tvalid
  never falls without a transfer even when B's enable does.

Parameters (all elaboration-time; the defaults are one real link):
`latency` (55), `link_ratio` (6103/6250), `a_ratio` and `b_ratio` (1/1),
`near_depth` (16), `far_depth` (the power of two >= 4 headrooms: 512 at
latency 55), `xoff_at` (far_depth - headroom: 401), `xon_at` (one
headroom: 111, so the beats left in the FIFO cover the XON's round trip
and the reader does not starve), `seed` (0xACE1), `duty` (0.25), `burst`
(16 cycles), `flow_control` (True).  Bad values raise ValueError.

Status outputs for the harness: `drops` (beats lost at the far FIFO: 0 on
a flow-controlled link), `fill` (the far FIFO's level, link side) and
`xoff` (the transmitter is stopped).  With `flow_control=False` the
transmitter ignores XOFF: a link that drops, for tests that must see loss.
"""

from fractions import Fraction

from pymtl3 import *

from .AsyncFifoRTL import AsyncFifoRTL, check_depth
from .axi import STREAM_DATA_BITS, AxisMasterIfc, AxisSlaveIfc

# The Aurora payload rate in 512-bit beats per 200 MHz kernel cycle,
# 100 Gb/s / 102.4 Gb/s = 0.9765625, less ~30 ppm: the two sides' reference
# clocks are independent (GT reference clocks are specified to +-100 ppm).
LINK_RATIO = ( 6103, 6250 )
AURORA_CORE_LATENCY = 55        # user-clock cycles through the core (PG074)
LFSR_TAPS = 0xB400              # Galois form of x^16 + x^14 + x^13 + x^11 + 1


def mk_axis_beat( data_bits=STREAM_DATA_BITS ):
  return mk_bitstruct( f"AxisBeat_{data_bits}", {
    "data": mk_bits( data_bits ), "keep": mk_bits( data_bits // 8 ), "last": Bits1 } )


def headroom( latency ):
  """Beats a far FIFO must still take after its level reaches xoff_at."""
  return 2 * latency + 1


def _ratio( who, name, r ):
  try:
    num, den = int( r[0] ), int( r[1] )
  except ( TypeError, ValueError, IndexError ):
    raise ValueError( f"{who}: {name}={r!r} is not a pair (num, den)" ) from None
  if not 1 <= num <= den:
    raise ValueError( f"{who}: {name}={num}/{den} must be a ratio in (0, 1]" )
  return num, den


class ClockEnableRTL( Component ):
  """`en` high num times per den cycles, spread evenly (a phase
  accumulator: acc += num; en when it passes den)."""

  def construct( s, num, den, phase=0 ):
    num, den = _ratio( "ClockEnableRTL", "ratio", ( num, den ) )
    if not 0 <= phase < den:
      raise ValueError( f"ClockEnableRTL: phase={phase} must be in [0, {den})" )
    T = mk_bits( ( 2 * den ).bit_length() )
    NUM, DEN, LIM = T( num ), T( den ), T( den - num )

    s.en = OutPort()
    s.acc = Wire( T )

    @update
    def up_clock_enable():
      s.en @= s.acc >= LIM

    @update_ff
    def up_clock_enable_ff():
      if s.reset:
        s.acc <<= phase
      elif s.acc >= LIM:
        s.acc <<= s.acc + NUM - DEN
      else:
        s.acc <<= s.acc + NUM

  def line_trace( s ):
    return "|" if s.en else "."


class BurstStallRTL( Component ):
  """`stall` in bursts: a 16-bit LFSR steps every `burst` enabled cycles;
  stall while its low byte is below duty x 256."""

  def construct( s, seed, duty, burst ):
    if not isinstance( seed, int ) or not 1 <= seed < 1 << 16:
      raise ValueError( f"BurstStallRTL: seed={seed!r} must be in 1 .. 65535 (an LFSR never leaves 0)" )
    if not 0 <= duty < 1:
      raise ValueError( f"BurstStallRTL: duty={duty!r} must be in [0, 1) (1 stalls forever)" )
    if not isinstance( burst, int ) or burst < 1:
      raise ValueError( f"BurstStallRTL: burst={burst!r} must be an int >= 1" )
    TH = Bits9( int( Fraction( duty ) * 256 ) )
    C = mk_bits( max( 1, ( burst - 1 ).bit_length() ) )
    END = C( burst - 1 )

    s.en = InPort()
    s.stall = OutPort()
    s.lfsr = Wire( Bits16 )
    s.cnt = Wire( C )

    @update
    def up_burst_stall():
      s.stall @= zext( s.lfsr[ 0:8 ], 9 ) < TH

    @update_ff
    def up_burst_stall_ff():
      if s.reset:
        s.lfsr <<= seed
        s.cnt <<= 0
      elif s.en:
        if s.cnt == END:
          s.cnt <<= 0
          if s.lfsr[0]:
            s.lfsr <<= ( s.lfsr >> 1 ) ^ Bits16( LFSR_TAPS )
          else:
            s.lfsr <<= s.lfsr >> 1
        else:
          s.cnt <<= s.cnt + 1


class LinkModelRTL( Component ):

  def construct( s, latency=AURORA_CORE_LATENCY, link_ratio=LINK_RATIO, a_ratio=( 1, 1 ),
                 b_ratio=( 1, 1 ), near_depth=16, far_depth=None, xoff_at=None, xon_at=None,
                 seed=0xACE1, duty=0.25, burst=16, flow_control=True,
                 data_bits=STREAM_DATA_BITS ):
    who = "LinkModelRTL"
    if not isinstance( latency, int ) or latency < 1:
      raise ValueError( f"{who}: latency={latency!r} must be an int >= 1 (link cycles)" )
    H = headroom( latency )
    if far_depth is None:       # room for XOFF three headrooms up, XON one headroom up
      far_depth = 1 << ( 4 * H - 1 ).bit_length()
    check_depth( who + " near_depth", near_depth )
    check_depth( who + " far_depth", far_depth )
    if xoff_at is None:
      xoff_at = far_depth - H
    if not 1 <= xoff_at <= far_depth - H:
      raise ValueError( f"{who}: xoff_at={xoff_at} must be in 1 .. far_depth - (2 x latency + 1)"
                        f" = {far_depth - H}, or the beats in flight after XOFF overflow the far"
                        f" FIFO" )
    if xon_at is None:
      xon_at = min( H, xoff_at - 1 )
    if not 0 <= xon_at < xoff_at:
      raise ValueError( f"{who}: xon_at={xon_at} must be in 0 .. xoff_at - 1 = {xoff_at - 1}" )
    s.params = dict( latency=latency, far_depth=far_depth, xoff_at=xoff_at, xon_at=xon_at,
                     near_depth=near_depth, headroom=H )
    Beat = mk_axis_beat( data_bits )
    P = mk_bits( far_depth.bit_length() )
    XOFF, XON = P( xoff_at ), P( xon_at )
    FC = Bits1( 1 if flow_control else 0 )

    s.rx = AxisSlaveIfc( data_bits )
    s.tx = AxisMasterIfc( data_bits )
    s.drops = OutPort( Bits32 )
    s.fill = OutPort( P )
    s.xoff = OutPort()

    s.ce_a = ClockEnableRTL( *_ratio( who, "a_ratio", a_ratio ) )
    s.ce_l = ClockEnableRTL( *_ratio( who, "link_ratio", link_ratio ) )
    s.ce_b = ClockEnableRTL( *_ratio( who, "b_ratio", b_ratio ) )
    s.near = AsyncFifoRTL( Beat, near_depth )
    s.far = AsyncFifoRTL( Beat, far_depth )
    s.bursts = BurstStallRTL( seed, duty, burst )

    # rx -> near FIFO (A's domain)
    s.near.w_en //= s.ce_a.en
    s.near.r_en //= s.ce_l.en
    s.near.enq.val //= s.rx.tvalid
    s.near.enq.rdy //= s.rx.tready
    s.near.enq.msg.data //= s.rx.tdata
    s.near.enq.msg.keep //= s.rx.tkeep
    s.near.enq.msg.last //= s.rx.tlast

    # the link's domain: transmitter, the two latency pipes, XOFF/XON
    s.far.w_en //= s.ce_l.en
    s.far.r_en //= s.ce_b.en
    s.fwd_val = [ Wire() for _ in range( latency ) ]
    s.fwd_beat = [ Wire( Beat ) for _ in range( latency ) ]
    s.rev = [ Wire() for _ in range( latency ) ]
    s.xoff_req = Wire()
    s.xoff_seen = Wire()
    s.lost = Wire()
    s.far.enq.val //= s.fwd_val[ latency - 1 ]
    s.far.enq.msg //= s.fwd_beat[ latency - 1 ]
    s.fill //= s.far.w_level
    s.xoff //= s.xoff_seen

    @update
    def up_link_comb():
      s.xoff_seen @= s.rev[ latency - 1 ] & FC
      s.near.deq.rdy @= ~s.xoff_seen
      s.lost @= s.ce_l.en & s.fwd_val[ latency - 1 ] & ~s.far.enq.rdy

    @update_ff
    def up_link_ff():
      if s.reset:
        s.xoff_req <<= 0
        s.drops <<= 0
        for i in range( latency ):
          s.fwd_val[i] <<= 0
          s.rev[i] <<= 0
      elif s.ce_l.en:
        s.fwd_val[0] <<= s.near.deq.val & ~s.xoff_seen
        s.fwd_beat[0] <<= s.near.deq.msg
        s.rev[0] <<= s.xoff_req
        for i in range( 1, latency ):
          s.fwd_val[i] <<= s.fwd_val[ i - 1 ]
          s.fwd_beat[i] <<= s.fwd_beat[ i - 1 ]
          s.rev[i] <<= s.rev[ i - 1 ]
        if s.far.w_level >= XOFF:
          s.xoff_req <<= 1
        elif s.far.w_level <= XON:
          s.xoff_req <<= 0
        if s.lost:
          s.drops <<= s.drops + 1

    # far FIFO -> burst stall -> output register (ap_clk) -> tx
    s.bursts.en //= s.ce_b.en
    s.out_full = Wire()
    s.out_beat = Wire( Beat )
    s.tx.tvalid //= s.out_full
    s.tx.tdata //= s.out_beat.data
    s.tx.tkeep //= s.out_beat.keep
    s.tx.tlast //= s.out_beat.last

    @update
    def up_link_out_comb():
      s.far.deq.rdy @= ( ~s.out_full | s.tx.tready ) & ~s.bursts.stall

    @update_ff
    def up_link_out_ff():
      if s.reset:
        s.out_full <<= 0
      elif s.far.deq.val & s.far.deq.rdy:
        s.out_full <<= 1
        s.out_beat <<= s.far.deq.msg
      elif s.tx.tready:
        s.out_full <<= 0

  def line_trace( s ):
    return ( f"{s.near.line_trace()}>{'X' if s.xoff_seen else ' '}"
             f"{''.join( '=' if v else '-' for v in s.fwd_val )}>{s.far.line_trace()}"
             f"{'s' if s.bursts.stall else ' '}" )
