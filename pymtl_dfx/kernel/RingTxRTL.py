"""ring_tx: the router's outgoing packets (ring_send) as AXI4-Stream frames.

A packet is taken into one register and leaves as `ring_layout(cfg).beats`
beats (`ring_frame`: the layout Tx and Rx share), tlast and the last
beat's tkeep on its last beat.  The register is refilled in the cycle its
last beat is taken, so back-to-back packets leave without a bubble (W = 64:
one packet per 3 cycles).  Back-pressure: while tready is low the beat
stays on the bus (AXI4-Stream: tvalid and the payload hold until taken)
and `pkt.rdy` stays low, so the router keeps its packet; nothing is
dropped.  `pkt.rdy` depends on tready in the cycle of a last beat (the
path a pipe register has; the router's ring_send.val does not depend on
its rdy, so there is no loop).
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL

from ..units.router.msgs import mk_ring_packet
from .axi import STREAM_DATA_BITS, AxisMasterIfc
from .ring_frame import field_of, ring_layout


class RingTxRTL( Component ):

  def construct( s, cfg, data_bits=STREAM_DATA_BITS ):
    L = ring_layout( cfg, data_bits )
    Packet = mk_ring_packet( cfg )
    nb = L.beats
    B = mk_bits( max( 1, ( nb - 1 ).bit_length() ) )
    Data, Keep = mk_bits( data_bits ), mk_bits( data_bits // 8 )
    LAST = B( nb - 1 )
    s.layout = L

    s.pkt = RecvIfcRTL( Packet )
    s.axis = AxisMasterIfc( data_bits )

    s.held = Wire( Packet )          # the packet being sent
    s.full = Wire()
    s.beat = Wire( B )              # the beat on the bus
    s.beats = [ Wire( Data ) for _ in range( nb ) ]
    s.at_last = Wire()
    s.take = Wire()

    # the layout, as wires: each beat's slices are the packet's fields
    for x in L.slots:
      connect( s.beats[ x.beat ][ x.lo:x.lo + x.nbits ],
               field_of( s.held, x )[ x.field_lo:x.field_lo + x.nbits ] )
    for b, lo, n in L.gaps():
      connect( s.beats[ b ][ lo:lo + n ], mk_bits( n )( 0 ) )

    @update
    def up_ring_tx_comb():
      s.at_last @= s.beat == LAST
      s.axis.tvalid @= s.full
      s.axis.tdata @= s.beats[ s.beat ]
      s.axis.tlast @= s.at_last
      if s.at_last:
        s.axis.tkeep @= Keep( L.last_keep )
      else:
        s.axis.tkeep @= Keep( L.all_keep )
      s.pkt.rdy @= ~s.full | ( s.axis.tready & s.at_last )
      s.take @= s.pkt.val & ( ~s.full | ( s.axis.tready & s.at_last ) )

    @update_ff
    def up_ring_tx_ff():
      if s.reset:
        s.full <<= 0
        s.beat <<= 0
      elif s.take:
        s.held <<= s.pkt.msg
        s.full <<= 1
        s.beat <<= 0
      elif s.full & s.axis.tready:
        if s.at_last:
          s.full <<= 0
          s.beat <<= 0
        else:
          s.beat <<= s.beat + 1

  def line_trace( s ):
    if not s.full:
      return " "
    return f"{int( s.beat )}{'*' if s.axis.tready else '#'}"
