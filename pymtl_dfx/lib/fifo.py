"""A normal FIFO (one cycle from enq to deq, no bypass): enq.rdy while not
full, deq.val while not empty, both from registered state only.  `FifoCL`
is the same rule on Python values."""

from collections import deque

from pymtl3 import *
from pymtl3.stdlib.basic_rtl import RegEn
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL


class FifoRTL( Component ):

  def construct( s, Type, entries ):
    if entries < 1:
      raise ValueError( f"FifoRTL: entries={entries} must be >= 1" )
    AW = max( 1, ( entries - 1 ).bit_length() )
    CW = entries.bit_length()
    A, C = mk_bits( AW ), mk_bits( CW )
    last, full = A( entries - 1 ), C( entries )

    s.enq = RecvIfcRTL( Type )
    s.deq = SendIfcRTL( Type )

    s.regs = [ RegEn( Type ) for _ in range( entries ) ]
    s.outs = [ Wire( Type ) for _ in range( entries ) ]
    s.wen  = [ Wire() for _ in range( entries ) ]
    s.head  = Wire( A )
    s.tail  = Wire( A )
    s.count = Wire( C )
    s.enq_fire = Wire()
    s.deq_fire = Wire()
    for i in range( entries ):
      s.regs[i].in_ //= s.enq.msg
      s.regs[i].en  //= s.wen[i]
      s.outs[i]     //= s.regs[i].out

    @update
    def up_fifo_comb():
      s.enq.rdy @= s.count < full
      s.deq.val @= s.count > 0
      s.deq.msg @= s.outs[ s.head ]
      s.enq_fire @= s.enq.val & ( s.count < full )
      s.deq_fire @= ( s.count > 0 ) & s.deq.rdy
      for i in range( entries ):
        s.wen[i] @= s.enq_fire & ( s.tail == A( i ) )

    @update_ff
    def up_fifo_ff():
      if s.reset:
        s.head <<= 0
        s.tail <<= 0
        s.count <<= 0
      else:
        if s.enq_fire:
          if s.tail == last:
            s.tail <<= 0
          else:
            s.tail <<= s.tail + 1
        if s.deq_fire:
          if s.head == last:
            s.head <<= 0
          else:
            s.head <<= s.head + 1
        if s.enq_fire & ~s.deq_fire:
          s.count <<= s.count + 1
        elif s.deq_fire & ~s.enq_fire:
          s.count <<= s.count - 1

  def line_trace( s ):
    return f"{int( s.count )}"


class FifoCL:
  """The same rule on Python values (a helper object, not a component)."""

  def __init__( s, entries ):
    s.entries = entries
    s.q = deque()

  def enq_rdy( s ):
    return len( s.q ) < s.entries

  def deq_val( s ):
    return len( s.q ) > 0

  def head( s ):
    return s.q[0]

  def tick( s, enq_msg, deq ):
    """enq_msg (or None) enters, the head leaves if `deq` (decided on the
    state at the start of the cycle)."""
    if deq:
      s.q.popleft()
    if enq_msg is not None:
      s.q.append( enq_msg )

  def __len__( s ):
    return len( s.q )
