"""ring_rx: AXI4-Stream frames from the previous card into the router's
ring_recv packets.

Beats 0 .. beats-2 of a packet are kept in registers; the packet is offered
to the router (`pkt.val`) while its last beat is on the bus, built from the
kept beats and that beat's tdata (`ring_frame.ring_layout`, the layout Tx
uses).  Back-pressure passes through: on a packet's last beat tready is the
router's `pkt.rdy`, so the beat (and with it the link) waits until the
packet can be delivered; earlier beats are always taken (they only fill
registers).  Nothing is dropped inside the kernel.

Framing errors (the packet size is fixed, so tlast must be on exactly the
last beat):
  - tlast early (on beat i < beats-1): the beats so far and this one are
    discarded; the next beat starts a packet.
  - tlast missing (beat beats-1 without tlast): the beats so far are
    discarded, and so is every beat up to and including the next tlast;
    the beat after it starts a packet.
Either way `error` is high for one cycle, the cycle after the offending
beat was taken (the kernel keeps it as the sticky `ring_frame` bit of the
`errors` register), and the receiver is back in step at the next frame
boundary the sender marks: a frame that lost its tlast takes the next
frame with it, every frame after that arrives whole.  tkeep is not
checked (the size is fixed; Aurora's framing interface checks each frame's
CRC).
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import SendIfcRTL

from ..units.router.msgs import mk_ring_packet
from .axi import STREAM_DATA_BITS, AxisSlaveIfc
from .ring_frame import field_of, ring_layout


class RingRxRTL( Component ):

  def construct( s, cfg, data_bits=STREAM_DATA_BITS ):
    L = ring_layout( cfg, data_bits )
    Packet = mk_ring_packet( cfg )
    nb = L.beats
    B = mk_bits( max( 1, ( nb - 1 ).bit_length() ) )
    Data = mk_bits( data_bits )
    LAST = B( nb - 1 )
    s.layout = L

    s.axis = AxisSlaveIfc( data_bits )
    s.pkt = SendIfcRTL( Packet )
    s.error = OutPort()

    s.kept = [ Wire( Data ) for _ in range( max( 1, nb - 1 ) ) ]   # beats 0 .. nb-2
    s.beat = Wire( B )              # the beat expected next
    s.hunting = Wire()              # discarding up to the next tlast
    s.at_last = Wire()
    s.fire = Wire()
    s.bad = Wire()                  # the beat taken now breaks the framing

    # the layout, as wires: the packet's fields are slices of the kept beats
    # and of the last beat on the bus
    for x in L.slots:
      src = s.axis.tdata if x.beat == nb - 1 else s.kept[ x.beat ]
      connect( field_of( s.pkt.msg, x )[ x.field_lo:x.field_lo + x.nbits ],
               src[ x.lo:x.lo + x.nbits ] )

    @update
    def up_ring_rx_comb():
      s.at_last @= s.beat == LAST
      s.pkt.val @= s.axis.tvalid & s.at_last & s.axis.tlast & ~s.hunting
      s.axis.tready @= s.hunting | ~s.at_last | s.pkt.rdy
      s.fire @= s.axis.tvalid & ( s.hunting | ~s.at_last | s.pkt.rdy )
      s.bad @= s.fire & ~s.hunting & ( s.axis.tlast ^ s.at_last )

    @update_ff
    def up_ring_rx_ff():
      if s.reset:
        s.beat <<= 0
        s.hunting <<= 0
        s.error <<= 0
      else:
        s.error <<= s.bad
        if s.fire:
          if s.hunting:
            s.hunting <<= ~s.axis.tlast
          elif s.at_last:
            s.hunting <<= ~s.axis.tlast    # tlast missing: hunt for it
            s.beat <<= 0
          elif s.axis.tlast:               # tlast early: start again
            s.beat <<= 0
          else:
            s.beat <<= s.beat + 1
      for i in range( nb - 1 ):
        if s.fire & ~s.hunting & ( s.beat == B( i ) ):
          s.kept[i] <<= s.axis.tdata

  def line_trace( s ):
    if s.hunting:
      return "h"
    return f"{int( s.beat )}{'!' if s.error else ' '}"
