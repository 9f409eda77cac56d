"""A request -> response operator at FL and CL around a Python function.

Units whose CL and FL behaviour is "apply the golden function, with or
without the pipeline's timing" build on these two components, so the
numerics live in `pymtl_dfx.numerics` only.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL
from pymtl3.stdlib.stream.queue_adapters import RecvQueueAdapter, SendQueueAdapter

from .pipeline import StallPipeCL


class StreamOpFL( Component ):
  """Untimed: each request becomes `fn(req)` as soon as the output is free."""

  def construct( s, ReqType, RespType, fn ):
    s.recv = RecvIfcRTL( ReqType )
    s.send = SendIfcRTL( RespType )

    s.in_q  = RecvQueueAdapter( ReqType )
    s.out_q = SendQueueAdapter( RespType )
    s.in_q.recv  //= s.recv
    s.out_q.send //= s.send

    @update_once
    def up_fl():
      if s.in_q.deq.rdy() & s.out_q.enq.rdy():
        s.out_q.enq( fn( s.in_q.deq() ) )

  def line_trace( s ):
    return f"{s.recv}(){s.send}"


class StreamOpCL( Component ):
  """`fn(req)` behind a `latency`-stage stall pipeline, cycle-exact with RTL."""

  def construct( s, ReqType, RespType, fn, latency ):
    s.recv = RecvIfcRTL( ReqType )
    s.send = SendIfcRTL( RespType )

    s.pipe = StallPipeCL( latency )

    @update_once
    def up_cl_comb():
      head = s.pipe.head()
      s.send.val @= head is not None
      if head is not None:
        s.send.msg @= head
      s.recv.rdy @= ( head is None ) | s.send.rdy

    @update_ff
    def up_cl_seq():
      if s.reset:
        s.pipe = StallPipeCL( latency )
      else:
        out_rdy = bool( s.send.rdy )
        entry = fn( s.recv.msg ) if ( s.recv.val & s.pipe.can_accept( out_rdy ) ) else None
        s.pipe.tick( out_rdy, entry )

  def line_trace( s ):
    return f"{s.recv}({s.pipe.line_trace()}){s.send}"
