"""Router at RTL: the ring all-gather behind the stream boundary of
`streams.py` (cmd, rf_rd, rf_wr, ring_send, ring_recv, done).

Datapath (`RouterDpathRTL`): the sync's registers (base, n, packet count P,
own packet index, packets still to receive), the own packet (rf_rd words
plus src = core_id, idx), the rf_wr message of the packet on ring_recv
(addr = base*d + src*n + idx*W, cnt = min(W, n - idx*W)), the forward FIFO
and the ring_send mux.  The position `core_id` is the input port of
`ports.py` (the next core's position, which decides forwarding, is
computed from it), so the module is the same for every core of a ring.  Control (`RouterCtrlRTL`): idle / active /
done-pending and every val/rdy.

Buffering rule (why forwarding cannot deadlock with finite buffers):
  1. a received packet that must go on waits in a FIFO of `fwd_entries`
     (>= 1) packets; ring_recv is taken only when that FIFO has room (and
     rf_wr is ready), whether or not this packet needs forwarding;
  2. ring_send always prefers the forward FIFO: the core injects its own
     packet (from rf_rd) only in a cycle when the FIFO is empty.
A stuck ring would need every forward FIFO and every link full.  Moving a
packet from a link into a FIFO or from a FIFO into a link keeps the number
of packets on the ring; only an injection adds one, and it happens when the
injecting core's FIFO is empty (>= fwd_entries free slots left after it).
So the ring is never full, some packet can always move, and every packet
reaches the core before its sender, where it is only written (rf_wr).
"""

from pymtl3 import *
from pymtl3.stdlib.basic_rtl import RegEn, RegEnRst, RegRst

from ...lib.arith import ceil_div
from ...lib.fifo import FifoRTL
from .ports import CoreIdT, declare_ports
from .streams import AddrT, DoneMsg, LenT, mk_router_types


def check_router_params( cfg, core_id, cores ):
  """core_id None: the position is only known at run time (any of 0..cores-1)."""
  W = cfg.router_words
  if W & ( W - 1 ):
    raise ValueError( f"RouterRTL: router_words={W} must be a power of two" )
  if not 1 <= cores <= 255 or not ( core_id is None or 0 <= core_id < cores ):
    raise ValueError( f"RouterRTL: core {core_id} of {cores} (1..255 cores)" )
  if ceil_div( 2**LenT.nbits - 1, W ) >= 2**16:
    raise ValueError( f"RouterRTL: router_words={W} lets a segment need more "
                      f"than 2^16 packets (the packet's idx field)" )


def _hs( ifc ):
  """A stream handshake in one character (the packets are too wide to print)."""
  if ifc.val and ifc.rdy:
    return "*"
  return "#" if ifc.val else "."


class RouterCtrlRTL( Component ):

  def construct( s ):
    # handshakes
    s.cmd_val = InPort();     s.cmd_rdy = OutPort()
    s.rd_val = InPort();      s.rd_rdy = OutPort()
    s.wr_rdy = InPort();      s.wr_val = OutPort()
    s.send_rdy = InPort();    s.send_val = OutPort()
    s.recv_val = InPort();    s.recv_rdy = OutPort()
    s.done_rdy = InPort();    s.done_val = OutPort()
    # datapath status
    s.own_more = InPort()     # own packets still to send
    s.recv_more = InPort()    # packets still to receive
    s.fwd_needed = InPort()   # the packet on ring_recv must go on
    s.fwd_enq_rdy = InPort()
    s.fwd_deq_val = InPort()
    # datapath control
    s.load = OutPort()        # take the command
    s.own_fire = OutPort()    # an own packet leaves
    s.recv_fire = OutPort()   # a packet is received (and written)
    s.fwd_enq_val = OutPort()
    s.fwd_deq_rdy = OutPort()
    s.sel_fwd = OutPort()     # ring_send carries the forward FIFO's head

    s.active = RegRst( Bits1 )
    s.done_pending = RegRst( Bits1 )
    s.finish = Wire()

    @update
    def up_router_ctrl():
      s.cmd_rdy @= ~s.active.out & ~s.done_pending.out
      s.load @= s.cmd_val & ~s.active.out & ~s.done_pending.out
      s.wr_val @= s.recv_val & s.active.out & s.recv_more & s.fwd_enq_rdy
      s.recv_rdy @= s.active.out & s.recv_more & s.fwd_enq_rdy & s.wr_rdy
      s.recv_fire @= s.recv_val & s.active.out & s.recv_more & s.fwd_enq_rdy & s.wr_rdy
      s.fwd_enq_val @= s.recv_fire & s.fwd_needed
      s.sel_fwd @= s.fwd_deq_val
      s.send_val @= s.fwd_deq_val | ( s.active.out & s.own_more & s.rd_val )
      s.fwd_deq_rdy @= s.send_rdy
      s.rd_rdy @= s.active.out & s.own_more & ~s.fwd_deq_val & s.send_rdy
      s.own_fire @= s.rd_val & s.active.out & s.own_more & ~s.fwd_deq_val & s.send_rdy
      s.done_val @= s.done_pending.out
      s.finish @= s.active.out & ~s.own_more & ~s.recv_more & ~s.fwd_deq_val
      s.active.in_ @= s.load | ( s.active.out & ~s.finish )
      s.done_pending.in_ @= s.finish | ( s.done_pending.out & ~s.done_rdy )

  def line_trace( s ):
    return "A" if s.active.out else ( "D" if s.done_pending.out else " " )


class RouterDpathRTL( Component ):

  def construct( s, cfg, cores, fwd_entries ):
    T = mk_router_types( cfg )
    W, d = cfg.router_words, cfg.d
    logW, logd = W.bit_length() - 1, d.bit_length() - 1
    LW = LenT.nbits
    RW = LW + 8
    Len, Rem = LenT, mk_bits( RW )
    CntT = T["Cnt"]
    MULTI = Len( 2**LW - 1 if cores > 1 else 0 )   # one core sends nothing

    s.cmd_msg = InPort( T["Cmd"] )
    s.rd_msg = InPort( T["Rd"] )
    s.wr_msg = OutPort( T["Wr"] )
    s.send_msg = OutPort( T["Packet"] )
    s.recv_msg = InPort( T["Packet"] )
    s.core_id = InPort( CoreIdT )

    s.load = InPort()
    s.own_fire = InPort()
    s.recv_fire = InPort()
    s.fwd_enq_val = InPort()
    s.fwd_deq_rdy = InPort()
    s.sel_fwd = InPort()
    s.own_more = OutPort()
    s.recv_more = OutPort()
    s.fwd_needed = OutPort()
    s.fwd_enq_rdy = OutPort()
    s.fwd_deq_val = OutPort()

    # the sync's registers
    s.base = RegEn( T["Cmd"].__bitstruct_fields__["base"] )
    s.n = RegEn( Len )
    s.npkts = RegEn( Len )
    s.own_idx = RegEnRst( Len )
    s.recv_left = RegEnRst( Rem )
    s.base.in_ //= s.cmd_msg.base
    s.n.in_ //= s.cmd_msg.len
    s.base.en //= s.load
    s.n.en //= s.load
    s.npkts.en //= s.load

    s.p_new = Wire( Len )     # packets per segment of the incoming command
    s.own_idx_en = Wire()
    s.recv_left_en = Wire()

    @update
    def up_router_counters():
      s.p_new @= ( s.cmd_msg.len + Len( W - 1 ) ) >> logW
      s.npkts.in_ @= s.p_new & MULTI
      s.own_idx_en @= s.load | s.own_fire
      s.recv_left_en @= s.load | s.recv_fire
      if s.load:
        s.own_idx.in_ @= 0
        s.recv_left.in_ @= zext( s.p_new, RW ) * Rem( cores - 1 )
      else:
        s.own_idx.in_ @= s.own_idx.out + 1
        s.recv_left.in_ @= s.recv_left.out - 1
      s.own_more @= s.own_idx.out < s.npkts.out
      s.recv_more @= s.recv_left.out != 0

    s.own_idx.en //= s.own_idx_en
    s.recv_left.en //= s.recv_left_en

    # the own packet: rf_rd's words, this core's id, the packet number
    s.own_pkt = Wire( T["Packet"] )
    s.own_pkt.src //= s.core_id
    s.own_pkt.idx //= s.own_idx.out[ 0:16 ]
    for i in range( W ):
      s.own_pkt.data[i] //= s.rd_msg.data[i]

    # the write of the packet on ring_recv
    s.wr_addr = Wire( AddrT )
    s.wr_cnt = Wire( CntT )
    s.wr_lo = Wire( AddrT )
    s.wr_rem = Wire( AddrT )
    s.nxt = Wire( CoreIdT )     # the next core's position: (core_id + 1) % cores
    s.wr_msg.addr //= s.wr_addr
    s.wr_msg.cnt //= s.wr_cnt
    for i in range( W ):
      s.wr_msg.data[i] //= s.recv_msg.data[i]

    @update
    def up_router_write():
      s.wr_lo @= zext( s.recv_msg.idx, 32 ) << logW
      s.wr_addr @= ( zext( s.base.out, 32 ) << logd ) \
                   + zext( s.recv_msg.src, 32 ) * zext( s.n.out, 32 ) + s.wr_lo
      s.wr_rem @= zext( s.n.out, 32 ) - s.wr_lo
      if s.wr_rem >= AddrT( W ):
        s.wr_cnt @= CntT( W )
      else:
        s.wr_cnt @= s.wr_rem[ 0:CntT.nbits ]
      if s.core_id == CoreIdT( cores - 1 ):
        s.nxt @= 0
      else:
        s.nxt @= s.core_id + 1
      s.fwd_needed @= s.recv_msg.src != s.nxt

    # forward FIFO and the ring_send mux
    s.fwd = FifoRTL( T["Packet"], fwd_entries )
    s.fwd.enq.msg //= s.recv_msg
    s.fwd.enq.val //= s.fwd_enq_val
    s.fwd.enq.rdy //= s.fwd_enq_rdy
    s.fwd.deq.val //= s.fwd_deq_val
    s.fwd.deq.rdy //= s.fwd_deq_rdy

    @update
    def up_router_send_mux():
      if s.sel_fwd:
        s.send_msg @= s.fwd.deq.msg
      else:
        s.send_msg @= s.own_pkt

  def line_trace( s ):
    return f"{int( s.own_idx.out )}/{int( s.npkts.out )} r{int( s.recv_left.out )} f{s.fwd.line_trace()}"


class RouterRTL( Component ):

  def construct( s, cfg, core_id, cores, fwd_entries=2 ):
    """core_id: the position the builder drives the `core_id` port with,
    checked here, or None (known at run time); the hardware reads only the
    port, so the module does not depend on it (the builder passes None
    where one module must serve every position, as `Core` does)."""
    check_router_params( cfg, core_id, cores )
    declare_ports( s, cfg )

    s.ctrl = RouterCtrlRTL()
    s.dpath = RouterDpathRTL( cfg, cores, fwd_entries )
    c, p = s.ctrl, s.dpath

    c.cmd_val //= s.cmd.val;         c.cmd_rdy //= s.cmd.rdy
    c.rd_val //= s.rf_rd.val;        c.rd_rdy //= s.rf_rd.rdy
    c.wr_rdy //= s.rf_wr.rdy;        c.wr_val //= s.rf_wr.val
    c.send_rdy //= s.ring_send.rdy;  c.send_val //= s.ring_send.val
    c.recv_val //= s.ring_recv.val;  c.recv_rdy //= s.ring_recv.rdy
    c.done_rdy //= s.done.rdy;       c.done_val //= s.done.val
    s.done.msg //= DoneMsg( 1 )

    p.cmd_msg //= s.cmd.msg
    p.rd_msg //= s.rf_rd.msg
    p.wr_msg //= s.rf_wr.msg
    p.send_msg //= s.ring_send.msg
    p.recv_msg //= s.ring_recv.msg
    p.core_id //= s.core_id

    for name in ( "load", "own_fire", "recv_fire", "fwd_enq_val", "fwd_deq_rdy", "sel_fwd" ):
      connect( getattr( c, name ), getattr( p, name ) )
    for name in ( "own_more", "recv_more", "fwd_needed", "fwd_enq_rdy", "fwd_deq_val" ):
      connect( getattr( p, name ), getattr( c, name ) )

  def line_trace( s ):
    return f"{_hs( s.ring_recv )}>({s.ctrl.line_trace()}{s.dpath.line_trace()})>{_hs( s.ring_send )}"
