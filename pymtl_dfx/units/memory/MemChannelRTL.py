"""One memory channel at RTL: `depth` rows of storage, the strobed write,
and the shared timing rule (`lib.rate_queue`) on its responses.

Two request ports, DMA (`req`) and host (`host_req`, row already the
channel's); the DMA has priority.  In the cycle a request is accepted the
channel reads its row (the word as stored before this cycle's write) or
writes the strobed elements of its row at the clock edge; the response
(the read word, or 0 for a write) enters the rate queue tagged with who
asked, and leaves on `resp` or `host_resp` `latency` cycles later at the
earliest, in order.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...config import FP16_BITS
from ...lib.rate_queue import RateQueueRTL
from .ports import channel_rule

Elem = mk_bits( FP16_BITS )


class MemChannelRTL( Component ):

  def construct( s, spec, depth ):
    Req, Resp, Word, E = spec.types["Req"], spec.types["Resp"], spec.Word, spec.word_elems
    ChanResp = mk_bitstruct( f"MemChanResp_{E}", { "host": Bits1, "data": Word } )
    IB = ( depth - 1 ).bit_length()
    s.req       = RecvIfcRTL( Req )
    s.resp      = SendIfcRTL( Resp )
    s.host_req  = RecvIfcRTL( Req )
    s.host_resp = SendIfcRTL( Resp )

    s.q = RateQueueRTL( ChanResp, channel_rule( spec ) )
    # storage: an unpacked array in Verilog, so a test memory lives inside
    # the translated (Verilated) model
    s.mem = [ Wire( Word ) for _ in range( depth ) ]

    s.sel     = Wire( Req )        # the request offered to the queue
    s.idx     = Wire( IB )         # its row modulo depth
    s.rd_word = Wire( Word )
    s.merged  = Wire( Word )       # the row with the strobed elements replaced
    s.old_e = [ Wire( Elem ) for _ in range( E ) ]
    s.new_e = [ Wire( Elem ) for _ in range( E ) ]
    s.out_e = [ Wire( Elem ) for _ in range( E ) ]
    for k in range( E ):
      lo, hi = k * FP16_BITS, ( k + 1 ) * FP16_BITS
      s.old_e[k] //= s.rd_word[ lo:hi ]
      s.new_e[k] //= s.sel.data[ lo:hi ]
      s.merged[ lo:hi ] //= s.out_e[k]
    s.idx //= s.sel.row[ 0:IB ]
    s.resp.msg.data //= s.q.send.msg.data
    s.host_resp.msg.data //= s.q.send.msg.data

    @update
    def up_chan_req():
      if s.req.val:
        s.sel @= s.req.msg
      else:
        s.sel @= s.host_req.msg
      s.q.recv.val @= s.req.val | s.host_req.val
      s.req.rdy @= s.q.recv.rdy
      s.host_req.rdy @= s.q.recv.rdy & ~s.req.val

    @update
    def up_chan_read():
      s.rd_word @= s.mem[ s.idx ]
      s.q.recv.msg.host @= ~s.req.val
      if s.sel.wr:
        s.q.recv.msg.data @= 0
      else:
        s.q.recv.msg.data @= s.rd_word

    @update
    def up_chan_merge():
      for k in range( E ):
        if s.sel.strb[k]:
          s.out_e[k] @= s.new_e[k]
        else:
          s.out_e[k] @= s.old_e[k]

    @update
    def up_chan_resp():
      s.resp.val @= s.q.send.val & ~s.q.send.msg.host
      s.host_resp.val @= s.q.send.val & s.q.send.msg.host
      if s.q.send.msg.host:
        s.q.send.rdy @= s.host_resp.rdy
      else:
        s.q.send.rdy @= s.resp.rdy

    @update_ff
    def up_chan_write():
      if s.q.recv.val & s.q.recv.rdy & s.sel.wr:
        s.mem[ s.idx ] <<= s.merged

  def line_trace( s ):
    return f"{s.req}{s.host_req}{s.q.line_trace()}{s.resp}{s.host_resp}"
