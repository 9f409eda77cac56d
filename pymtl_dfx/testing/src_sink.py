"""Test source and sink with random delays and cycle stamps.

Like pymtl3's `SourceRTL`/`SinkRTL`, but each message waits a random number
of cycles (seeded, so a failure reproduces) and the sink records the cycle
each message arrived, which tests use for latency and CL==RTL checks.  The
one sink either checks its messages in order or, where the order depends on
timing (a ring's writes), only records them (`RecordSinkRTL`); `received`
formats what the sinks took so far, for a stuck run's report.
"""

import random

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL


class StreamSinkError( AssertionError ):
  pass


def _clone( msg ):
  # outside the update block: pymtl3's elaboration checks the fields a
  # block reads, and a Bits port has no declared `clone`
  return msg.clone()


class DelaySourceRTL( Component ):
  """Sends `msgs`, each after a random delay of 0..max_delay cycles.  With
  `gate`, message i also waits until `gate( phases[i], cycle )` holds, so a
  test can sequence phases (load, run, read back); a gate must look at
  other parts only through `done_by`, which does not depend on the order
  pymtl3 runs their blocks in.  `sent` holds each message's acceptance
  cycle, counted like CheckSinkRTL's arrivals."""

  def construct( s, Type, msgs, max_delay=0, seed=0, gate=None, phases=None ):
    s.send = SendIfcRTL( Type )
    s.msgs = list( msgs )
    s.phases = list( phases ) if phases is not None else [ None ] * len( s.msgs )
    s.gate = gate
    rng = random.Random( seed )
    s.delays = [ rng.randint( 0, max_delay ) for _ in s.msgs ]
    s.idx = s.wait = s.cycle = 0
    s.sent = []

    @update_ff
    def up_src():
      if s.reset:
        s.idx, s.cycle, s.sent = 0, 0, []
        s.wait = s.delays[0] if s.delays else 0
        s.send.val <<= 0
        return
      s.cycle += 1
      if s.send.val & s.send.rdy:
        s.sent.append( s.cycle )
        s.idx += 1
        s.wait = s.delays[ s.idx ] if s.idx < len( s.msgs ) else 0
      if s.idx >= len( s.msgs ) or ( s.gate and not s.gate( s.phases[ s.idx ], s.cycle ) ):
        s.send.val <<= 0
      elif s.wait > 0:
        s.wait -= 1
        s.send.val <<= 0
      else:
        s.send.val <<= 1
        s.send.msg <<= s.msgs[ s.idx ]

  def done( s ):
    return s.idx >= len( s.msgs )

  def line_trace( s ):
    return f"{s.send}"


class CheckSinkRTL( Component ):

  def construct( s, Type, msgs, max_delay=0, seed=1, describe=str, strict=False,
                 check=True ):
    """strict: stay ready after the last expected message, so a message the
    DUT should never send fails the test instead of waiting unseen.
    check=False: take len(msgs) messages whatever they are and keep copies
    in `got` (in arrival order) for the test to inspect."""
    s.recv = RecvIfcRTL( Type )
    s.expected = list( msgs )
    s.check = check
    s.got = []
    rng = random.Random( seed )
    s.delays = [ rng.randint( 0, max_delay ) for _ in s.expected ]
    s.arrivals = []
    s.cycle = 0
    s.wait = 0

    @update_ff
    def up_sink():
      if s.reset:
        s.cycle = 0
        s.arrivals, s.got = [], []
        s.wait = s.delays[0] if s.delays else 0
        s.recv.rdy <<= 0
        return
      s.cycle += 1
      if s.recv.val & s.recv.rdy:
        i = len( s.arrivals )
        if i >= len( s.expected ):
          raise StreamSinkError( f"{s}: unexpected message #{i}: {describe(s.recv.msg)}" )
        if not s.check:
          s.got.append( _clone( s.recv.msg ) )   # the port's value object is reused
        elif s.recv.msg != s.expected[i]:
          raise StreamSinkError(
            f"{s}: message #{i} is wrong\n"
            f"  expected {describe(s.expected[i])}\n"
            f"  received {describe(s.recv.msg)}" )
        s.arrivals.append( s.cycle )
        s.wait = s.delays[ i+1 ] if i + 1 < len( s.expected ) else 0
      if s.wait > 0:
        s.wait -= 1
        s.recv.rdy <<= 0
      else:
        s.recv.rdy <<= strict or len( s.arrivals ) < len( s.expected )

  def done( s ):
    return len( s.arrivals ) >= len( s.expected )

  def line_trace( s ):
    return f"{s.recv}"


def RecordSinkRTL( Type, count, max_delay=0, seed=1 ):
  """A sink that takes `count` messages of any value after random delays and
  keeps them in `got` with their arrival cycles."""
  return CheckSinkRTL( Type, [ None ] * count, max_delay, seed, check=False )


def received( sinks ):
  """What each sink of {port: sink} has taken of what it expects, e.g.
  "out: 3/8, done: 0/1"."""
  return ", ".join( f"{p}: {len( x.arrivals )}/{len( x.expected )}" for p, x in sinks.items() )


def done_by( part, cycle ):
  """Whether a source or sink had sent / received all its messages before
  `cycle` (true for the same cycles whichever block pymtl3 runs first)."""
  stamps = part.sent if isinstance( part, DelaySourceRTL ) else part.arrivals
  return part.done() and ( not stamps or stamps[-1] < cycle )
