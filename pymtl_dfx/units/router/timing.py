"""The router's timing: `RouterRTL`'s control (own packets out, packets in,
the forward FIFO, done) on Python values, without data.

The one definition of when the router takes and gives a message: `RouterCL`
drives its ports from this class and builds the messages; `pymtl_dfx.perf`
runs it with packets that carry only their source core (`forwards` needs
it).  Per cycle: the outputs from state and this cycle's inputs, then
`tick(...)` with the handshakes that fired.
"""

from ...lib.fifo import FifoCL
from .streams import forwards, n_packets


class RouterTiming:

  def __init__( s, cfg, core_id, cores, fwd_entries=2 ):
    s.W, s.core_id, s.cores, s.fwd_entries = cfg.router_words, core_id, cores, fwd_entries
    s.reset()

  def reset( s ):
    s.active = s.done_pending = False
    s.base = s.n = s.npkts = s.own_idx = s.recv_left = 0
    s.fwd = FifoCL( s.fwd_entries )

  def recv_ok( s ):
    return s.active and s.recv_left > 0 and s.fwd.enq_rdy()

  def own_ok( s ):
    return s.active and s.own_idx < s.npkts

  def cmd_rdy( s ):
    return not s.active and not s.done_pending

  def rf_wr_val( s, ring_recv_val ):
    return bool( ring_recv_val ) and s.recv_ok()

  def ring_recv_rdy( s, rf_wr_rdy ):
    return s.recv_ok() and bool( rf_wr_rdy )

  def ring_send_val( s, rf_rd_val ):
    return s.fwd.deq_val() or ( s.own_ok() and bool( rf_rd_val ) )

  def rf_rd_rdy( s, ring_send_rdy ):
    return s.own_ok() and not s.fwd.deq_val() and bool( ring_send_rdy )

  def tick( s, recv_pkt, send_rdy, rd_fire, done_fire, cmd ):
    """recv_pkt: the packet taken from the ring this cycle (or None);
    send_rdy: ring_send.rdy; rd_fire / done_fire: those handshakes; cmd:
    (base, len) taken this cycle (or None)."""
    finish = s.active and s.own_idx >= s.npkts and s.recv_left == 0 and not s.fwd.deq_val()
    deq = s.fwd.deq_val() and bool( send_rdy )
    enq = None
    if recv_pkt is not None:
      s.recv_left -= 1
      if forwards( recv_pkt.src, s.core_id, s.cores ):
        enq = recv_pkt
    s.fwd.tick( enq, deq )
    if rd_fire:
      s.own_idx += 1
    if done_fire:
      s.done_pending = False
    if cmd is not None:
      s.active = True
      s.base, s.n = int( cmd[0] ), int( cmd[1] )
      s.npkts = n_packets( s.n, s.W ) if s.cores > 1 else 0
      s.own_idx = 0
      s.recv_left = ( s.cores - 1 ) * n_packets( s.n, s.W )
    if finish:
      s.active = False
      s.done_pending = True
