"""Router at FL behind the stream boundary of `streams.py`: RouterFunc's
meaning (send the own segment as packets, write every received packet at
its sender's segment, forward it unless the next core sent it, done after
(cores - 1) segments) with the register file replaced by rf_rd / rf_wr.
Unbounded queues, no timing.  The position is the `core_id` input
(`ports.py`); `core_id` here is not used."""

from collections import deque

from pymtl3 import *

from .ports import declare_ports
from .streams import forwards, n_packets, own_packet, write_of



def _clone( msg ):
  return msg.clone()   # the net's value object is reused next cycle

class RouterFL( Component ):

  def construct( s, cfg, core_id, cores, fwd_entries=None ):
    declare_ports( s, cfg )
    W = cfg.router_words

    def reset_state():
      s.active = None          # (base, n)
      s.own_left = s.own_idx = s.expected = 0
      s.outgoing, s.writes = deque(), deque()
      s.done_pending = False

    reset_state()

    @update_once
    def up_router_fl_ports():
      s.cmd.rdy @= s.active is None and not s.done_pending
      s.rf_rd.rdy @= s.active is not None and s.own_left > 0
      s.ring_recv.rdy @= s.active is not None and s.expected > 0
      s.ring_send.val @= len( s.outgoing ) > 0
      if s.outgoing:
        s.ring_send.msg @= s.outgoing[0]
      s.rf_wr.val @= len( s.writes ) > 0
      if s.writes:
        s.rf_wr.msg @= s.writes[0]
      s.done.val @= s.done_pending
      s.done.msg @= 1

    @update_ff
    def up_router_fl_state():
      if s.reset:
        reset_state()
        return
      if s.done.val & s.done.rdy:
        s.done_pending = False
      if s.ring_send.val & s.ring_send.rdy:
        s.outgoing.popleft()
      if s.rf_wr.val & s.rf_wr.rdy:
        s.writes.popleft()
      me = int( s.core_id )
      if s.rf_rd.val & s.rf_rd.rdy:
        s.outgoing.append( own_packet( cfg, me, s.own_idx, s.rf_rd.msg ) )
        s.own_idx += 1
        s.own_left -= 1
      if s.ring_recv.val & s.ring_recv.rdy:
        pkt = _clone( s.ring_recv.msg )
        s.writes.append( write_of( cfg, *s.active, pkt ) )
        s.expected -= 1
        if forwards( pkt.src, me, cores ):
          s.outgoing.append( pkt )
      if s.cmd.val & s.cmd.rdy:
        n = int( s.cmd.msg.len )
        s.active = ( int( s.cmd.msg.base ), n )
        s.own_left = n_packets( n, W ) if cores > 1 else 0
        s.own_idx = 0
        s.expected = ( cores - 1 ) * n_packets( n, W )
      if s.active is not None and s.own_left == 0 and s.expected == 0 \
         and not s.outgoing and not s.writes:
        s.active = None
        s.done_pending = True

  def line_trace( s ):
    return f"({'S' if s.active else ' '}{len( s.outgoing )}w{len( s.writes )})"
