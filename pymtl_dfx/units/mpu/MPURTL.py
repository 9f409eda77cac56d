"""The MPU engine at RTL: MFU -> accumulator -> post-ops, three stall pipelines.

- MFU: one d x l tile per cycle through l tree MACs (`mfu_lane_latency`).
- Accumulator: adds each column tile's chunk sums to its partial-sum entry
  (`fp_add_latency`).  A tile whose entry is still being accumulated waits:
  the chunks of a column must be added in ascending order, one after the
  other; the zigzag turn of the traversal meets this every row chunk (the
  raster walk, `DFXConfig.mpu_raster_walk`, only where a band is narrower
  than the adder's latency).
- Post-ops: bias, scale and mask, GELU (`timing.post_latency`), then out; the
  REDMAX maximum is kept beside the output and sent last.

A command is accepted when the previous one has sent its last output.
"""

from pymtl3 import *
from pymtl3.stdlib.basic_rtl import RegisterFile

from ...isa import ComputeOp as C
from ...lib.pipeline import StallPipeRTL
from ..fpu.FP16MaxComb import FP16MaxComb
from ..fpu.FP16TreeComb import FP16TreeComb
from .AccumulateComb import AccumulateComb
from .MFUArrayComb import MFUArrayComb
from .MPUSeqRTL import MPUSeqRasterRTL, MPUSeqRTL
from .PostOpComb import PostOpComb
from .msgs import FP16
from .ports import declare_ports

NEG_INF = 0xFC00


class MPURTL( Component ):

  def construct( s, cfg ):
    T = declare_ports( s, cfg )
    d, l = cfg.d, cfg.l

    Seq = MPUSeqRasterRTL if cfg.mpu_raster_walk else MPUSeqRTL
    s.seq = Seq( d, l, cfg.psum_entries, T["Entry"] )
    s.seq.cmd //= s.cmd

    # MFU stage: input lanes outside the matrix (past rows) enter as +0,
    # x and the tile's weights alike (the weight element j*d + i is row i
    # of column j), so the padding rows of a tile in memory never reach a
    # product (+0 * inf would be NaN, +0 * -w is -0)
    s.mfu = MFUArrayComb( d, l )

    @update
    def up_mask_lanes():
      for i in range( d ):
        if s.seq.rows_left > i:
          s.mfu.x[i] @= s.x.msg.v[i]
          for j in range( l ):
            s.mfu.w[ j * d + i ] @= s.w.msg.v[ j * d + i ]
        else:
          s.mfu.x[i] @= FP16( 0 )
          for j in range( l ):
            s.mfu.w[ j * d + i ] @= FP16( 0 )

    s.mfu_pipe = StallPipeRTL( T["Sums"], cfg.mfu_lane_latency )
    for f in ( "entry", "first", "last", "tile" ):
      connect( getattr( s.mfu_pipe.recv.msg, f ), getattr( s.seq, f ) )
    for j in range( l ):
      s.mfu_pipe.recv.msg.s[j] //= s.mfu.out[j]

    # accumulator stage
    s.psum = RegisterFile( T["Bias"], cfg.psum_entries )
    s.accu = AccumulateComb( l )
    s.psum.raddr[0] //= s.mfu_pipe.send.msg.entry
    s.accu.first //= s.mfu_pipe.send.msg.first
    s.acc_pipe = StallPipeRTL( T["Acc"], cfg.fp_add_latency, expose="entry" )
    for f in ( "entry", "first", "last", "tile" ):
      connect( getattr( s.acc_pipe.recv.msg, f ), getattr( s.mfu_pipe.send.msg, f ) )
    for j in range( l ):
      s.accu.psum[j] //= s.psum.rdata[0].v[j]
      s.accu.sums[j] //= s.mfu_pipe.send.msg.s[j]
      s.acc_pipe.recv.msg.s[j] //= s.accu.out[j]

    s.psum.waddr[0] //= s.acc_pipe.send.msg.entry
    for j in range( l ):
      s.psum.wdata[0].v[j] //= s.acc_pipe.send.msg.s[j]

    if not s._post_stages( cfg, T ):     # post-op stage: every operator in one pipe
      s.postop = PostOpComb( l )
      s.postop.tile //= s.acc_pipe.send.msg.tile
      for f in ( "op", "post", "scale", "mask", "cols" ):
        connect( getattr( s.postop, f ), getattr( s.seq.cur, f ) )
      s.post_pipe = StallPipeRTL( T["Post"], cfg.mpu_post_latency )
      s.post_pipe.recv.msg.tile //= s.acc_pipe.send.msg.tile
      for j in range( l ):
        s.postop.acc[j] //= s.acc_pipe.send.msg.s[j]
        s.postop.bias[j] //= s.bias.msg.v[j]
        s.post_pipe.recv.msg.v[j] //= s.postop.out[j]

    # REDMAX: running maximum of the columns inside the matrix
    s.max_tree = FP16TreeComb( FP16MaxComb, l ) if l > 1 else None
    s.max_acc  = FP16MaxComb()
    s.maxv     = Wire( FP16 )
    log2_l = l.bit_length() - 1

    @update
    def up_max_lanes():
      for j in range( l ):
        if ( ( s.post_pipe.send.msg.tile << log2_l ) + j ) < s.seq.cur.cols:
          s.max_tree.ins[j] @= s.post_pipe.send.msg.v[j]
        else:
          s.max_tree.ins[j] @= FP16( NEG_INF )

    s.max_acc.a //= s.maxv
    s.max_acc.b //= s.max_tree.out

    @update_ff
    def up_maxv():
      if s.reset | s.seq.cmd_fire:
        s.maxv <<= FP16( NEG_INF )
      elif s.post_pipe.send.val & s.post_pipe.send.rdy:
        s.maxv <<= s.max_acc.out

    # handshakes, from the output back to the input (one block per stage so
    # that no block both reads and drives a pipeline's ready)
    @update
    def up_out():
      s.out.val @= s.seq.max_pending | s.post_pipe.send.val
      s.post_pipe.send.rdy @= s.out.rdy & ~s.seq.max_pending
      s.seq.out_fire @= s.post_pipe.send.val & s.out.rdy & ~s.seq.max_pending
      s.seq.max_fire @= s.seq.max_pending & s.out.rdy
      # every bit assigned on every path (no latch): the tile's lanes, zeroed
      # under the maximum, whose value then takes lane 0
      s.out.msg.max @= s.seq.max_pending
      s.out.msg.tile @= 0 if s.seq.max_pending else s.post_pipe.send.msg.tile
      for j in range( l ):
        s.out.msg.v[j] @= s.post_pipe.send.msg.v[j] & sext( ~s.seq.max_pending, FP16 )
      if s.seq.max_pending:
        s.out.msg.v[0] @= s.maxv

    @update
    def up_post_in():
      needs_bias = s.seq.cur.op == C.CONV1D
      finished = s.acc_pipe.send.val & s.acc_pipe.send.msg.last
      s.post_pipe.recv.val @= finished & ( ~needs_bias | s.bias.val )
      s.bias.rdy @= finished & needs_bias & s.post_pipe.recv.rdy
      s.acc_pipe.send.rdy @= ~s.acc_pipe.send.msg.last | \
                             ( s.post_pipe.recv.rdy & ( ~needs_bias | s.bias.val ) )
      s.psum.wen[0] @= s.acc_pipe.send.val & ~s.acc_pipe.send.msg.last

    s.hazard = Wire()

    @update
    def up_acc_in():
      s.hazard @= 0
      for i in range( cfg.fp_add_latency ):
        if s.acc_pipe.stage_val[i] & ( s.acc_pipe.stage_key[i] == s.mfu_pipe.send.msg.entry ):
          s.hazard @= 1
      s.acc_pipe.recv.val @= s.mfu_pipe.send.val & ~s.hazard
      s.mfu_pipe.send.rdy @= s.acc_pipe.recv.rdy & ~s.hazard

    @update
    def up_issue():
      s.mfu_pipe.recv.val @= s.seq.issue_val & s.x.val & s.w.val
      s.x.rdy @= s.seq.issue_val & s.w.val & s.mfu_pipe.recv.rdy
      s.w.rdy @= s.seq.issue_val & s.x.val & s.mfu_pipe.recv.rdy
      s.seq.issue_fire @= s.seq.issue_val & s.x.val & s.w.val & s.mfu_pipe.recv.rdy

  def _post_stages( s, cfg, T ):
    """With `mpu_post_bypass` the post-op stage is `PostOpPipeRTL`: the
    adder, multiplier and GELU table as stages a command passes only if it
    uses them, with the one pipe's recv and send (True); else nothing is
    built here (False).  Built in this method, after the update blocks,
    so that the default's Verilog, which quotes their lines, is unchanged."""
    if not cfg.mpu_post_bypass:
      return False
    from .PostOpPipeRTL import PostOpPipeRTL
    s.post_pipe = PostOpPipeRTL( cfg, T["Post"] )
    for f in ( "op", "post", "scale", "mask", "cols" ):
      connect( getattr( s.post_pipe, f ), getattr( s.seq.cur, f ) )
    s.post_pipe.recv.msg.tile //= s.acc_pipe.send.msg.tile
    for j in range( cfg.l ):
      s.post_pipe.recv.msg.v[j] //= s.acc_pipe.send.msg.s[j]
      s.post_pipe.bias[j] //= s.bias.msg.v[j]
    return True

  def line_trace( s ):
    return ( f"{s.x}{s.w}({s.seq.line_trace()} {s.mfu_pipe.line_trace()}|"
             f"{s.acc_pipe.line_trace()}|{s.post_pipe.line_trace()}){s.out}" )
