"""The write engine of one memory (datapath of `DMARTL`): register entries
from rf_rd_resp become memory writes, and every acknowledgement is counted.

An entry waits in the entry buffer and leaves in beats of S slots; the
slots of a beat are at word addresses wa, wa + stride, ... (plain write:
stride 1, a slot is a word, all strobes; transposed write: stride EW, a
slot is one element, replicated across the word and strobed by `strb`),
and the S addresses of a beat fall in S distinct channels (S from
`DmaGeometry.write_slots`).  Each channel takes its slot when its req is
ready, independently; the next beat starts when every slot of this one has
gone, and the entry buffer takes the next entry (of `n_entries`) in the cycle its
last beat completes.  The write is over when all `n_acks` responses have come back.
`DMAWriteCL` is the same engine on Python values.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..fpu.msgs import FP16
from ..memory.msgs import strb_type
from .DMAReadRTL import AddrT, check_channels
from .streams import geometry, log2


def write_sizes( cfg, spec, tr ):
  """(C, S_n, S_t): channels, slots of a plain and of a transposed beat."""
  g = geometry( cfg )
  C = spec.channels
  S_n = g.write_slots( C, False )
  return C, S_n, ( g.write_slots( C, True ) if tr else S_n )


class DMAWriteRTL( Component ):

  def construct( s, cfg, spec, tr ):
    check_channels( spec )
    g = geometry( cfg )
    d, EW = g.d, g.entry_words
    C, S_n, S_t = write_sizes( cfg, spec, tr )
    S = max( S_n, S_t )
    logC, logSn, logSt = log2( C ), log2( S_n ), log2( S_t )
    RB = spec.row_bits
    T = spec.types
    B_n, B_t = EW // S_n, d // S_t
    EWP = max( 2, EW )                # word array padded: index >= 1 bit
    IW, EIW = log2( EWP ), log2( d )
    XT = Bits32
    IdxT = mk_bits( logC )
    BeatT = mk_bits( max( 1, ( max( B_n, B_t ) - 1 ).bit_length() ) )
    SlotT = mk_bits( S )
    AW = AddrT.nbits
    ALL_N, ALL_T = SlotT( ( 1 << S_n ) - 1 ), SlotT( ( 1 << S_t ) - 1 )
    ELEMS, Word, Strb = g.word_elems, spec.Word, strb_type( g.word_elems )
    ALL_ELEMS = Strb( spec.all_elems )

    s.start = InPort()
    s.wa0 = InPort( AddrT )          # word of the first slot
    s.tr = InPort()
    s.strb = InPort( Strb )          # transposed: the element's strobe
    s.n_acks = InPort( AddrT )
    s.n_entries = InPort( AddrT )    # entries to take from rf_rd_resp
    s.rd_val = InPort()
    s.rd_rdy = OutPort()
    s.rd_data = [ InPort( FP16 ) for _ in range( d ) ]
    s.req = [ SendIfcRTL( T["Req"] ) for _ in range( C ) ]
    s.resp = [ RecvIfcRTL( T["Resp"] ) for _ in range( C ) ]
    s.busy = OutPort()
    s.finish = OutPort()

    s.busy_r = Wire()
    s.tr_r = Wire()
    s.strb_r = Wire( Strb )
    s.full = Wire()
    s.beat = Wire( BeatT )
    s.pending = Wire( SlotT )
    s.wa = Wire( AddrT )
    s.acks = Wire( AddrT )
    s.left = Wire( AddrT )
    s.ebuf = [ Wire( FP16 ) for _ in range( d ) ]
    s.eword = [ Wire( Word ) for _ in range( EWP ) ]
    for w in range( EWP ):
      for e in range( ELEMS ):
        s.eword[w][ 16 * e:16 * e + 16 ] //= s.ebuf[ w * ELEMS + e ] if w < EW else FP16( 0 )

    s.slot_addr = [ Wire( AddrT ) for _ in range( S ) ]
    s.slot_elem = [ Wire( FP16 ) for _ in range( S ) ]
    s.slot_rep = [ Wire( Word ) for _ in range( S ) ]
    s.slot_word = [ Wire( Word ) for _ in range( S ) ]
    for j in range( S ):
      for e in range( ELEMS ):
        s.slot_rep[j][ 16 * e:16 * e + 16 ] //= s.slot_elem[j]
    s.off_t = [ Wire( AddrT ) for _ in range( S ) ]
    s.off_n = [ Wire( AddrT ) for _ in range( S ) ]
    for j in range( S ):
      s.off_t[j] //= AddrT( j * EW )
      s.off_n[j] //= AddrT( j )
    s.sent = [ Wire() for _ in range( S ) ]
    s.resp_fire = [ Wire() for _ in range( C ) ]
    s.pend_next = Wire( SlotT )
    s.beat_done = Wire()
    s.last_beat = Wire()
    s.nack = Wire( AddrT )
    s.load = Wire()
    s.busy //= s.busy_r

    @update
    def up_write_slots():
      for j in range( S ):
        if s.tr_r:
          s.slot_addr[j] @= s.wa + s.off_t[j]
          s.slot_elem[j] @= s.ebuf[ trunc( ( zext( s.beat, 32 ) << logSt ) + XT( j ), EIW ) ]
          s.slot_word[j] @= s.slot_rep[j]
        else:
          s.slot_addr[j] @= s.wa + s.off_n[j]
          s.slot_elem[j] @= 0
          s.slot_word[j] @= s.eword[ trunc( ( zext( s.beat, 32 ) << logSn ) + XT( j ), IW ) ]

    @update
    def up_write_req():
      for c in range( C ):
        s.req[c].val @= 0
        s.req[c].msg.wr @= 1
        s.req[c].msg.row @= 0
        s.req[c].msg.strb @= 0
        s.req[c].msg.data @= 0
        for j in range( S ):
          if s.pending[j] & ( s.slot_addr[j][ 0:logC ] == IdxT( c ) ):
            s.req[c].val @= s.busy_r & s.full
            s.req[c].msg.row @= s.slot_addr[j][ logC:logC + RB ]
            s.req[c].msg.data @= s.slot_word[j]
            if s.tr_r:
              s.req[c].msg.strb @= s.strb_r
            else:
              s.req[c].msg.strb @= ALL_ELEMS

    # A block of its own: with `sent` (which reads req.rdy) in up_write_req,
    # Verilator sees req.msg depend on req.rdy, and the AXI master's rdy
    # depends on req.msg.wr, a combinational loop (UNOPTFLAT) once the 32
    # HBM channels' ports form one array
    @update
    def up_write_sent():
      for j in range( S ):
        s.sent[j] @= 0
      for c in range( C ):
        for j in range( S ):
          if s.pending[j] & ( s.slot_addr[j][ 0:logC ] == IdxT( c ) ):
            s.sent[j] @= s.busy_r & s.full & s.req[c].rdy

    @update
    def up_write_ctrl():
      s.pend_next @= s.pending
      for j in range( S ):
        if s.sent[j]:
          s.pend_next[j] @= 0
      s.beat_done @= s.busy_r & s.full & ( s.pend_next == 0 )
      if s.tr_r:
        s.last_beat @= s.beat == BeatT( B_t - 1 )
      else:
        s.last_beat @= s.beat == BeatT( B_n - 1 )
      s.rd_rdy @= s.busy_r & ( s.left != 0 ) & ( ~s.full | ( s.beat_done & s.last_beat ) )
      s.load @= s.rd_val & s.busy_r & ( s.left != 0 ) & ( ~s.full | ( s.beat_done & s.last_beat ) )
      s.nack @= 0
      for c in range( C ):
        s.resp[c].rdy @= s.busy_r
        s.resp_fire[c] @= s.busy_r & s.resp[c].val
        s.nack @= s.nack + zext( s.resp_fire[c], AW )
      s.finish @= s.busy_r & ( s.acks == 0 )

    @update_ff
    def up_write_ff():
      if s.reset:
        s.busy_r <<= 0
        s.full <<= 0
      elif s.start:
        s.busy_r <<= 1
        s.tr_r <<= s.tr
        s.strb_r <<= s.strb
        s.wa <<= s.wa0
        s.acks <<= s.n_acks
        s.left <<= s.n_entries
        s.full <<= 0
        s.beat <<= 0
        s.pending <<= 0
      else:
        if s.finish:
          s.busy_r <<= 0
        s.acks <<= s.acks - s.nack
        if s.beat_done:
          if s.tr_r:
            s.wa <<= s.wa + AddrT( S_t * EW )
          else:
            s.wa <<= s.wa + AddrT( S_n )
        if s.load:
          s.left <<= s.left - 1
          for k in range( d ):
            s.ebuf[k] <<= s.rd_data[k]
          s.full <<= 1
          s.beat <<= 0
          if s.tr_r:
            s.pending <<= ALL_T
          else:
            s.pending <<= ALL_N
        elif s.beat_done:
          if s.last_beat:
            s.full <<= 0
            s.pending <<= 0
          else:
            s.beat <<= s.beat + 1
            if s.tr_r:
              s.pending <<= ALL_T
            else:
              s.pending <<= ALL_N
        else:
          s.pending <<= s.pend_next

  def line_trace( s ):
    return f"{'W' if s.busy_r else ' '}{int( s.acks )}{'*' if s.full else ' '}"
