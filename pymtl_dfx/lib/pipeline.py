"""Fixed-latency pipelines with a val/rdy boundary and one global stall.

A message accepted in cycle t leaves in cycle t + latency unless the output is
stalled; when the last stage holds a message that the consumer does not take,
every stage holds (this is how DFX's DSP operators are chained: their clock
enable is the downstream ready).  `StallPipeRTL` is the hardware;
`StallPipeCL` is the same rule on Python objects, so a CL unit built on it has
exactly the RTL's cycle count.
"""

from pymtl3 import *
from pymtl3.stdlib.basic_rtl import RegEn, RegEnRst
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL


class StallPipeRTL( Component ):

  def construct( s, Type, latency, expose=None ):
    """`expose`: a field of Type whose value in every stage is also an
    output (with its valid bit), for a parent that checks hazards against
    what is in flight.  One field rather than whole messages keeps the
    ports plain Bits, which every synthesis front end reads."""
    if latency < 1:
      raise ValueError( f"StallPipeRTL: latency={latency} must be >= 1" )

    s.recv = RecvIfcRTL( Type )
    s.send = SendIfcRTL( Type )

    # registers as instances rather than an array written in a loop: Yosys
    # 0.23 loses the drivers of such an array
    s.valid = [ RegEnRst( Bits1 ) for _ in range( latency ) ]
    s.data  = [ RegEn( Type ) for _ in range( latency ) ]
    s.advance = Wire()

    @update
    def up_advance():
      s.advance @= ~s.valid[latency-1].out | s.send.rdy
      s.recv.rdy @= s.advance

    for i in range( latency ):
      s.valid[i].en //= s.advance
      s.data[i].en  //= s.advance
    s.valid[0].in_ //= s.recv.val
    s.data[0].in_  //= s.recv.msg
    for i in range( 1, latency ):
      s.valid[i].in_ //= s.valid[i-1].out
      s.data[i].in_  //= s.data[i-1].out

    s.send.val //= s.valid[latency-1].out
    s.send.msg //= s.data[latency-1].out

    if expose:
      Field = Type.__bitstruct_fields__[ expose ]
      s.stage_val = [ OutPort() for _ in range( latency ) ]
      s.stage_key = [ OutPort( Field ) for _ in range( latency ) ]
      for i in range( latency ):
        s.stage_val[i] //= s.valid[i].out
        s.stage_key[i] //= getattr( s.data[i].out, expose )

  def line_trace( s ):
    return "".join( "*" if v.out else "." for v in s.valid )


class StallPipeCL:
  """The same stall rule on Python values (a helper object, not a component)."""

  def __init__( s, latency ):
    if latency < 1:
      raise ValueError( f"StallPipeCL: latency={latency} must be >= 1" )
    s.stages = [ None ] * latency

  def can_accept( s, out_rdy ):
    return s.stages[-1] is None or out_rdy

  def head( s ):
    return s.stages[-1]

  def tick( s, out_rdy, new_entry ):
    """Advance one cycle: `new_entry` (or None) enters when the pipe advances."""
    if s.can_accept( out_rdy ):
      s.stages = [ new_entry ] + s.stages[:-1]

  def line_trace( s ):
    return "".join( "." if x is None else "*" for x in s.stages )
