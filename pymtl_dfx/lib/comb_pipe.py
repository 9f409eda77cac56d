"""A combinational datapath behind a fixed-latency stall pipeline, at RTL.

The request bitstruct's fields are wired by name to the datapath's input
ports (a plain Bits request goes to the datapath's `a`), and the datapath's
`out` port enters the pipeline.  The datapath is
computed in the first stage; the remaining registers are left for the
synthesis tool to retime into it (Vivado, Yosys `-retime`), which is how a
DSP-based FP operator with a configurable depth is modelled.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from .pipeline import StallPipeRTL


class CombPipeRTL( Component ):

  def construct( s, ReqType, RespType, Datapath, latency, dpath_args=() ):
    s.recv = RecvIfcRTL( ReqType )
    s.send = SendIfcRTL( RespType )

    s.dpath = Datapath( *dpath_args )
    if hasattr( ReqType, "__bitstruct_fields__" ):
      for name in ReqType.__bitstruct_fields__:
        port, field = getattr( s.dpath, name ), getattr( s.recv.msg, name )
        if isinstance( port, list ):          # a vector operand, element by element
          for p, f in zip( port, field ):
            connect( p, f )
        else:
          connect( port, field )
    else:
      s.dpath.a //= s.recv.msg          # a unary operator's one operand

    s.pipe = StallPipeRTL( RespType, latency )
    s.pipe.recv.msg //= s.dpath.out
    s.pipe.recv.val //= s.recv.val
    s.pipe.recv.rdy //= s.recv.rdy
    s.send //= s.pipe.send

  def line_trace( s ):
    return f"{s.recv}({s.pipe.line_trace()}){s.send}"
