"""One ring link (router -> QSFP IP -> cable -> QSFP IP -> router) as a
latency and a bandwidth, from `DFXConfig` (`link_params`).

Bandwidth: the link serialises a packet's W payload words at
`ring_words_per_cycle` = num/den words per cycle.  `busy` counts the
serialisation work still owed in units of 1/den word: a packet may start
when the previous one finishes within this cycle (busy < num), adds W*den,
and every cycle removes num (never below 0).  So back-to-back packets go at
exactly the configured rate on average (W=64 at 31.25 words/cycle: one every
2.048 cycles, i.e. gaps of 2, 2, ..., 3), and an idle link saves no credit.
Header bits and line coding are not counted.

Latency: a packet accepted in cycle t can leave in cycle t + latency.  The
link holds `entries` packets (enough for full rate); when the receiver does
not take them, the link fills and stops accepting (the QSFP IP's flow
control, e.g. Aurora's native flow control or a CMAC pause, modelled as
back-pressure).  `LinkCL` is the same rule on Python values.
"""

import math
from collections import deque

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from .FifoRTL import FifoRTL

StampT = Bits32


def link_params( cfg ):
  """(latency cycles, num, den, packet cost, entries) of one ring link."""
  rate = cfg.ring_words_per_cycle
  num, den = rate.numerator, rate.denominator
  cost = cfg.router_words * den
  L = cfg.ring_latency_cycles
  entries = max( 2, math.ceil( L * num / cost ) + 1 )
  return L, num, den, cost, entries



def _clone( msg ):
  return msg.clone()   # the net's value object is reused next cycle

class LinkRTL( Component ):

  def construct( s, cfg, Type ):
    L, num, den, cost, entries = link_params( cfg )
    BW = ( cost + num ).bit_length()
    B = mk_bits( BW )
    s.recv = RecvIfcRTL( Type )
    s.send = SendIfcRTL( Type )

    s.data  = FifoRTL( Type, entries )
    s.stamp = FifoRTL( StampT, entries )
    s.now   = Wire( StampT )
    s.busy  = Wire( B )
    s.free  = Wire()        # the serialiser can start a packet this cycle
    s.ripe  = Wire()        # the head has spent `latency` cycles in the link

    s.data.enq.msg  //= s.recv.msg
    s.stamp.enq.msg //= s.now
    s.send.msg //= s.data.deq.msg

    @update
    def up_link_comb():
      s.free @= s.busy < B( num )
      s.recv.rdy @= s.free & s.data.enq.rdy
      s.data.enq.val @= s.recv.val & s.free
      s.stamp.enq.val @= s.recv.val & s.free
      s.ripe @= s.data.deq.val & ( ( s.now - s.stamp.deq.msg ) >= StampT( L ) )
      s.send.val @= s.ripe
      s.data.deq.rdy @= s.ripe & s.send.rdy
      s.stamp.deq.rdy @= s.ripe & s.send.rdy

    @update_ff
    def up_link_ff():
      if s.reset:
        s.now <<= 0
        s.busy <<= 0
      else:
        s.now <<= s.now + 1
        if ( s.recv.val & s.recv.rdy ) & ( s.busy + B( cost ) >= B( num ) ):
          s.busy <<= s.busy + B( cost ) - B( num )
        elif ~( s.recv.val & s.recv.rdy ) & ( s.busy >= B( num ) ):
          s.busy <<= s.busy - B( num )
        else:
          s.busy <<= 0

  def line_trace( s ):
    return f"[{s.data.line_trace()}]"


class LinkCL( Component ):

  def construct( s, cfg, Type ):
    L, num, den, cost, entries = link_params( cfg )
    s.recv = RecvIfcRTL( Type )
    s.send = SendIfcRTL( Type )
    s.q = deque()
    s.now = 0
    s.busy = 0

    def free():
      return s.busy < num

    def ripe():
      return bool( s.q ) and s.now - s.q[0][1] >= L

    @update_once
    def up_link_cl_ports():
      s.recv.rdy @= free() and len( s.q ) < entries
      s.send.val @= ripe()
      if s.q:
        s.send.msg @= s.q[0][0]

    @update_ff
    def up_link_cl_state():
      if s.reset:
        s.q.clear()
        s.now = s.busy = 0
        return
      if s.send.val & s.send.rdy:
        s.q.popleft()
      if s.recv.val & s.recv.rdy:
        s.q.append( ( _clone( s.recv.msg ), s.now ) )
        s.busy = max( 0, s.busy + cost - num )
      else:
        s.busy = max( 0, s.busy - num )
      s.now += 1

  def line_trace( s ):
    return f"[{len( s.q )}]"
