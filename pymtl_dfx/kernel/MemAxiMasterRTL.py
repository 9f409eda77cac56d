"""One memory channel of the core (the DMA's MemReq / MemResp port) as an
AXI4 master (`m_axi_hbmNN`, `m_axi_ddrN`).

Ports:
  req    `MemReq` from the DMA: wr, row, strb (one bit per FP16 element),
         data.  A request is taken when fewer than `outstanding` are in
         flight and the AXI channel register of its kind is free (or
         empties this cycle); req.rdy depends on req.msg.wr (the kind),
         never on req.val.
  resp   `MemResp`, one per request, in request order: the R beat's data,
         or 0 for a write (sent on the write's B: the word is in memory
         when the core sees its acknowledgement).  R and B go straight to
         resp: resp.val is rvalid (bvalid while writes are in flight), and
         rready (bready) is resp.rdy, so the core back-pressures the
         memory controller, which buffers its own responses.  resp.val
         does not depend on resp.rdy, so a core whose rdy depends on val
         (the DMA's read engine gathers a beat from several channels)
         makes no combinational cycle.
  base   the buffer's byte address (an argument register), stable during a
         run and aligned to a word (XRT aligns buffers to 4 KB).
  axi    the AXI4 master: data width 16 * spec.word_elems bits.
  error  1 for one cycle (the cycle after its handshake) when a B or R
         response is not OKAY; the response still goes back to the core
         (read data as returned, a write acknowledged), so nothing hangs
         and the kernel's sticky error bit tells the host.

Transactions: every request is one single-beat INCR transaction (len 0,
size = log2 of the word's bytes, burst INCR, id 0, wlast 1) at
base + row * word bytes.  A single word-aligned beat never crosses a 4 KB
page, so no transaction does.  Bursts would save no cycle here: the DMA
asks for one word per request and the AXI channels already carry one beat
a cycle.  Write strobes: FP16 element k's strobe bit drives byte strobes
2k and 2k+1.

Order: AXI orders the responses of one id within one kind (all our
transactions use id 0) but not reads against writes.  So the rule is:
up to `outstanding` requests (default spec.outstanding) are in flight
(taken and their R or B not yet taken by the core), all of one kind; a
request of the other kind waits until every one in flight (every B, or
every R) has been answered.  Then reads and writes complete in the order
the core issued them, a read after a write to the same row sees the
write, and a stream of one kind runs at one word per cycle when
`outstanding` covers the round trip: a request's slot is free again
latency + 4 cycles after it was taken behind an AxiMemSlaveRTL (2 of them
here: the AR/AW register and the in-flight count; 2 in the slave: its
AR/AW and R/B registers), so outstanding >= latency + 4 (the config's 64
against HBM's 25 cycles).  A kind switch costs one round trip.

Hardware: one address register shared by AR and AW (only one kind is on
the bus at a time), the W data/strobe register and the in-flight count; no
response buffer (the memory controller holds the responses until rready
or bready).  AW and W are presented together, each held (valid and
payload stable) until its own handshake, in whichever order the slave
takes them; the next write waits until both are taken.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..config import FP16_BITS
from .axi import BURST_INCR, MEM_ADDR_BITS, RESP_OKAY, AxiMasterIfc


class AxiConfigError( ValueError ):
  pass


def word_shift( spec ):
  """log2 of a memory word's bytes (AXI's size field); the word must be a
  power of two bytes, as AXI's data widths are."""
  nbytes = FP16_BITS * spec.word_elems // 8
  if spec.word_elems < 1 or nbytes & ( nbytes - 1 ):
    raise AxiConfigError( f"{spec.name}: a word of {spec.word_elems} FP16 elements is not a "
                          "power-of-two number of bytes (an AXI data width)" )
  return nbytes.bit_length() - 1


class MemAxiMasterRTL( Component ):

  def construct( s, spec, outstanding=None ):
    N = spec.outstanding if outstanding is None else outstanding
    if not isinstance( N, int ) or N < 1:
      raise AxiConfigError( f"MemAxiMasterRTL: outstanding={N!r} (a positive integer)" )
    SH = word_shift( spec )
    E, D = spec.word_elems, FP16_BITS * spec.word_elems
    Req, Resp = spec.types["Req"], spec.types["Resp"]
    A = MEM_ADDR_BITS
    CW = N.bit_length()
    Cnt, Low = mk_bits( CW ), mk_bits( SH )
    full = Cnt( N )
    RW = A - SH                  # the row's bits in an address

    s.req   = RecvIfcRTL( Req )
    s.resp  = SendIfcRTL( Resp )
    s.base  = InPort( A )
    s.axi   = AxiMasterIfc( A, D )
    s.error = OutPort()

    s.inflight = Wire( Cnt )     # taken, its R or B not yet taken by the core
    s.kind     = Wire()          # the kind in flight (1: writes)
    s.ar_v = Wire()
    s.aw_v = Wire()
    s.w_v  = Wire()
    s.addr   = Wire( A )         # AR's or AW's address
    s.w_data = Wire( D )
    s.w_strb = Wire( D // 8 )
    s.addr_in = Wire( A )
    s.bstrb   = Wire( D // 8 )   # the request's strobe in bytes
    s.free    = Wire()           # the channel register of the request's kind can load
    s.slot    = Wire()           # fewer than N in flight, and no kind switch pending
    s.take    = Wire()

    for k in range( E ):
      s.bstrb[ 2*k ]   //= s.req.msg.strb[ k ]
      s.bstrb[ 2*k+1 ] //= s.req.msg.strb[ k ]

    s.axi.araddr  //= s.addr
    s.axi.awaddr  //= s.addr
    s.axi.arvalid //= s.ar_v
    s.axi.awvalid //= s.aw_v
    s.axi.wvalid  //= s.w_v
    s.axi.wdata   //= s.w_data
    s.axi.wstrb   //= s.w_strb
    s.axi.arlen   //= 0
    s.axi.awlen   //= 0
    s.axi.arsize  //= SH
    s.axi.awsize  //= SH
    s.axi.arburst //= BURST_INCR
    s.axi.awburst //= BURST_INCR
    s.axi.arid    //= 0
    s.axi.awid    //= 0
    s.axi.wlast   //= 1

    @update
    def up_axim_addr():
      s.addr_in @= s.base + concat( zext( s.req.msg.row, RW ), Low( 0 ) )

    @update
    def up_axim_rdy():
      s.slot @= ( s.inflight < full ) & ( ( s.inflight == 0 ) | ( s.kind == s.req.msg.wr ) )
      if s.req.msg.wr:
        s.free @= ( ~s.aw_v | s.axi.awready ) & ( ~s.w_v | s.axi.wready )
      else:
        s.free @= ~s.ar_v | s.axi.arready
      s.req.rdy @= s.slot & s.free

    # apart from up_axim_rdy, so that Verilator sees req.rdy independent of req.val
    @update
    def up_axim_take():
      s.take @= s.req.val & s.slot & s.free

    # R and B go straight to the core, and the core's rdy straight back:
    # resp.val and resp.msg from the response channels only, rready and
    # bready from resp.rdy only (two blocks, so a core whose rdy depends on
    # val, as the DMA's read engine's does, makes no cycle)
    @update
    def up_axim_resp():
      if s.kind:
        s.resp.val @= s.axi.bvalid
        s.resp.msg.data @= 0
      else:
        s.resp.val @= s.axi.rvalid
        s.resp.msg.data @= s.axi.rdata

    # only the kind in flight is taken: a stray response of the other kind
    # is never mistaken for one
    @update
    def up_axim_ready():
      s.axi.rready @= s.resp.rdy & ~s.kind
      s.axi.bready @= s.resp.rdy & s.kind

    @update_ff
    def up_axim_ff():
      if s.reset:
        s.inflight <<= 0
        s.kind <<= 0
        s.ar_v <<= 0
        s.aw_v <<= 0
        s.w_v <<= 0
        s.error <<= 0
      else:
        if s.take & ~( s.resp.val & s.resp.rdy ):
          s.inflight <<= s.inflight + 1
        elif s.resp.val & s.resp.rdy & ~s.take:
          s.inflight <<= s.inflight - 1
        if s.take:
          s.kind <<= s.req.msg.wr
          s.addr <<= s.addr_in
        if s.take & ~s.req.msg.wr:
          s.ar_v <<= 1
        elif s.axi.arready:
          s.ar_v <<= 0
        if s.take & s.req.msg.wr:
          s.aw_v <<= 1
          s.w_v <<= 1
          s.w_data <<= s.req.msg.data
          s.w_strb <<= s.bstrb
        else:
          if s.axi.awready:
            s.aw_v <<= 0
          if s.axi.wready:
            s.w_v <<= 0
        # once per response: at its handshake (a stalled R or B is seen
        # on several cycles)
        s.error <<= ( s.axi.rvalid & s.axi.rready & ( s.axi.rresp != RESP_OKAY ) ) | \
                    ( s.axi.bvalid & s.axi.bready & ( s.axi.bresp != RESP_OKAY ) )

  def line_trace( s ):
    ar = "ar" if s.ar_v else "  "
    aw = ( "aw" if s.aw_v else "  " ) + ( "w" if s.w_v else " " )
    rb = "r" if s.axi.rvalid else ( "b" if s.axi.bvalid else " " )
    return f"{s.req}({ar}{aw}{rb}{int( s.inflight )}){s.resp}"
