"""Router at CL: `RouterRTL`'s control on Python values, decision by
decision, so every handshake happens in the RTL's cycle.  Messages are
built by the shared meaning in `streams.py` (own_packet, write_of)."""

from pymtl3 import *

from ...lib.fifo import FifoCL
from .RouterRTL import _hs, check_router_params
from .ports import declare_ports
from .streams import forwards, n_packets, own_packet, write_of



def _clone( msg ):
  return msg.clone()   # the net's value object is reused next cycle

class RouterCL( Component ):

  def construct( s, cfg, core_id, cores, fwd_entries=2 ):
    check_router_params( cfg, core_id, cores )
    declare_ports( s, cfg )
    W = cfg.router_words

    def reset_state():
      s.active = s.done_pending = False
      s.base = s.n = s.npkts = s.own_idx = s.recv_left = 0
      s.fwd = FifoCL( fwd_entries )

    reset_state()

    def recv_ok():
      return s.active and s.recv_left > 0 and s.fwd.enq_rdy()

    def own_ok():
      return s.active and s.own_idx < s.npkts

    # Each output from a block naming only what the RTL's output depends on:
    # cmd.rdy and done from state; rf_wr.val/msg from ring_recv; ring_recv.rdy
    # from rf_wr.rdy; ring_send.val/msg from rf_rd (and the forward FIFO);
    # rf_rd.rdy from ring_send.rdy.  So an RTL link or manager (whose blocks
    # read our rdy and write our val) forms no loop through unrelated ports;
    # the input-reading blocks are @update, pure functions pymtl3 may iterate
    # inside a block-level cycle of RTL blocks.
    @update_once
    def up_router_cl_ports():
      s.cmd.rdy @= not s.active and not s.done_pending
      s.done.val @= s.done_pending
      s.done.msg @= 1

    @update
    def up_router_cl_wr():
      wr_val = s.ring_recv.val and recv_ok()
      s.rf_wr.val @= wr_val
      if wr_val:
        s.rf_wr.msg @= write_of( cfg, s.base, s.n, s.ring_recv.msg )

    @update
    def up_router_cl_recv_rdy():
      s.ring_recv.rdy @= recv_ok() and s.rf_wr.rdy

    @update
    def up_router_cl_send():
      fwd = s.fwd.deq_val()
      send_val = fwd or ( own_ok() and s.rf_rd.val )
      s.ring_send.val @= send_val
      if fwd:
        s.ring_send.msg @= s.fwd.head()
      elif send_val:
        s.ring_send.msg @= own_packet( cfg, core_id, s.own_idx, s.rf_rd.msg )

    @update
    def up_router_cl_rd_rdy():
      s.rf_rd.rdy @= own_ok() and not s.fwd.deq_val() and s.ring_send.rdy

    @update_ff
    def up_router_cl_state():
      if s.reset:
        reset_state()
        return
      finish = s.active and s.own_idx >= s.npkts and s.recv_left == 0 and not s.fwd.deq_val()
      deq = s.fwd.deq_val() and s.ring_send.rdy
      enq = None
      if s.ring_recv.val & s.ring_recv.rdy:
        s.recv_left -= 1
        if forwards( s.ring_recv.msg.src, core_id, cores ):
          enq = _clone( s.ring_recv.msg )
      s.fwd.tick( enq, deq )
      if s.rf_rd.val & s.rf_rd.rdy:
        s.own_idx += 1
      if s.done.val & s.done.rdy:
        s.done_pending = False
      if s.cmd.val & s.cmd.rdy:
        s.active = True
        s.base, s.n = int( s.cmd.msg.base ), int( s.cmd.msg.len )
        s.npkts = n_packets( s.n, W ) if cores > 1 else 0
        s.own_idx = 0
        s.recv_left = ( cores - 1 ) * n_packets( s.n, W )
      if finish:
        s.active = False
        s.done_pending = True

  def line_trace( s ):
    st = "A" if s.active else ( "D" if s.done_pending else " " )
    return ( f"{_hs( s.ring_recv )}>({st}{s.own_idx}/{s.npkts} r{s.recv_left} "
             f"f{len( s.fwd )})>{_hs( s.ring_send )}" )
