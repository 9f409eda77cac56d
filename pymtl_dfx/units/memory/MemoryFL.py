"""A memory at FL: the same ports and contents as MemoryCL/RTL, untimed.

Each port holds one response: a request is taken when its port's previous
response has been taken, applied to the storage at once (the DMA side
before the host in the same cycle, as at CL/RTL where the DMA has
priority) and answered the next cycle.  `ports` documents the boundary.
"""

from pymtl3 import *

from .ports import channel_bits, declare_ports
from .storage import ChannelStore


class MemoryFL( Component ):

  def construct( s, spec, depth, host_entries=None ):
    host_entries = spec.outstanding if host_entries is None else host_entries
    T, H = declare_ports( s, spec, depth, host_entries )
    C, CB = spec.channels, channel_bits( spec )
    Resp = T["Resp"]
    s.store = [ ChannelStore( depth ) for _ in range( C ) ]
    s.pending = [ None ] * C
    s.host_pending = None

    @update_once
    def up_mem_fl_ports():
      for c in range( C ):
        p = s.pending[c]
        s.req[c].rdy @= p is None
        s.resp[c].val @= p is not None
        if p is not None:
          s.resp[c].msg @= Resp( p )
      p = s.host_pending
      s.host_req.rdy @= p is None
      s.host_resp.val @= p is not None
      if p is not None:
        s.host_resp.msg @= Resp( p )

    @update_ff
    def up_mem_fl_state():
      if s.reset:
        s.pending = [ None ] * C
        s.host_pending = None
        return
      for c in range( C ):
        if s.resp[c].val & s.resp[c].rdy:
          s.pending[c] = None
        if s.req[c].val & s.req[c].rdy:
          s.pending[c] = s.store[c].access( s.req[c].msg.row, s.req[c].msg )
      if s.host_resp.val & s.host_resp.rdy:
        s.host_pending = None
      if s.host_req.val & s.host_req.rdy:
        addr = int( s.host_req.msg.row )
        s.host_pending = s.store[ addr % C ].access( addr >> CB, s.host_req.msg )

  def line_trace( s ):
    chans = " ".join( f"{s.req[c]}{s.resp[c]}" for c in range( len( s.store ) ) )
    return f"{chans} h{s.host_req}{s.host_resp}"
