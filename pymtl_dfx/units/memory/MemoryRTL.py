"""A memory (HBM or DDR) at RTL: `spec.channels` MemChannelRTLs and the
host port's control (`ports` documents the boundary and the sharing).

The host port routes a word address to channel addr % channels, row
addr // channels, and remembers the channel of every request in flight
(`order`, a FIFO of `host_entries`) so that host responses leave in request
order: host_resp shows the response of the channel at the head of `order`.
"""

from pymtl3 import *

from ...lib.fifo import FifoRTL
from .MemChannelRTL import MemChannelRTL
from .ports import channel_bits, declare_ports


class MemoryRTL( Component ):

  def construct( s, spec, depth, host_entries=None ):
    host_entries = spec.outstanding if host_entries is None else host_entries
    T, H = declare_ports( s, spec, depth, host_entries )
    C, CB, RB = spec.channels, channel_bits( spec ), spec.row_bits
    HI = CB + RB                     # the host address's width
    Chan = mk_bits( max( 1, CB ) )

    s.chans = [ MemChannelRTL( spec, depth ) for _ in range( C ) ]
    s.order = FifoRTL( Chan, host_entries )
    s.h_chan = Wire( Chan )          # the host request's channel
    s.h_row  = Wire( spec.row_bits )
    s.h_rdy  = [ Wire() for _ in range( C ) ]     # channel c takes a host request
    s.r_val  = [ Wire() for _ in range( C ) ]     # channel c offers a host response
    s.r_data = [ Wire( T["Resp"] ) for _ in range( C ) ]

    for c in range( C ):
      s.chans[c].req  //= s.req[c]
      s.chans[c].resp //= s.resp[c]
      s.chans[c].host_req.msg.wr   //= s.host_req.msg.wr
      s.chans[c].host_req.msg.row  //= s.h_row
      s.chans[c].host_req.msg.strb //= s.host_req.msg.strb
      s.chans[c].host_req.msg.data //= s.host_req.msg.data
      s.h_rdy[c]  //= s.chans[c].host_req.rdy
      s.r_val[c]  //= s.chans[c].host_resp.val
      s.r_data[c] //= s.chans[c].host_resp.msg
    s.order.enq.msg //= s.h_chan

    if CB:
      @update
      def up_host_addr():
        s.h_chan @= s.host_req.msg.row[ 0:CB ]
        s.h_row  @= s.host_req.msg.row[ CB:HI ]
    else:
      # its own name: pymtl3 finds a block's source by name, and would take
      # the multi-channel block's above
      @update
      def up_host_addr_one_channel():
        s.h_chan @= 0
        s.h_row  @= s.host_req.msg.row

    @update
    def up_host_route():
      s.host_req.rdy @= s.order.enq.rdy & s.h_rdy[ s.h_chan ]
      s.order.enq.val @= s.host_req.val & s.order.enq.rdy & s.h_rdy[ s.h_chan ]
      for c in range( C ):
        s.chans[c].host_req.val @= s.host_req.val & s.order.enq.rdy & ( s.h_chan == Chan( c ) )

    @update
    def up_host_resp():
      s.host_resp.val @= s.order.deq.val & s.r_val[ s.order.deq.msg ]
      s.host_resp.msg @= s.r_data[ s.order.deq.msg ]
      s.order.deq.rdy @= s.order.deq.val & s.r_val[ s.order.deq.msg ] & s.host_resp.rdy
      for c in range( C ):
        s.chans[c].host_resp.rdy @= s.order.deq.val & ( s.order.deq.msg == Chan( c ) ) & \
                                    s.host_resp.rdy

  def line_trace( s ):
    chans = " ".join( c.line_trace() for c in s.chans )
    return f"{chans} h{s.host_req}{s.order.line_trace()}{s.host_resp}"
