"""An AXI4 slave in front of one channel of a memory model: the
co-simulation's side of an `m_axi` port (the memory behind a kernel master
is a `units.memory.MemoryRTL` channel).

Ports:
  axi    the AXI4 slave: data width 16 * spec.word_elems bits.
  req    `MemReq` to the memory channel: row = (addr - base) / word bytes.
  resp   `MemResp` from it, one per request in request order.
  base   the buffer's byte address in the slave's address space.
  fail   a beat issued to the memory while fail is 1 answers SLVERR (the
         access still happens: the error tests use it; a write burst
         answers SLVERR if any of its beats did).
  bad    sticky (until reset): a beat was not one this slave serves (see
         below); its response is SLVERR and a write beat writes nothing.

Served: INCR bursts of 1..256 beats of the full word size (arsize/awsize =
log2 of the word's bytes) at word-aligned addresses inside the memory
(offset / word bytes < 2^row_bits), not crossing a 4 KB page, id 0, a write
burst's last beat with wlast.  Anything else (FIXED or WRAP bursts, narrow
sizes, unaligned or out-of-range addresses, a page crossing, a non-zero id,
a wlast in the wrong place, a byte strobe that covers half an FP16
element) still takes and answers every beat (a read reads some row, a write
stores nothing), answers SLVERR and sets `bad`, so a test sees it and
nothing hangs.  A burst whose type is wrong keeps walking up by one word.

Hardware: one register each for the AR, AW and W channels (AW and W are
taken independently, in either order; a write beat issues when both are
held), a round-robin choice between a read beat and a write beat, and a
FIFO of `spec.outstanding` tags (read or write, the burst's last beat, an
error) that pairs each memory response with its channel.  Read responses
leave through the R register (rlast on a burst's last beat); a write
burst's responses are absorbed but its last one, which leaves through the B
register (SLVERR if any of its beats failed).  R and B are served in the
memory's order: a B the master does not take holds the R behind it.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..config import FP16_BITS
from ..lib.fifo import FifoRTL
from .axi import BURST_INCR, MEM_ADDR_BITS, PAGE_BYTES, RESP_OKAY, RESP_SLVERR, AxiSlaveIfc
from .MemAxiMasterRTL import word_shift

PAGE_BITS = PAGE_BYTES.bit_length() - 1


class AxiMemSlaveRTL( Component ):

  def construct( s, spec ):
    SH = word_shift( spec )
    E, D = spec.word_elems, FP16_BITS * spec.word_elems
    RB, A = spec.row_bits, MEM_ADDR_BITS
    Tag = mk_bitstruct( "AxiSlaveTag", { "wr": Bits1, "last": Bits1, "err": Bits1 } )
    SW = PAGE_BITS + 9                        # a page offset plus 256 beats of up to 4 KB
    Span = mk_bits( SW )
    LW = SW - SH                              # a burst length's bits in bytes
    page_end = Span( PAGE_BYTES )
    step = mk_bits( A )( 1 << SH )
    one_beat = Span( 1 << SH )
    Low = mk_bits( SH )
    TOP = SH + RB                             # an offset's bits inside the memory
    assert TOP < A, ( SH, RB )

    s.axi  = AxiSlaveIfc( A, D )
    s.req  = SendIfcRTL( spec.types["Req"] )
    s.resp = RecvIfcRTL( spec.types["Resp"] )
    s.base = InPort( A )
    s.fail = InPort()
    s.bad  = OutPort()

    s.tags = FifoRTL( Tag, spec.outstanding )

    s.ar_v, s.ar_addr, s.ar_left, s.ar_bad = Wire(), Wire( A ), Wire( 8 ), Wire()
    s.aw_v, s.aw_addr, s.aw_left, s.aw_bad = Wire(), Wire( A ), Wire( 8 ), Wire()
    s.w_v, s.w_data, s.w_strb, s.w_last = Wire(), Wire( D ), Wire( D // 8 ), Wire()
    s.r_v, s.r_data, s.r_resp, s.r_last = Wire(), Wire( D ), Wire( 2 ), Wire()
    s.b_v, s.b_resp = Wire(), Wire( 2 )
    s.b_acc   = Wire()               # a beat of the current write burst failed
    s.last_wr = Wire()               # the last beat issued was a write (round robin)

    s.ar_bad_in = Wire()             # the AR / AW offered now is not served
    s.aw_bad_in = Wire()
    s.ar_span = Wire( Span )         # page offset + burst bytes
    s.aw_span = Wire( Span )
    s.go_rd, s.go_wr = Wire(), Wire()
    s.issue = Wire()
    s.cur   = Wire( A )              # the issued beat's address
    s.off   = Wire( A )              # its offset from base
    s.beat_bad = Wire()
    s.e_lo  = [ Wire() for _ in range( E ) ]
    s.e_hi  = [ Wire() for _ in range( E ) ]
    s.e_and = [ Wire() for _ in range( E ) ]
    s.e_xor = [ Wire() for _ in range( E ) ]
    s.e_strb = Wire( E )             # the element strobes of the W beat
    s.half   = Wire( E )             # elements whose two byte strobes differ
    for k in range( E ):
      s.e_lo[k] //= s.w_strb[ 2*k ]
      s.e_hi[k] //= s.w_strb[ 2*k+1 ]
      s.e_strb[k] //= s.e_and[k]
      s.half[k] //= s.e_xor[k]
    s.take_rsp = Wire()

    s.axi.rvalid //= s.r_v
    s.axi.rdata  //= s.r_data
    s.axi.rresp  //= s.r_resp
    s.axi.rlast  //= s.r_last
    s.axi.rid    //= 0
    s.axi.bvalid //= s.b_v
    s.axi.bresp  //= s.b_resp
    s.axi.bid    //= 0
    s.req.msg.data //= s.w_data

    @update
    def up_axis_check():
      # a burst's bytes: (len + 1) << size, for the served size
      s.ar_span @= zext( s.axi.araddr[ 0:PAGE_BITS ], SW ) + \
                   concat( zext( s.axi.arlen, LW ), Low( 0 ) ) + one_beat
      s.aw_span @= zext( s.axi.awaddr[ 0:PAGE_BITS ], SW ) + \
                   concat( zext( s.axi.awlen, LW ), Low( 0 ) ) + one_beat
      s.ar_bad_in @= ( s.axi.arburst != BURST_INCR ) | ( s.axi.arsize != SH ) | \
                     ( s.axi.arid != 0 ) | ( s.ar_span > page_end )
      s.aw_bad_in @= ( s.axi.awburst != BURST_INCR ) | ( s.axi.awsize != SH ) | \
                     ( s.axi.awid != 0 ) | ( s.aw_span > page_end )
      for k in range( E ):
        s.e_and[k] @= s.e_lo[k] & s.e_hi[k]
        s.e_xor[k] @= s.e_lo[k] ^ s.e_hi[k]

    @update
    def up_axis_issue():
      s.go_wr @= s.aw_v & s.w_v & ( ~s.ar_v | ~s.last_wr )
      s.go_rd @= s.ar_v & ~s.go_wr
      s.req.val @= ( s.go_rd | s.go_wr ) & s.tags.enq.rdy
      s.issue @= ( s.go_rd | s.go_wr ) & s.tags.enq.rdy & s.req.rdy
      if s.go_wr:
        s.cur @= s.aw_addr
      else:
        s.cur @= s.ar_addr
      s.off @= s.cur - s.base
      if s.go_wr:
        s.beat_bad @= s.aw_bad | ( s.w_last != ( s.aw_left == 0 ) ) | ( s.half != 0 ) | \
                      ( s.off[ 0:SH ] != 0 ) | ( s.off[ TOP:A ] != 0 )
      else:
        s.beat_bad @= s.ar_bad | ( s.off[ 0:SH ] != 0 ) | ( s.off[ TOP:A ] != 0 )
      s.req.msg.wr @= s.go_wr
      s.req.msg.row @= s.off[ SH:TOP ]
      if s.go_wr & ~s.beat_bad:
        s.req.msg.strb @= s.e_strb
      else:
        s.req.msg.strb @= 0
      s.tags.enq.val @= s.issue
      s.tags.enq.msg.wr @= s.go_wr
      if s.go_wr:
        s.tags.enq.msg.last @= s.aw_left == 0
      else:
        s.tags.enq.msg.last @= s.ar_left == 0
      s.tags.enq.msg.err @= s.beat_bad | s.fail
      s.axi.arready @= ~s.ar_v | ( s.issue & s.go_rd & ( s.ar_left == 0 ) )
      s.axi.awready @= ~s.aw_v | ( s.issue & s.go_wr & ( s.aw_left == 0 ) )
      s.axi.wready  @= ~s.w_v | ( s.issue & s.go_wr )

    @update
    def up_axis_resp():
      if s.tags.deq.msg.wr:
        s.resp.rdy @= s.tags.deq.val & ( ~s.tags.deq.msg.last | ~s.b_v | s.axi.bready )
      else:
        s.resp.rdy @= s.tags.deq.val & ( ~s.r_v | s.axi.rready )
      s.take_rsp @= s.resp.val & s.resp.rdy
      s.tags.deq.rdy @= s.resp.val & s.resp.rdy

    @update_ff
    def up_axis_ff():
      if s.reset:
        s.ar_v <<= 0
        s.aw_v <<= 0
        s.w_v <<= 0
        s.r_v <<= 0
        s.b_v <<= 0
        s.b_acc <<= 0
        s.last_wr <<= 0
        s.bad <<= 0
      else:
        if s.axi.arvalid & s.axi.arready:
          s.ar_v <<= 1
          s.ar_addr <<= s.axi.araddr
          s.ar_left <<= s.axi.arlen
          s.ar_bad <<= s.ar_bad_in
        elif s.issue & s.go_rd:
          if s.ar_left == 0:
            s.ar_v <<= 0
          else:
            s.ar_addr <<= s.ar_addr + step
            s.ar_left <<= s.ar_left - 1
        if s.axi.awvalid & s.axi.awready:
          s.aw_v <<= 1
          s.aw_addr <<= s.axi.awaddr
          s.aw_left <<= s.axi.awlen
          s.aw_bad <<= s.aw_bad_in
        elif s.issue & s.go_wr:
          if s.aw_left == 0:
            s.aw_v <<= 0
          else:
            s.aw_addr <<= s.aw_addr + step
            s.aw_left <<= s.aw_left - 1
        if s.axi.wvalid & s.axi.wready:
          s.w_v <<= 1
          s.w_data <<= s.axi.wdata
          s.w_strb <<= s.axi.wstrb
          s.w_last <<= s.axi.wlast
        elif s.issue & s.go_wr:
          s.w_v <<= 0
        if s.issue:
          s.last_wr <<= s.go_wr
          if s.beat_bad:
            s.bad <<= 1

        if s.take_rsp & ~s.tags.deq.msg.wr:
          s.r_v <<= 1
          s.r_data <<= s.resp.msg.data
          s.r_last <<= s.tags.deq.msg.last
          if s.tags.deq.msg.err:
            s.r_resp <<= RESP_SLVERR
          else:
            s.r_resp <<= RESP_OKAY
        elif s.axi.rready:
          s.r_v <<= 0
        if s.take_rsp & s.tags.deq.msg.wr & s.tags.deq.msg.last:
          s.b_v <<= 1
          if s.tags.deq.msg.err | s.b_acc:
            s.b_resp <<= RESP_SLVERR
          else:
            s.b_resp <<= RESP_OKAY
        elif s.axi.bready:
          s.b_v <<= 0
        if s.take_rsp & s.tags.deq.msg.wr:
          s.b_acc <<= ~s.tags.deq.msg.last & ( s.b_acc | s.tags.deq.msg.err )

  def line_trace( s ):
    ch = ( "ar" if s.ar_v else "  " ) + ( "aw" if s.aw_v else "  " ) + ( "w" if s.w_v else " " )
    out = ( "r" if s.r_v else " " ) + ( "b" if s.b_v else " " )
    return f"({ch}|{s.tags.line_trace()}|{out}{'!' if s.bad else ' '})"
