"""The MPU engine at CL: the RTL's three stall pipelines and its hazard rule
on Python values, so every message leaves in the RTL's cycle.

Values come from `golden` (numerics), one stage's piece at a time; the
control follows `MPUSeqRTL`/`MPURTL` decision by decision, the tile order
from a `TileWalkerCL` (`tiling.tile_walk`, as the RTL's `TileWalkerRTL`).
"""

import numpy as np
from pymtl3 import *

from ...compiler.tiling import ceil_div
from ...isa import ComputeOp as C, PostOp
from ...lib.pipeline import StallPipeCL
from ...lib.tile_walker import TileWalkerCL
from .golden import accumulate, finish, tile_max, tile_sums, to_array, to_fields
from .ports import declare_ports

F16 = np.float16


class _Tile:
  """What travels down the pipelines with a tile's values."""
  __slots__ = ( "entry", "first", "last", "tile", "s" )

  def __init__( s, entry, first, last, tile, values ):
    s.entry, s.first, s.last, s.tile, s.s = entry, first, last, tile, values


class MPUCL( Component ):

  def construct( s, cfg ):
    T = declare_ports( s, cfg )
    d, l = cfg.d, cfg.l

    def reset_state():
      s.cur = None
      s.active = s.issuing = s.max_pending = False
      s.walk, s.n_c = None, 0
      s.taken = s.outs = 0
      s.maxv = None
      s.psum = {}
      s.mfu = StallPipeCL( cfg.mfu_lane_latency )
      s.acc = StallPipeCL( cfg.fp_add_latency )
      s.post = StallPipeCL( cfg.mpu_post_latency )
      s.go = {}

    reset_state()

    def decide( cmd_val, x_val, w_val, bias_val, out_rdy ):
      """This cycle's handshakes, in the RTL's order (output back to input)."""
      g = {}
      g["cmd"] = cmd_val and not s.active
      g["out_val"] = s.max_pending or s.post.head() is not None
      g["post_rdy"] = out_rdy and not s.max_pending
      g["out_fire"] = s.post.head() is not None and g["post_rdy"]
      g["max_fire"] = s.max_pending and out_rdy
      post_adv = s.post.can_accept( g["post_rdy"] )
      conv = s.cur is not None and int( s.cur.op ) == C.CONV1D
      head = s.acc.head()
      last = head is not None and head.last
      g["post_in"] = last and ( not conv or bias_val )
      g["bias_rdy"] = last and conv and post_adv
      g["acc_rdy"] = not last or ( post_adv and ( not conv or bias_val ) )
      g["psum_write"] = head is not None and not head.last
      acc_adv = s.acc.can_accept( g["acc_rdy"] )
      mhead = s.mfu.head()
      hazard = mhead is not None and any( t is not None and t.entry == mhead.entry
                                          for t in s.acc.stages )
      g["acc_in"] = mhead is not None and not hazard
      g["mfu_rdy"] = acc_adv and not hazard
      mfu_adv = s.mfu.can_accept( g["mfu_rdy"] )
      issue = s.active and s.issuing
      g["x_rdy"] = issue and w_val and mfu_adv
      g["w_rdy"] = issue and x_val and mfu_adv
      g["issue"] = issue and x_val and w_val and mfu_adv
      s.go = g
      return g

    def out_msg():
      if s.max_pending:
        return T["Out"]( 0, 1, to_fields( np.r_[ s.maxv, np.zeros( l - 1, F16 ) ] ) )
      t = s.post.head()
      return T["Out"]( t.tile, 0, to_fields( t.s ) )

    def tick( cmd_msg, x_msg, w_msg, bias_msg ):
      g = s.go
      if g["cmd"]:
        s.cur = cmd_msg.clone()
        s.active = s.issuing = True
        s.max_pending = False
        s.n_c = ceil_div( int( s.cur.cols ), l )
        s.walk = TileWalkerCL( ceil_div( int( s.cur.rows ), d ), s.n_c, 0, cfg.psum_entries )
        s.taken = s.outs = 0
        s.maxv = None
        return
      # values entering each pipeline this cycle
      post_new = acc_new = mfu_new = None
      if g["post_in"]:
        head = s.acc.head()
        bias = to_array( bias_msg.v ) if int( s.cur.op ) == C.CONV1D else None
        post_new = _Tile( 0, 0, 0, head.tile, finish( s.cur, head.tile, head.s, bias, l ) )
      if g["acc_in"]:
        m = s.mfu.head()
        acc_new = _Tile( m.entry, m.first, m.last, m.tile,
                         accumulate( None if m.first else s.psum[ m.entry ], m.s ) )
      if g["issue"]:
        w = s.walk
        r, c = w.rc()
        mfu_new = _Tile( w.pos(), w.r_first(), w.r_last(), c,
                         tile_sums( to_array( x_msg.v ), to_array( w_msg.v ),
                                    int( s.cur.rows ) - r * d ) )
        s.taken += 1
        s.issuing = not w.last()
        w.step()
      if g["psum_write"]:
        head = s.acc.head()
        s.psum[ head.entry ] = head.s
      if g["out_fire"]:
        t = s.post.head()
        if int( s.cur.post ) == PostOp.REDMAX:
          s.maxv = tile_max( s.maxv, t.s, t.tile, int( s.cur.cols ) )
        s.outs += 1
        if s.outs == s.n_c:
          if int( s.cur.post ) == PostOp.REDMAX:
            s.max_pending = True
          else:
            s.active = False
      if g["max_fire"]:
        s.max_pending = False
        s.active = False
      s.post.tick( g["post_rdy"], post_new )
      s.acc.tick( g["acc_rdy"], acc_new )
      s.mfu.tick( g["mfu_rdy"], mfu_new )

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
      s.cmd.rdy @= not s.active
      out_val = s.max_pending or s.post.head() is not None
      s.out.val @= out_val
      if out_val:
        s.out.msg @= out_msg()

    @update
    def up_mpu_cl_rdy():
      g = decide( False, s.x.val, s.w.val, s.bias.val, s.out.rdy )   # cmd.val: no rdy needs it
      s.x.rdy @= g["x_rdy"]
      s.w.rdy @= g["w_rdy"]
      s.bias.rdy @= g["bias_rdy"]

    @update_ff
    def up_mpu_cl_state():
      if s.reset:
        reset_state()
      else:
        decide( s.cmd.val, s.x.val, s.w.val, s.bias.val, s.out.rdy )
        tick( s.cmd.msg, s.x.msg, s.w.msg, s.bias.msg )

  def line_trace( s ):
    return ( f"{s.x}{s.w}({s.taken}/{len( s.walk or () )} {s.mfu.line_trace()}|"
             f"{s.acc.line_trace()}|{s.post.line_trace()}){s.out}" )
