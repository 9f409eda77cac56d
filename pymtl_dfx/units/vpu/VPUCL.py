"""The vector processing unit, cycle-exact with `VPURTL`: the timing is
`timing.VPUTiming` (shared with `pymtl_dfx.perf`); this adds the values.

Three `StallPipeCL`s stand for the RTL's element-wise pipe, reduction-tree
pipe and accumulator pipe, and the control is the RTL's (`VPUCtrlRTL`,
`VPUAccumRTL`) on Python values: `decide` is the combinational part, computed
from this cycle's state and port values, `advance` the registers.  Values
come from the FL semantics one chunk at a time (`streams.execute` on one
chunk is that chunk's element-wise results or its tree result), and the
accumulator combines chunk results with `numerics.add` / `numerics.maximum`.
"""

import numpy as np

from pymtl3 import *

from ... import numerics
from ...config import DFXConfig
from ...numerics.fp16 import NEG_INF
from .msgs import BINARY, FP16
from .streams import execute
from .ports import declare_ports
from .timing import VPUTiming

NEG_ZERO = 0x8000


def _combine( is_max, acc_bits, chunk_bits ):
  a, b = numerics.from_bits( np.uint16( acc_bits ) ), numerics.from_bits( np.uint16( chunk_bits ) )
  return int( numerics.bits( numerics.maximum( a, b ) if is_max else numerics.add( a, b ) ) )


class _EngineCL( VPUTiming ):
  """`VPUTiming` (the one timing definition) with the values: a chunk's
  element-wise results or tree result from `streams.execute`, the
  accumulator's `numerics` combine."""

  def ew_values( s, n, a_msg, b_msg ):
    b = []
    if s.op in BINARY:
      if s.bcast and s.first:
        s.scalar = b_msg.clone()
      b = [ s.scalar if s.bcast else b_msg.clone() ]
    return execute( s.op, n, s.bcast, [ a_msg.clone() ], b, s.d )[0]

  def tree_value( s, n, a_msg ):
    return int( execute( s.op, n, 0, [ a_msg.clone() ], [], s.d )[0].v[0] )

  def combine( s, is_max, operand, value ):
    if operand is None:             # the first chunk of a reduction
      operand = NEG_INF if is_max else NEG_ZERO
    return _combine( is_max, operand, value )


class VPUCL( Component ):

  def construct( s, d, cfg=None ):
    s.cfg = cfg or DFXConfig( d=d )
    s.d = d
    s.Vec = declare_ports( s, d )
    s.eng = eng = _EngineCL( d, s.cfg )

    # out from state only, as at RTL; cmd.rdy, a.rdy and b.rdy depend on
    # a.val, b.val and out.rdy (an issue needs its operands and room).  Two
    # blocks, so an RTL manager (whose blocks read our rdy and write our val)
    # forms no loop with out; the handshake block is @update, a pure
    # function pymtl3 may iterate inside such a block-level cycle
    # (the state update decides again from the ports' final values).
    @update_once
    def up_vpu_cl_out():
      ew_head, acc_head = eng.ew_head(), eng.red_head()
      acc_out_val = acc_head is not None and acc_head[-1]
      s.out.val @= eng.out_val()
      if ew_head is not None:
        s.out.msg @= ew_head
      elif acc_out_val:
        s.out.msg @= s.Vec( [ FP16( acc_head[0] ) ] + [ FP16( 0 ) ] * ( s.d - 1 ) )

    @update
    def up_vpu_cl_comb():
      now = eng.decide( False, s.a.val, s.b.val, s.out.rdy )   # cmd.val: no rdy needs it
      s.cmd.rdy @= now.cmd_rdy
      s.a.rdy @= now.issue
      s.b.rdy @= now.issue & now.need_b

    @update_ff
    def up_vpu_cl_seq():
      if s.reset:
        eng.reset()
      else:
        eng.advance( eng.decide( s.cmd.val, s.a.val, s.b.val, s.out.rdy ),
                     s.cmd.msg, s.a.msg, s.b.msg )

  def line_trace( s ):
    e = s.eng
    return ( f"{s.cmd}|{s.a}|{s.b}(ew({e.ew_pipe.line_trace()}) tree({e.tree_pipe.line_trace()}) "
             f"acc({e.acc_pipe.line_trace()})"
             + ( f" gelu({e.gelu_pipe.line_trace()})" if s.cfg.vpu_gelu else "" ) + f"){s.out}" )
