"""The VPU engine's control: the command register, the chunk counter, lane
masks and every handshake.

A command is taken when the engine is idle or in the cycle its predecessor's
last chunk issues, so chunks of consecutive instructions issue back to back.
A chunk issues when its a (and b) message is there and its pipe can take it.
Element-wise chunks and reduction chunks go down different pipes; to keep
results in instruction order a chunk waits until the other kind has drained
(counted by `ew_inflight` and `red_inflight`); with `cfg.vpu_max_tree` a
sum and a max reduction, which then go down different pipes, likewise;
with `cfg.vpu_gelu` a GELU chunk goes down its own pipe and waits until the
element-wise and reduction results have left, and they until the GELU
results have (`gelu_inflight`).
"""

from pymtl3 import *
from pymtl3.stdlib.basic_rtl import RegEn, RegRst

from ...config import DFXConfig
from ...isa import ComputeOp
from ...isa.formats import op_mask
from .msgs import LenT, OpT


class VPUCtrlRTL( Component ):

  def construct( s, d, cfg=None ):
    cfg = cfg or DFXConfig( d=d )
    # at most a pipe's depth of chunks (element-wise) or of instructions
    # (reductions: the tree's plus the one in the accumulator; with
    # interleaved partials up to the accumulator pipe's depth) are in flight
    in_accum = cfg.vpu_accum_latency if cfg.reduce_partials > 1 else 1
    EwCntT  = mk_bits( ( cfg.vpu_elementwise_latency + 1 ).bit_length() )
    RedCntT = mk_bits( ( cfg.vpu_tree_latency + 1 + in_accum ).bit_length() )
    MaskT   = mk_bits( d )

    # the command
    s.cmd_val   = InPort()
    s.cmd_rdy   = OutPort()
    s.cmd_op    = InPort( OpT )
    s.cmd_len   = InPort( LenT )
    s.cmd_bcast = InPort()
    # operand streams
    s.a_val = InPort()
    s.a_rdy = OutPort()
    s.b_val = InPort()
    s.b_rdy = OutPort()
    # to the datapath
    s.op         = OutPort( OpT )
    s.lane_mask  = OutPort( MaskT )   # lanes of this chunk within len
    s.bcast      = OutPort()
    s.first      = OutPort()          # this chunk is the instruction's first
    s.last       = OutPort()
    s.is_max     = OutPort()
    s.ew_val     = OutPort()          # the chunk enters the element-wise pipe
    s.ew_rdy     = InPort()
    s.tree_val   = OutPort()          # the chunk enters the reduction tree
    s.tree_rdy   = InPort()
    s.ew_done    = InPort()           # an element-wise result leaves
    s.red_done   = InPort()           # a reduction result leaves

    s.busy_r  = RegRst( Bits1 )
    s.op_r    = RegEn( OpT )
    s.bcast_r = RegEn( Bits1 )
    s.left_r  = RegEn( LenT )         # elements of this and the later chunks
    s.first_r = RegEn( Bits1 )
    s.ew_inflight  = RegRst( EwCntT )
    s.red_inflight = RegRst( RedCntT )

    # the opcode groups as constant masks indexed by the opcode (translatable)
    s.binary_ops = Wire( 1 << OpT.nbits )
    s.reduction_ops = Wire( 1 << OpT.nbits )
    s.max_ops = Wire( 1 << OpT.nbits )
    s.binary_ops //= op_mask( "is_binary" )
    s.reduction_ops //= op_mask( "is_reduction" )
    s.max_ops //= op_mask( "is_max_reduction" )

    s.is_red = Wire()
    s.need_b = Wire()
    s.room   = Wire()                 # the chunk's pipe can take it now
    s.issue  = Wire()
    s.take   = Wire()

    s.op    //= s.op_r.out
    s.bcast //= s.bcast_r.out
    s.first //= s.first_r.out

    @update
    def up_ctrl_decode():
      s.is_red @= s.reduction_ops[ s.op_r.out ]
      s.is_max @= s.max_ops[ s.op_r.out ]
      s.need_b @= s.binary_ops[ s.op_r.out ] & ( ~s.bcast_r.out | s.first_r.out )
      s.last @= s.left_r.out <= d
      for i in range( d ):
        s.lane_mask[i] @= s.left_r.out > i

    if cfg.vpu_gelu:
      s._gelu_issue( cfg )
    elif cfg.vpu_max_tree:
      s._max_tree_issue()
    else:
      @update
      def up_ctrl_issue():
        if s.is_red:
          s.room @= s.tree_rdy & ( s.ew_inflight.out == 0 )
        else:
          s.room @= s.ew_rdy & ( s.red_inflight.out == 0 )
        s.issue @= s.busy_r.out & s.a_val & ( ~s.need_b | s.b_val ) & s.room
        s.a_rdy @= s.issue
        s.b_rdy @= s.issue & s.need_b
        s.ew_val @= s.issue & ~s.is_red
        s.tree_val @= s.issue & s.is_red
        s.cmd_rdy @= ~s.busy_r.out | ( s.issue & s.last )
        s.take @= s.cmd_val & s.cmd_rdy

    @update
    def up_ctrl_next():
      s.busy_r.in_ @= s.take | ( s.busy_r.out & ~( s.issue & s.last ) )
      s.op_r.en    @= s.take
      s.op_r.in_   @= s.cmd_op
      s.bcast_r.en  @= s.take
      s.bcast_r.in_ @= s.cmd_bcast
      s.left_r.en  @= s.take | s.issue
      s.first_r.en @= s.take | s.issue
      s.first_r.in_ @= s.take
      if s.take:
        s.left_r.in_ @= s.cmd_len
      else:
        s.left_r.in_ @= s.left_r.out - d

    @update
    def up_ctrl_count():
      s.ew_inflight.in_ @= s.ew_inflight.out + zext( s.ew_val, EwCntT ) - zext( s.ew_done, EwCntT )
      s.red_inflight.in_ @= s.red_inflight.out + zext( s.tree_val & s.first_r.out, RedCntT ) \
                            - zext( s.red_done, RedCntT )

  def _max_tree_issue( s ):
    """`up_ctrl_issue` with the max reductions' own pipes (`vpu_max_tree`=1):
    a reduction chunk also waits until the reductions of the other kind
    (sum or max) have drained, so results leave in order; `red_max_r` is
    the kind of the last reduction chunk issued (of those in flight)."""
    s.red_max_r = RegEn( Bits1 )
    s.red_max_r.in_ //= s.is_max
    s.red_max_r.en //= s.tree_val

    # a block of its own, the default's restated with the kind rule, so the
    # default control's Verilog (and its ccache entry) stays as it was
    @update
    def up_ctrl_issue_max_tree():
      if s.is_red:
        s.room @= s.tree_rdy & ( s.ew_inflight.out == 0 ) & \
                  ( ( s.red_inflight.out == 0 ) | ( s.red_max_r.out == s.is_max ) )
      else:
        s.room @= s.ew_rdy & ( s.red_inflight.out == 0 )
      s.issue @= s.busy_r.out & s.a_val & ( ~s.need_b | s.b_val ) & s.room
      s.a_rdy @= s.issue
      s.b_rdy @= s.issue & s.need_b
      s.ew_val @= s.issue & ~s.is_red
      s.tree_val @= s.issue & s.is_red
      s.cmd_rdy @= ~s.busy_r.out | ( s.issue & s.last )
      s.take @= s.cmd_val & s.cmd_rdy

  def _gelu_issue( s, cfg ):
    """`up_ctrl_issue` with the GELU op's own pipe (`vpu_gelu`=1): a chunk
    waits until the pipes of the other kinds (element-wise, GELU,
    reductions) have drained; with `vpu_max_tree` a reduction also waits
    for the other reduction kind, as `_max_tree_issue`'s (`red_kind_ok`)."""
    GeluCntT = mk_bits( ( cfg.vpu_gelu_latency + 1 ).bit_length() )
    GELU = int( ComputeOp.GELU )
    s.gelu_val  = OutPort()
    s.gelu_rdy  = InPort()
    s.gelu_done = InPort()
    s.gelu_inflight = RegRst( GeluCntT )
    s.is_gelu = Wire()
    s.red_kind_ok = Wire()
    if cfg.vpu_max_tree:
      s.red_max_r = RegEn( Bits1 )
      s.red_max_r.in_ //= s.is_max
      s.red_max_r.en //= s.tree_val

      @update
      def up_ctrl_red_kind():
        s.red_kind_ok @= ( s.red_inflight.out == 0 ) | ( s.red_max_r.out == s.is_max )
    else:
      s.red_kind_ok //= 1

    @update
    def up_ctrl_issue_gelu():
      s.is_gelu @= s.op_r.out == GELU
      if s.is_red:
        s.room @= s.tree_rdy & ( s.ew_inflight.out == 0 ) & ( s.gelu_inflight.out == 0 ) & \
                  s.red_kind_ok
      elif s.is_gelu:
        s.room @= s.gelu_rdy & ( s.ew_inflight.out == 0 ) & ( s.red_inflight.out == 0 )
      else:
        s.room @= s.ew_rdy & ( s.red_inflight.out == 0 ) & ( s.gelu_inflight.out == 0 )
      s.issue @= s.busy_r.out & s.a_val & ( ~s.need_b | s.b_val ) & s.room
      s.a_rdy @= s.issue
      s.b_rdy @= s.issue & s.need_b
      s.ew_val @= s.issue & ~s.is_red & ~s.is_gelu
      s.tree_val @= s.issue & s.is_red
      s.gelu_val @= s.issue & s.is_gelu
      s.cmd_rdy @= ~s.busy_r.out | ( s.issue & s.last )
      s.take @= s.cmd_val & s.cmd_rdy

    @update
    def up_ctrl_count_gelu():
      s.gelu_inflight.in_ @= s.gelu_inflight.out + zext( s.gelu_val, GeluCntT ) \
                             - zext( s.gelu_done, GeluCntT )

  def line_trace( s ):
    state = "busy" if s.busy_r.out else "idle"
    return f"{state}:{int(s.left_r.out):>3}"
