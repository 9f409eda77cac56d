"""The ring at the kernel boundary: how a packet is framed on the 512-bit
AXI4-Stream (`ring_layout`, the one definition `RingTxRTL` and `RingRxRTL`
share) and why the ring stays lossless between cards (the flow-control
specification below; `rx_buffer_packets` is its number for a link that can
drop).

Framing
-------
A `RingPacket` (`units.router.msgs.mk_ring_packet`: src, idx, data[W])
travels as ceil(bits / 512) beats of one AXI4-Stream frame, tlast on its
last beat.  The packet is laid out as one little-endian byte string, beat
b carrying bytes 64b .. 64b+63 (byte j of a beat is tdata[8j+7:8j] and
tkeep bit j):

  bytes 0 .. 2W-1    data[k] at bytes 2k, 2k+1 (payload first, so with
                     W = 64 the two first beats are exactly 32 words each)
  bytes 2W, 2W+1     idx
  byte  2W+2         src

so W = 64 (1,048 bits) is 3 beats and the last carries 3 bytes: tkeep is
all ones on every beat but the last, where it marks the valid bytes
(0b111).  Unused bits of the last beat are 0.  The layout places every
field of the packet; a field it does not know is an error at
construction, not a field silently left behind.

Flow control (the ring is lossless at the kernel boundary)
---------------------------------------------------------
Link IP.  The kernel is built for Aurora 64B/66B (PG074) with native flow
control (NFC), the link DFX used, 4 lanes x 25.78125 Gb/s = 100 Gb/s of
payload, one Aurora link kernel per QSFP28 port, as pc2/Aurora-HLS
("AuroraFlow") packages it for the U280, built with its framing interface
(USE_FRAMING=1: tlast and tkeep cross the cable, each frame with a CRC),
because `RingRxRTL` finds packet boundaries by tlast: in Aurora's
streaming mode a lost beat would shift every later packet silently.  Not
UDP over the 100G MAC (XUP VNx): its receive path drops a packet when its
RX FIFO overflows (no back-pressure reaches the sender), and every card
needs a host-written socket table (IP, port, tdest) before the first
packet, one more thing to configure per ring position.

Inside the kernel.  ring_tx and ring_rx are AXI4-Stream with tready
back-pressure, and nothing inside the kernel drops a packet: `RingTxRTL`
holds a packet until its last beat is taken; `RingRxRTL` holds tready low
on a packet's last beat until the router takes the packet; the router
takes a packet only when its forward FIFO has room and its register-file
write is accepted, and never discards one (`units.router.RouterRTL`).  A
stall anywhere therefore propagates back as tready low, up to the Aurora
kernel's RX FIFO.

Across the cable.  The receiving Aurora kernel's RX FIFO (AuroraFlow's:
64 KB by default, beats of 64 bytes, written in the Aurora user clock's
domain and read in ap_clk's) asks the sending core to stop with an NFC
XOFF message when it reaches its programmable-full threshold (by default
half full) and to resume with XON at programmable-empty (one eighth).  The
sender stops within the NFC round trip, and the space above the threshold
absorbs what is still on the way (AuroraFlow's README: 16 KB of it were
needed on their cables).  `LinkModelRTL` models exactly this: its far FIFO,
XOFF/XON thresholds, and a headroom of 2 x latency + 1 beats.

A link that can drop.  Without flow control across the cable (UDP, or
Aurora without NFC) the receiver must buffer whatever its upstream
neighbour can send before the router takes it.  The router protocol bounds
that.  Take card c, its upstream neighbour u, and a sync of n words per
core on N cores, P = ceil(n / W) packets per segment.  Per sync u sends c
exactly (N-1)P packets (its own P and the (N-2)P it forwards: all but c's
own), and c's router takes exactly (N-1)P.  A core cannot send sync k+1's
packets until it has received all of sync k (it finishes k first, and the
router accepts the next SYNC only after `done`).  u cannot finish k+1
without c's own packets of k+1, which c sends only after finishing k.  So
while c is in sync k (or done with k-1 and not started k), u is at most in
sync k+1, and the packets waiting for c are those of sync k that c has not
taken plus those u has sent of k+1:
  - u's own P packets of k+1;
  - the packets of k+1 u forwards from the j cores upstream of it, u-1 ..
    u-j.  Core u-j can be in k+1 only once it has finished k, i.e. received
    the sync-k segments of u-j+1 .. u, which reach it through c: c has
    taken at least those j P packets of sync k.
Waiting: at most (N-1)P - jP + P + jP = N P.  So the receive buffer must
hold `rx_buffer_packets` = N x ceil(n_max / W) packets, n_max the largest
segment of any sync in the program (`largest_sync_words`; with syncs of
different sizes the same count with the largest P bounds every pair):
one synchronisation plus the neighbour's first packets of the next.  The
test (tests/kernel/test_ring_buffer.py) runs routers on links that never
refuse a packet, with a receiver that takes nothing for a while, and finds
exactly this maximum; random timings stay within it.
"""

import dataclasses

from ..lib.arith import ceil_div
from ..units.router.msgs import mk_ring_packet
from .axi import STREAM_DATA_BITS

# the packet's fields in stream order: the payload first, then the header
FIELD_ORDER = ( "data", "idx", "src" )


@dataclasses.dataclass( frozen=True )
class Slot:
  """Bits [lo, lo+nbits) of beat `beat` carry bits [field_lo, field_lo+nbits)
  of the packet field `field` (element `index` of a list field)."""
  field: str
  index: object         # int for a list field's element, else None
  beat: int
  lo: int
  nbits: int
  field_lo: int = 0


@dataclasses.dataclass( frozen=True )
class RingLayout:
  bits: int             # the packet's bits
  beats: int            # beats per packet
  last_keep: int        # tkeep of the last beat
  slots: tuple          # every Slot, in stream order
  data_bits: int = STREAM_DATA_BITS

  @property
  def all_keep( s ):
    return ( 1 << ( s.data_bits // 8 ) ) - 1

  def gaps( s ):
    """(beat, lo, nbits) of every run of beat bits no field uses (sent as 0)."""
    used = {}
    for x in s.slots:
      used.setdefault( x.beat, [] ).append( ( x.lo, x.lo + x.nbits ) )
    out = []
    for b in range( s.beats ):
      at = 0
      for lo, hi in sorted( used.get( b, [] ) ):
        if lo > at:
          out.append( ( b, at, lo - at ) )
        at = hi
      if at < s.data_bits:
        out.append( ( b, at, s.data_bits - at ) )
    return tuple( out )


def _elements( Packet ):
  fields = Packet.__bitstruct_fields__
  if set( fields ) != set( FIELD_ORDER ):
    raise ValueError( f"ring_layout: the packet's fields {sorted( fields )} are not the "
                      f"ones the layout places ({', '.join( FIELD_ORDER )})" )
  for name in FIELD_ORDER:
    ftype = fields[ name ]
    if isinstance( ftype, list ):
      for k, t in enumerate( ftype ):
        yield name, k, t.nbits
    else:
      yield name, None, ftype.nbits


def ring_layout( cfg, data_bits=STREAM_DATA_BITS ):
  """The packet of `cfg` on a `data_bits` stream: a RingLayout."""
  if data_bits % 8 or data_bits < 8:
    raise ValueError( f"ring_layout: a stream of {data_bits} bits is not whole bytes" )
  Packet = mk_ring_packet( cfg )
  slots, at = [], 0
  for name, index, nbits in _elements( Packet ):
    done = 0
    while done < nbits:            # a field across a beat boundary: two slots
      beat, lo = divmod( at, data_bits )
      n = min( nbits - done, data_bits - lo )
      slots.append( Slot( name, index, beat, lo, n, done ) )
      at += n
      done += n
    at = ceil_div( at, 8 ) * 8     # every field starts on a byte
  nbytes = at // 8
  beats = ceil_div( at, data_bits )
  last_bytes = nbytes - ( beats - 1 ) * ( data_bits // 8 )
  return RingLayout( at, beats, ( 1 << last_bytes ) - 1, tuple( slots ), data_bits )


def field_of( msg, slot ):
  """The signal (or value) of `msg` a slot carries: the whole field element."""
  f = getattr( msg, slot.field )
  return f[ slot.index ] if slot.index is not None else f


def packet_beats( cfg, pkt, data_bits=STREAM_DATA_BITS ):
  """[(tdata, tkeep, tlast)] of a packet value, as RingTxRTL sends it (for
  tests and for a model of the far side)."""
  L = ring_layout( cfg, data_bits )
  words = [ 0 ] * L.beats
  for x in L.slots:
    v = ( int( field_of( pkt, x ) ) >> x.field_lo ) & ( ( 1 << x.nbits ) - 1 )
    words[ x.beat ] |= v << x.lo
  return [ ( w, L.last_keep if b == L.beats - 1 else L.all_keep, int( b == L.beats - 1 ) )
           for b, w in enumerate( words ) ]


def beats_packet( cfg, datas, data_bits=STREAM_DATA_BITS ):
  """The packet value whose beats carry tdata `datas` (the inverse of
  `packet_beats`, as RingRxRTL reads it)."""
  L = ring_layout( cfg, data_bits )
  if len( datas ) != L.beats:
    raise ValueError( f"beats_packet: {len( datas )} beats, a packet is {L.beats}" )
  Packet = mk_ring_packet( cfg )
  fields = Packet.__bitstruct_fields__
  vals = { n: [ 0 ] * len( f ) if isinstance( f, list ) else 0 for n, f in fields.items() }
  for x in L.slots:
    v = ( int( datas[ x.beat ] ) >> x.lo ) & ( ( 1 << x.nbits ) - 1 )
    if x.index is None:
      vals[ x.field ] |= v << x.field_lo
    else:
      vals[ x.field ][ x.index ] |= v << x.field_lo
  return Packet( *( vals[ n ] for n in fields ) )


def rx_buffer_packets( cfg, words ):
  """Packets a card's receive buffer must hold when the link can drop: N x
  ceil(words / W) on N = cfg.cores cards, `words` the largest per-core
  segment of a sync (0 on one card: nothing travels)."""
  if cfg.cores == 1:
    return 0
  return cfg.cores * ceil_div( int( words ), cfg.router_words )


def rx_buffer_bytes( cfg, words, data_bits=STREAM_DATA_BITS ):
  """The same in bytes of a FIFO of stream beats (a packet takes whole beats)."""
  return rx_buffer_packets( cfg, words ) * ring_layout( cfg, data_bits ).beats * data_bits // 8


def largest_sync_words( gpt, cfg ):
  """The largest per-core segment any SYNC of the compiled GPT-2 moves on
  cfg.cores cards (the compiler's split of attention, projections and FFN,
  or with proj_row_split the whole residual width in whole entries)."""
  from ..compiler.partition import Partition
  p = Partition( gpt, cfg, cfg.cores )
  if p.row_split:     # proj_row_split: two all-reduces of full-width partials
    return ceil_div( gpt.n_embd, cfg.d ) * cfg.d
  return max( getattr( p, name ).seg for name in ( "attn", "attn_proj", "fc", "mlp_proj" ) )
