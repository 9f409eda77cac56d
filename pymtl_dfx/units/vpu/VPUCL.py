"""The vector processing unit, cycle-exact with `VPURTL`.

Three `StallPipeCL`s stand for the RTL's element-wise pipe, reduction-tree
pipe and accumulator pipe, and the control is the RTL's (`VPUCtrlRTL`,
`VPUAccumRTL`) on Python values: `_decide` is the combinational part, computed
from this cycle's state and port values, `_advance` the registers.  Values
come from the FL semantics one chunk at a time (`streams.execute` on one
chunk is that chunk's element-wise results or its tree result), and the
accumulator combines chunk results with `numerics.add` / `numerics.maximum`.
"""

from types import SimpleNamespace

import numpy as np

from pymtl3 import *

from ... import numerics
from ...config import DFXConfig
from ...isa import ComputeOp
from ...lib.pipeline import StallPipeCL
from ...numerics.fp16 import NEG_INF
from .msgs import BINARY, FP16, MAX_REDUCTIONS, REDUCTIONS
from .streams import execute
from .ports import declare_ports

NEG_ZERO = 0x8000


def _combine( is_max, acc_bits, chunk_bits ):
  a, b = numerics.from_bits( np.uint16( acc_bits ) ), numerics.from_bits( np.uint16( chunk_bits ) )
  return int( numerics.bits( numerics.maximum( a, b ) if is_max else numerics.add( a, b ) ) )


class VPUCL( Component ):

  def construct( s, d, cfg=None ):
    s.cfg = cfg or DFXConfig( d=d )
    s.d = d
    s.Vec = declare_ports( s, d )
    s.reset_state()

    # out from state only, as at RTL; cmd.rdy, a.rdy and b.rdy depend on
    # a.val, b.val and out.rdy (an issue needs its operands and room).  Two
    # blocks, so an RTL manager (whose blocks read our rdy and write our val)
    # forms no loop with out; the handshake block is @update, a pure
    # function pymtl3 may iterate inside such a block-level cycle
    # (`_advance` decides again from the ports' final values).
    @update_once
    def up_vpu_cl_out():
      ew_head, acc_head = s.ew_pipe.head(), s.acc_pipe.head()
      acc_out_val = acc_head is not None and acc_head[1]
      s.out.val @= ew_head is not None or acc_out_val
      if ew_head is not None:
        s.out.msg @= ew_head
      elif acc_out_val:
        s.out.msg @= s.Vec( [ FP16( acc_head[0] ) ] + [ FP16( 0 ) ] * ( s.d - 1 ) )

    @update
    def up_vpu_cl_comb():
      now = s._decide( False, s.a.val, s.b.val, s.out.rdy )   # cmd.val: no rdy needs it
      s.cmd.rdy @= now.cmd_rdy
      s.a.rdy @= now.issue
      s.b.rdy @= now.issue & now.need_b

    @update_ff
    def up_vpu_cl_seq():
      if s.reset:
        s.reset_state()
      else:
        s._advance()

  def reset_state( s ):
    cfg = s.cfg
    s.ew_pipe   = StallPipeCL( cfg.vpu_elementwise_latency )
    s.tree_pipe = StallPipeCL( cfg.vpu_tree_latency )   # (value, is_max, first, last)
    s.acc_pipe  = StallPipeCL( cfg.vpu_accum_latency )  # (value, last)
    s.acc_busy, s.acc_val = False, 0
    s.busy, s.op, s.bcast, s.left, s.first = False, None, 0, 0, False
    s.scalar = None
    s.ew_inflight = s.red_inflight = 0

  def _decide( s, cmd_val, a_val, b_val, out_rdy ):
    now = SimpleNamespace()
    cmd_val, a_val, b_val, out_rdy = bool( cmd_val ), bool( a_val ), bool( b_val ), bool( out_rdy )
    now.out_rdy = out_rdy
    # results
    ew_head, acc_head = s.ew_pipe.head(), s.acc_pipe.head()
    acc_out_val = acc_head is not None and acc_head[1]
    now.out_val = ew_head is not None or acc_out_val
    now.ew_done = ew_head is not None and out_rdy
    now.red_done = acc_out_val and out_rdy
    # accumulator
    now.acc_send_rdy = acc_head is None or not acc_head[1] or out_rdy
    now.leaving = acc_head is not None and now.acc_send_rdy
    now.accum_rdy = not s.acc_busy or now.leaving
    now.acc_enter = s.tree_pipe.head() is not None and now.accum_rdy
    # control
    is_red = s.op in REDUCTIONS
    now.need_b = s.op in BINARY and ( not s.bcast or s.first )
    now.last = s.left <= s.d
    if is_red:
      room = s.tree_pipe.can_accept( now.accum_rdy ) and s.ew_inflight == 0
    else:
      room = s.ew_pipe.can_accept( out_rdy ) and s.red_inflight == 0
    now.issue = s.busy and a_val and ( not now.need_b or b_val ) and room
    now.is_red = is_red
    now.cmd_rdy = not s.busy or ( now.issue and now.last )
    now.take = cmd_val and now.cmd_rdy
    return now

  def _advance( s ):
    now = s._decide( s.cmd.val, s.a.val, s.b.val, s.out.rdy )
    d = s.d
    # the chunk that issues this cycle
    ew_entry = tree_entry = None
    if now.issue:
      n = min( s.left, d )
      if now.is_red:
        value = execute( s.op, n, 0, [ s.a.msg.clone() ], [], d )[0].v[0]
        tree_entry = ( int( value ), s.op in MAX_REDUCTIONS, s.first, now.last )
      else:
        b = []
        if s.op in BINARY:
          if s.bcast and s.first:
            s.scalar = s.b.msg.clone()
          b = [ s.scalar if s.bcast else s.b.msg.clone() ]
        ew_entry = execute( s.op, n, s.bcast, [ s.a.msg.clone() ], b, d )[0]
    # the accumulator
    acc_entry = None
    acc_head = s.acc_pipe.head()
    if now.acc_enter:
      value, is_max, first, last = s.tree_pipe.head()
      if first:
        operand = NEG_INF if is_max else NEG_ZERO
      elif now.leaving:
        operand = acc_head[0]
      else:
        operand = s.acc_val
      acc_entry = ( _combine( is_max, operand, value ), last )
    if now.leaving:
      s.acc_val = acc_head[0]
    s.acc_busy = now.acc_enter or ( s.acc_busy and not now.leaving )
    s.acc_pipe.tick( now.acc_send_rdy, acc_entry )
    s.tree_pipe.tick( now.accum_rdy, tree_entry )
    s.ew_pipe.tick( now.out_rdy, ew_entry )
    s.ew_inflight += ( ew_entry is not None ) - now.ew_done
    s.red_inflight += ( tree_entry is not None and s.first ) - now.red_done
    # the command register
    if now.take:
      s.busy, s.op = True, ComputeOp( int( s.cmd.msg.op ) )
      s.bcast, s.left, s.first = int( s.cmd.msg.bcast ), int( s.cmd.msg.len ), True
    elif now.issue:
      s.left -= d
      s.first = False
      if now.last:
        s.busy = False

  def line_trace( s ):
    return ( f"{s.cmd}|{s.a}|{s.b}(ew({s.ew_pipe.line_trace()}) tree({s.tree_pipe.line_trace()}) "
             f"acc({s.acc_pipe.line_trace()})){s.out}" )
