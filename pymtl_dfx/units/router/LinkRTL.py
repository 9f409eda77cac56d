"""One ring link (router -> QSFP IP -> cable -> QSFP IP -> router) as a
latency and a bandwidth, from `DFXConfig` (`link_rule`, `link_params`).

The timing rule is `lib.rate_queue` (shared with the memory channels): the
link serialises a packet's W payload words at `ring_packet_words_per_cycle`
= num/den payload words per cycle: the line rate (`ring_gbps`) times W / (W +
the frame's overhead, `ring_frame_overhead_bytes` of Ethernet, IPv4 and UDP
framing).  With no overhead, W=64 at 31.25 words/cycle is one packet every
2.048 cycles (gaps of 2, 2, ..., 3); with the default 66 bytes, one every
3.104 cycles.  An idle link saves no credit; line coding is not counted.  A packet accepted in cycle t can leave in
cycle t + latency.  The link holds `entries` packets (enough for full rate);
when the receiver does not take them, the link fills and stops accepting
(the QSFP IP's flow control, e.g. Aurora's native flow control or a CMAC
pause, modelled as back-pressure).  `LinkCL` is the same rule on Python
values.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...lib.rate_queue import RateQueueCL, RateQueueRTL, RateRule


def link_rule( cfg ):
  """One ring link's `RateRule`: router_words words per packet."""
  return RateRule.of( cfg.ring_packet_words_per_cycle, cfg.router_words, cfg.ring_latency_cycles )


def link_params( cfg ):
  """(latency cycles, num, den, packet cost, entries) of one ring link."""
  r = link_rule( cfg )
  return r.latency, r.num, r.den, r.cost, r.entries


def _clone( msg ):
  return msg.clone()   # the net's value object is reused next cycle


class LinkRTL( Component ):

  def construct( s, cfg, Type ):
    s.recv = RecvIfcRTL( Type )
    s.send = SendIfcRTL( Type )
    s.q = RateQueueRTL( Type, link_rule( cfg ) )
    s.recv //= s.q.recv
    s.send //= s.q.send

  def line_trace( s ):
    return s.q.line_trace()


class LinkCL( Component ):

  def construct( s, cfg, Type ):
    s.recv = RecvIfcRTL( Type )
    s.send = SendIfcRTL( Type )
    s.q = RateQueueCL( link_rule( cfg ) )

    @update_once
    def up_link_cl_ports():
      s.recv.rdy @= s.q.can_accept()
      head = s.q.head()
      s.send.val @= head is not None
      if head is not None:
        s.send.msg @= head

    @update_ff
    def up_link_cl_state():
      if s.reset:
        s.q.reset()
        return
      s.q.tick( _clone( s.recv.msg ) if s.recv.val & s.recv.rdy else None,
                s.send.val & s.send.rdy )

  def line_trace( s ):
    return f"[{len( s.q )}]"
