"""A request -> response operator at FL and CL around a Python function.

Units whose CL and FL behaviour is "apply the golden function, with or
without the pipeline's timing" build on these two components, so the
numerics live in `pymtl_dfx.numerics` only.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from .pipeline import StallPipeCL


class StreamOpFL( Component ):
  """Untimed: a request is taken when the output register is free and becomes
  `fn(req)` there.  Two small blocks instead of queue adapters: a full-size
  GPT-2 runs thousands of cycles per token at FL, so per-cycle cost counts."""

  def construct( s, ReqType, RespType, fn ):
    s.recv = RecvIfcRTL( ReqType )
    s.send = SendIfcRTL( RespType )
    s.pending = None

    @update_once
    def up_fl_ports():
      s.send.val @= s.pending is not None
      if s.pending is not None:
        s.send.msg @= s.pending
      s.recv.rdy @= s.pending is None

    @update_ff
    def up_fl_state():
      if s.reset:
        s.pending = None
        return
      if s.send.val & s.send.rdy:
        s.pending = None
      if s.recv.val & s.recv.rdy:
        s.pending = fn( s.recv.msg )

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
