"""A latency + bandwidth queue: the one timing rule shared by the ring link
(`units.router.LinkRTL`) and the memory channel (`units.memory`).

Rule (`RateRule`: latency, num, den, cost, entries):
  bandwidth  a serialiser moves num/den words per cycle.  `busy` counts the
             work still owed in units of 1/den word.  An item may be accepted
             when the previous one finishes within this cycle (busy < num); it
             adds `cost` (its words times den), and every cycle removes num
             (never below 0).  So saturated traffic goes at exactly the rate
             on average (the k-th item of a saturated stream is accepted
             floor(k * cost / num) cycles after the first), and an idle
             queue saves no credit.
  latency    an item accepted in cycle t can leave in cycle t + latency.
  capacity   the queue holds `entries` items from acceptance until they are
             taken; when it is full it stops accepting (back-pressure).
             recv.rdy depends on registered state only, never on recv.val.

`RateQueueRTL` is the hardware; `RateQueueCL` is the same rule on Python
values (a helper object, like `FifoCL`), so a CL unit built on it has
exactly the RTL's cycle count.
"""

import math
from collections import deque
from dataclasses import dataclass
from fractions import Fraction

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from .fifo import FifoRTL

StampT = Bits32     # cycle stamps; differences are taken modulo 2^32


class RateRuleError( ValueError ):
  pass


@dataclass( frozen=True )
class RateRule:
  latency: int     # cycles from acceptance to the earliest departure
  num: int         # rate = num / den words per cycle
  den: int
  cost: int        # one item's serialisation work, in 1/den words
  entries: int     # items held from acceptance until taken

  @classmethod
  def of( cls, rate, item_words, latency, entries=None ):
    """The rule for items of `item_words` words at `rate` (a Fraction,
    words per cycle).  `entries` defaults to the fewest that sustain the
    rate through the latency with an always-ready receiver."""
    rate = Fraction( rate )
    errors = []
    if rate <= 0:
      errors.append( f"rate={rate} (must be positive)" )
    if not isinstance( item_words, int ) or item_words < 1:
      errors.append( f"item_words={item_words!r} (must be a positive integer)" )
    if not isinstance( latency, int ) or latency < 1:
      errors.append( f"latency={latency!r} (must be an integer >= 1)" )
    if entries is not None and ( not isinstance( entries, int ) or entries < 1 ):
      errors.append( f"entries={entries!r} (must be a positive integer)" )
    if errors:
      raise RateRuleError( "invalid rate queue: " + "; ".join( errors ) )
    num, den = rate.numerator, rate.denominator
    cost = item_words * den
    if entries is None:
      entries = max( 2, math.ceil( latency * num / cost ) + 1 )
    return cls( latency, num, den, cost, entries )

  def accept_offset( s, k ):
    """Cycles from the first to the k-th acceptance of a saturated stream."""
    return k * s.cost // s.num


class RateQueueRTL( Component ):

  def construct( s, Type, rule ):
    L, num, cost, entries = rule.latency, rule.num, rule.cost, rule.entries
    B = mk_bits( ( cost + num ).bit_length() )
    s.recv = RecvIfcRTL( Type )
    s.send = SendIfcRTL( Type )

    s.data  = FifoRTL( Type, entries )
    s.stamp = FifoRTL( StampT, entries )
    s.now   = Wire( StampT )
    s.busy  = Wire( B )
    s.free  = Wire()        # the serialiser can start an item this cycle
    s.ripe  = Wire()        # the head has spent `latency` cycles in the queue

    s.data.enq.msg  //= s.recv.msg
    s.stamp.enq.msg //= s.now
    s.send.msg //= s.data.deq.msg

    @update
    def up_rate_comb():
      s.free @= s.busy < B( num )
      s.recv.rdy @= s.free & s.data.enq.rdy
      s.data.enq.val @= s.recv.val & s.free
      s.stamp.enq.val @= s.recv.val & s.free
      s.ripe @= s.data.deq.val & ( ( s.now - s.stamp.deq.msg ) >= StampT( L ) )
      s.send.val @= s.ripe
      s.data.deq.rdy @= s.ripe & s.send.rdy
      s.stamp.deq.rdy @= s.ripe & s.send.rdy

    @update_ff
    def up_rate_ff():
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


class RateQueueCL:
  """The same rule on Python values.  Per cycle: read `can_accept()` and
  `head()` (the ripe head or None) for the ports, then `tick(item, deq)`."""

  def __init__( s, rule ):
    s.rule = rule
    s._num, s._cost, s._lat, s._entries = rule.num, rule.cost, rule.latency, rule.entries
    s.reset()

  def reset( s ):
    s.q = deque()       # (item, acceptance cycle)
    s.now = 0
    s.busy = 0

  def can_accept( s ):
    return s.busy < s._num and len( s.q ) < s._entries

  def ripe( s ):
    q = s.q
    return bool( q ) and s.now - q[0][1] >= s._lat

  def head( s ):
    return s.q[0][0] if s.ripe() else None

  def quiet( s ):
    """Empty and owing no work: then a cycle without an item only moves the
    clock, which nothing observes until an item is accepted (ripeness is
    measured from it), so a user may skip such ticks (`pymtl_dfx.perf`)."""
    return not s.q and s.busy == 0

  def tick( s, item, deq ):
    """`item` (or None) was accepted this cycle, the head left if `deq`
    (both decided on the state at the start of the cycle)."""
    if deq:
      s.q.popleft()
    if item is not None:
      s.q.append( ( item, s.now ) )
      busy = s.busy + s._cost - s._num
    else:
      busy = s.busy - s._num
    s.busy = busy if busy > 0 else 0
    s.now += 1

  def __len__( s ):
    return len( s.q )
