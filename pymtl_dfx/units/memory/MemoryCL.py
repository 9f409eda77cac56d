"""A memory at CL: MemoryRTL's behaviour on Python values, cycle-exact
(the same rate rule, `RateQueueCL`, the same DMA-first sharing and host
order; `ports` documents the boundary)."""

from collections import deque

from pymtl3 import *

from ...lib.rate_queue import RateQueueCL
from .ports import channel_bits, channel_rule, declare_ports
from .storage import ChannelStore


class MemoryCL( Component ):

  def construct( s, spec, depth, host_entries=None ):
    host_entries = spec.outstanding if host_entries is None else host_entries
    T, H = declare_ports( s, spec, depth, host_entries )
    C, CB = spec.channels, channel_bits( spec )
    Resp = T["Resp"]
    rule = channel_rule( spec )
    s.store = [ ChannelStore( depth ) for _ in range( C ) ]
    s.q = [ RateQueueCL( rule ) for _ in range( C ) ]   # items: (host?, word)
    s.order = deque()                                    # host requests' channels

    def host_chan():
      return int( s.host_req.msg.row ) % C

    def host_head():
      """The head response if it is the host's next one, else None."""
      if s.order:
        head = s.q[ s.order[0] ].head()
        if head is not None and head[0]:
          return head
      return None

    # host_req.rdy waits for the DMA's req.val on its channel (the DMA has
    # priority), as at RTL; every other output comes from state only.  Two
    # blocks, so a DMA whose blocks read our rdy/val and drive req.val forms
    # no loop with the state outputs; the host block is @update (a pure
    # function, which pymtl3 may iterate inside a cycle of RTL blocks).
    @update_once
    def up_mem_cl_ports():
      for c in range( C ):
        s.req[c].rdy @= s.q[c].can_accept()
        head = s.q[c].head()
        s.resp[c].val @= head is not None and not head[0]
        if head is not None and not head[0]:
          s.resp[c].msg @= Resp( head[1] )
      head = host_head()
      s.host_resp.val @= head is not None
      if head is not None:
        s.host_resp.msg @= Resp( head[1] )

    @update
    def up_mem_cl_host_rdy():
      hc = int( s.host_req.msg.row ) % C
      s.host_req.rdy @= len( s.order ) < host_entries and s.q[hc].can_accept() \
                        and not s.req[hc].val

    @update_ff
    def up_mem_cl_state():
      if s.reset:
        for q in s.q:
          q.reset()
        s.order.clear()
        return
      hc = host_chan()
      host_go = s.host_req.val & s.host_req.rdy
      host_out = s.host_resp.val & s.host_resp.rdy
      for c in range( C ):
        item = None
        if s.req[c].val & s.req[c].rdy:
          item = ( False, s.store[c].access( s.req[c].msg.row, s.req[c].msg ) )
        elif host_go and c == hc:
          row = int( s.host_req.msg.row ) >> CB
          item = ( True, s.store[c].access( row, s.host_req.msg ) )
        deq = ( s.resp[c].val & s.resp[c].rdy ) or ( host_out and s.order[0] == c )
        s.q[c].tick( item, deq )
      if host_out:
        s.order.popleft()
      if host_go:
        s.order.append( hc )

  def line_trace( s ):
    chans = " ".join( f"{s.req[c]}[{len( q )}]{s.resp[c]}" for c, q in enumerate( s.q ) )
    return f"{chans} h{s.host_req}[{len( s.order )}]{s.host_resp}"
