"""The MPU engine at CL: the RTL's three stall pipelines and its hazard rule
on Python values, so every message leaves in the RTL's cycle.  The timing
is `timing.MPUTiming` (shared with `pymtl_dfx.perf`); this adds the values.

Values come from `golden` (numerics), one stage's piece at a time; the
control follows `MPUSeqRTL`/`MPURTL` decision by decision, the tile order
from a `TileWalkerCL` (`tiling.tile_walk`, as the RTL's `TileWalkerRTL`).
"""

import numpy as np
from pymtl3 import *

from ...isa import ComputeOp as C, PostOp
from .golden import accumulate, finish, tile_max, tile_sums, to_array, to_fields
from .ports import declare_ports
from .timing import MPUTiming

F16 = np.float16


class _EngineCL( MPUTiming ):
  """`MPUTiming` (the one timing definition) with the values: each stage's
  piece from `golden`, the partial sums and the running maximum."""

  def reset( s ):
    s.psum = {}
    super().reset()

  def reset_values( s ):
    s.maxv = None

  def keep_cmd( s, cmd ):
    return cmd.clone()   # the net's value object is reused next cycle

  def issue_values( s, r, x_msg, w_msg ):
    return tile_sums( to_array( x_msg.v ), to_array( w_msg.v ), int( s.cur.rows ) - r * s.cfg.d )

  def acc_values( s, m ):
    return accumulate( None if m.first else s.psum[ m.entry ], m.s )

  def post_values( s, head, bias_msg ):
    bias = to_array( bias_msg.v ) if int( s.cur.op ) == C.CONV1D else None
    return finish( s.cur, head.tile, head.s, bias, s.cfg.l )

  def psum_write( s, head ):
    s.psum[ head.entry ] = head.s

  def out_values( s, t ):
    if int( s.cur.post ) == PostOp.REDMAX:
      s.maxv = tile_max( s.maxv, t.s, t.tile, int( s.cur.cols ) )


class MPUCL( Component ):

  def construct( s, cfg ):
    T = declare_ports( s, cfg )
    l = cfg.l
    s.eng = eng = _EngineCL( cfg )

    def out_msg():
      if eng.max_pending:
        return T["Out"]( 0, 1, to_fields( np.r_[ eng.maxv, np.zeros( l - 1, F16 ) ] ) )
      t = eng.post.head()
      return T["Out"]( t.tile, 0, to_fields( t.s ) )

    # cmd.rdy and out come from state only, as at RTL; x.rdy, w.rdy and
    # bias.rdy depend on the other inputs' vals and out.rdy (an issue needs
    # x and w, the pipelines advance when out drains).  Two blocks, so a
    # neighbour whose val depends on our rdy (an RTL weight FIFO's one block
    # writes w.val and reads w.rdy) forms no loop with the state outputs;
    # the handshake block is @update (pymtl3 may iterate it inside such a
    # block-level cycle; it is a pure function of ports and state) and the
    # state update decides again from the ports' final values.
    @update_once
    def up_mpu_cl_out():
      s.cmd.rdy @= eng.cmd_rdy()
      out_val = eng.out_val()
      s.out.val @= out_val
      if out_val:
        s.out.msg @= out_msg()

    @update
    def up_mpu_cl_rdy():
      g = eng.decide( False, s.x.val, s.w.val, s.bias.val, s.out.rdy )   # cmd.val: no rdy needs it
      s.x.rdy @= g["x_rdy"]
      s.w.rdy @= g["w_rdy"]
      s.bias.rdy @= g["bias_rdy"]

    @update_ff
    def up_mpu_cl_state():
      if s.reset:
        eng.reset()
      else:
        eng.decide( s.cmd.val, s.x.val, s.w.val, s.bias.val, s.out.rdy )
        eng.tick( s.cmd.msg, s.x.msg, s.w.msg, s.bias.msg )

  def line_trace( s ):
    e = s.eng
    return ( f"{s.x}{s.w}({e.taken}/{len( e.walk or () )} {e.mfu.line_trace()}|"
             f"{e.acc.line_trace()}|{e.post.line_trace()}){s.out}" )
