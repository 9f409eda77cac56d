"""Router at CL: `RouterRTL`'s control on Python values, decision by
decision, so every handshake happens in the RTL's cycle.  Messages are
built by the shared meaning in `streams.py` (own_packet, write_of).  The
position is the `core_id` input (`ports.py`); `core_id` here is only
checked."""

from pymtl3 import *

from .RouterRTL import _hs, check_router_params
from .ports import declare_ports
from .streams import own_packet, write_of
from .timing import RouterTiming



def _clone( msg ):
  return msg.clone()   # the net's value object is reused next cycle

class RouterCL( Component ):

  def construct( s, cfg, core_id, cores, fwd_entries=2 ):
    check_router_params( cfg, core_id, cores )
    declare_ports( s, cfg )
    s.t = t = RouterTiming( cfg, core_id, cores, fwd_entries )   # t.core_id: the port's

    # Each output from a block naming only what the RTL's output depends on:
    # cmd.rdy and done from state; rf_wr.val/msg from ring_recv; ring_recv.rdy
    # from rf_wr.rdy; ring_send.val/msg from rf_rd (and the forward FIFO);
    # rf_rd.rdy from ring_send.rdy.  So an RTL link or manager (whose blocks
    # read our rdy and write our val) forms no loop through unrelated ports;
    # the input-reading blocks are @update, pure functions pymtl3 may iterate
    # inside a block-level cycle of RTL blocks.  The timing is
    # `timing.RouterTiming` (shared with `pymtl_dfx.perf`).
    @update_once
    def up_router_cl_ports():
      s.cmd.rdy @= t.cmd_rdy()
      s.done.val @= t.done_pending
      s.done.msg @= 1

    @update
    def up_router_cl_wr():
      wr_val = t.rf_wr_val( s.ring_recv.val )
      s.rf_wr.val @= wr_val
      if wr_val:
        s.rf_wr.msg @= write_of( cfg, t.base, t.n, s.ring_recv.msg )

    @update
    def up_router_cl_recv_rdy():
      s.ring_recv.rdy @= t.ring_recv_rdy( s.rf_wr.rdy )

    @update
    def up_router_cl_send():
      fwd = t.fwd.deq_val()
      send_val = t.ring_send_val( s.rf_rd.val )
      s.ring_send.val @= send_val
      if fwd:
        s.ring_send.msg @= t.fwd.head()
      elif send_val:
        s.ring_send.msg @= own_packet( cfg, int( s.core_id ), t.own_idx, s.rf_rd.msg )

    @update
    def up_router_cl_rd_rdy():
      s.rf_rd.rdy @= t.rf_rd_rdy( s.ring_send.rdy )

    @update_ff
    def up_router_cl_state():
      if s.reset:
        t.reset()
        return
      t.core_id = int( s.core_id )     # the forwarding decision reads it
      pkt = None
      if s.ring_recv.val & s.ring_recv.rdy:
        pkt = _clone( s.ring_recv.msg )
      cmd = None
      if s.cmd.val & s.cmd.rdy:
        cmd = ( s.cmd.msg.base, s.cmd.msg.len )
      t.tick( pkt, s.ring_send.rdy, s.rf_rd.val & s.rf_rd.rdy, s.done.val & s.done.rdy, cmd )

  def line_trace( s ):
    t = s.t
    st = "A" if t.active else ( "D" if t.done_pending else " " )
    return ( f"{_hs( s.ring_recv )}>({st}{t.own_idx}/{t.npkts} r{t.recv_left} "
             f"f{len( t.fwd )})>{_hs( s.ring_send )}" )
