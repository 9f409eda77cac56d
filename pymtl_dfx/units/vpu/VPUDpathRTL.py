"""The VPU engine's datapath: d element-wise lanes behind one pipe, and the
reduction path (d-wide sum and max trees behind one pipe, then the
accumulator: `VPUAccumRTL`, or `VPUAccumPartialsRTL` with
`cfg.reduce_partials` > 1); their results merge onto `out`.  With
`cfg.vpu_max_tree` the max tree has its own pipe and accumulator
(`VPUMaxAccumRTL`), so a max reduction's steps take the comparator's latency.
With `cfg.vpu_gelu` d GELU lanes (`FP16GeluComb`, the MPU post-op's table)
feed their own pipe of `vpu_gelu_latency` (`gelu_val` / `gelu_done`).

Reduction padding: lanes past len enter the trees as +0 (sum) or -inf (max),
the identities, so a short last chunk reduces like `numerics` pads it;
REDMAXABS clears the sign bits first.  Element-wise results past len are +0.
"""

from pymtl3 import *
from pymtl3.stdlib.basic_rtl import RegEn
from pymtl3.stdlib.stream.ifcs import SendIfcRTL

from ...config import DFXConfig
from ...isa import ComputeOp as C
from ...lib.pipeline import StallPipeRTL
from ...numerics.fp16 import NEG_INF
from ..fpu.FP16AddComb import FP16AddComb
from ..fpu.FP16GeluComb import FP16GeluComb
from ..fpu.FP16MaxComb import FP16MaxComb
from ..fpu.FP16TreeComb import FP16TreeComb
from .msgs import FP16, OpT, VPUTreeMsg, mk_fp16_vec
from .VPUAccumPartialsRTL import VPUAccumPartialsRTL
from .VPUAccumRTL import VPUAccumRTL
from .VPUMaxAccumRTL import VPUMaxAccumRTL
from .VPULaneComb import VPULaneComb

REDMAXABS = int( C.REDMAXABS )
MAG = ( 1 << ( FP16.nbits - 1 ) ) - 1     # every bit but the sign


class VPUDpathRTL( Component ):

  def construct( s, d, cfg=None ):
    cfg = cfg or DFXConfig( d=d )
    Vec = mk_fp16_vec( d )

    s.a_msg = InPort( Vec )
    s.b_msg = InPort( Vec )
    s.out   = SendIfcRTL( Vec )
    # from the control
    s.op        = InPort( OpT )
    s.lane_mask = InPort( mk_bits( d ) )
    s.bcast     = InPort()
    s.first     = InPort()
    s.last      = InPort()
    s.is_max    = InPort()
    s.ew_val    = InPort()
    s.ew_rdy    = OutPort()
    s.tree_val  = InPort()
    s.tree_rdy  = OutPort()
    s.ew_done   = OutPort()
    s.red_done  = OutPort()

    s.a = [ Wire( FP16 ) for _ in range( d ) ]
    s.b = [ Wire( FP16 ) for _ in range( d ) ]
    for i in range( d ):
      s.a[i] //= s.a_msg.v[i]
      s.b[i] //= s.b_msg.v[i]

    # a broadcast scalar arrives once, with the first chunk
    s.scalar = RegEn( FP16 )
    s.scalar.in_ //= s.b[0]
    s.scalar.en //= lambda: s.bcast & s.first & s.ew_val

    # element-wise lanes
    s.lane = [ VPULaneComb() for _ in range( d ) ]
    s.lane_b = [ Wire( FP16 ) for _ in range( d ) ]
    s.ew_pipe = StallPipeRTL( Vec, cfg.vpu_elementwise_latency )
    for i in range( d ):
      s.lane[i].op //= s.op
      s.lane[i].a //= s.a[i]
      s.lane[i].b //= s.lane_b[i]

    @update
    def up_lane_operands():
      for i in range( d ):
        if ~s.bcast:
          s.lane_b[i] @= s.b[i]
        elif s.first:
          s.lane_b[i] @= s.b[0]
        else:
          s.lane_b[i] @= s.scalar.out

    s.ew_res = [ Wire( FP16 ) for _ in range( d ) ]
    for i in range( d ):
      s.ew_pipe.recv.msg.v[i] //= s.ew_res[i]

    @update
    def up_lane_mask():
      for i in range( d ):
        if s.lane_mask[i]:
          s.ew_res[i] @= s.lane[i].out
        else:
          s.ew_res[i] @= 0

    s.ew_pipe.recv.val //= s.ew_val
    s.ew_rdy //= s.ew_pipe.recv.rdy

    # reduction path
    s.sum_in = [ Wire( FP16 ) for _ in range( d ) ]
    s.max_in = [ Wire( FP16 ) for _ in range( d ) ]
    s.sum_tree = FP16TreeComb( FP16AddComb, d )
    s.max_tree = FP16TreeComb( FP16MaxComb, d )
    for i in range( d ):
      s.sum_tree.ins[i] //= s.sum_in[i]
      s.max_tree.ins[i] //= s.max_in[i]

    @update
    def up_tree_inputs():
      for i in range( d ):
        if ~s.lane_mask[i]:
          s.sum_in[i] @= 0
          s.max_in[i] @= NEG_INF
        elif s.op == REDMAXABS:
          s.sum_in[i] @= s.a[i]
          s.max_in[i] @= s.a[i] & MAG
        else:
          s.sum_in[i] @= s.a[i]
          s.max_in[i] @= s.a[i]

    s.tree_pipe = StallPipeRTL( VPUTreeMsg, cfg.vpu_tree_latency )
    if cfg.vpu_max_tree:
      s._max_reduction_path( cfg )
    else:
      s.tree_pipe.recv.val //= s.tree_val
      s.tree_rdy //= s.tree_pipe.recv.rdy
      s.tree_pipe.recv.msg.is_max //= s.is_max
      s.tree_pipe.recv.msg.first //= s.first
      s.tree_pipe.recv.msg.last //= s.last

      @update
      def up_tree_select():
        if s.is_max:
          s.tree_pipe.recv.msg.v @= s.max_tree.out
        else:
          s.tree_pipe.recv.msg.v @= s.sum_tree.out

    if cfg.reduce_partials > 1:   # interleaved partial sums, then their combine
      s.accum = VPUAccumPartialsRTL( cfg.vpu_accum_latency, cfg.reduce_partials )
    else:
      s.accum = VPUAccumRTL( cfg.vpu_accum_latency )
    s.accum.recv //= s.tree_pipe.send

    # results leave in instruction order: the control never lets both paths
    # hold results at once
    s.out_v = [ Wire( FP16 ) for _ in range( d ) ]
    s.ew_head = [ Wire( FP16 ) for _ in range( d ) ]
    for i in range( d ):
      s.out.msg.v[i] //= s.out_v[i]
      s.ew_head[i] //= s.ew_pipe.send.msg.v[i]

    if cfg.vpu_gelu:
      s._gelu_path( d, cfg, Vec )
      s._gelu_out( d, cfg.vpu_max_tree )
    elif cfg.vpu_max_tree:
      s._max_out( d )
    else:
      @update
      def up_out():
        s.out.val @= s.ew_pipe.send.val | s.accum.send.val
        s.ew_pipe.send.rdy @= s.out.rdy
        s.accum.send.rdy @= s.out.rdy
        s.ew_done @= s.ew_pipe.send.val & s.out.rdy
        s.red_done @= s.accum.send.val & s.out.rdy
        for i in range( d ):
          if s.ew_pipe.send.val:
            s.out_v[i] @= s.ew_head[i]
          elif i == 0:
            s.out_v[i] @= s.accum.send.msg
          else:
            s.out_v[i] @= 0

  def _max_reduction_path( s, cfg ):
    """`vpu_max_tree`=1: the max tree feeds its own pipe of comparator
    steps and `VPUMaxAccumRTL`; the sum tree alone feeds `tree_pipe`.  A
    chunk goes down its kind's pipe (the control keeps the kinds apart)."""
    s.max_pipe = StallPipeRTL( VPUTreeMsg, cfg.vpu_max_tree_latency )
    s.max_pipe.recv.msg.v //= s.max_tree.out
    s.max_pipe.recv.msg.is_max //= s.is_max
    s.max_pipe.recv.msg.first //= s.first
    s.max_pipe.recv.msg.last //= s.last
    s.tree_pipe.recv.msg.v //= s.sum_tree.out
    s.tree_pipe.recv.msg.is_max //= s.is_max
    s.tree_pipe.recv.msg.first //= s.first
    s.tree_pipe.recv.msg.last //= s.last
    s.max_accum = VPUMaxAccumRTL( cfg.vpu_max_accum_latency )
    s.max_accum.recv //= s.max_pipe.send

    @update
    def up_tree_route():
      s.tree_pipe.recv.val @= s.tree_val & ~s.is_max
      s.max_pipe.recv.val @= s.tree_val & s.is_max
      if s.is_max:
        s.tree_rdy @= s.max_pipe.recv.rdy
      else:
        s.tree_rdy @= s.tree_pipe.recv.rdy

  def _max_out( s, d ):
    """`up_out` with the comparator accumulator's results (`vpu_max_tree`=1):
    at most one of the three paths holds results at once."""

    @update
    def up_out_max_tree():
      s.out.val @= s.ew_pipe.send.val | s.accum.send.val | s.max_accum.send.val
      s.ew_pipe.send.rdy @= s.out.rdy
      s.accum.send.rdy @= s.out.rdy
      s.max_accum.send.rdy @= s.out.rdy
      s.ew_done @= s.ew_pipe.send.val & s.out.rdy
      s.red_done @= ( s.accum.send.val | s.max_accum.send.val ) & s.out.rdy
      for i in range( d ):
        if s.ew_pipe.send.val:
          s.out_v[i] @= s.ew_head[i]
        elif i == 0:
          if s.max_accum.send.val:
            s.out_v[i] @= s.max_accum.send.msg
          else:
            s.out_v[i] @= s.accum.send.msg
        else:
          s.out_v[i] @= 0

  def _gelu_path( s, d, cfg, Vec ):
    """`vpu_gelu`=1: the GELU lanes on a (lanes past len give +0, as the
    element-wise lanes do) into their own pipe, as deep as the GELU table."""
    s.gelu_val  = InPort()
    s.gelu_rdy  = OutPort()
    s.gelu_done = OutPort()
    s.gelu = [ FP16GeluComb() for _ in range( d ) ]
    s.gelu_res = [ Wire( FP16 ) for _ in range( d ) ]
    s.gelu_pipe = StallPipeRTL( Vec, cfg.vpu_gelu_latency )
    for i in range( d ):
      s.gelu[i].a //= s.a[i]
      s.gelu_pipe.recv.msg.v[i] //= s.gelu_res[i]
    s.gelu_pipe.recv.val //= s.gelu_val
    s.gelu_rdy //= s.gelu_pipe.recv.rdy

    @update
    def up_gelu_mask():
      for i in range( d ):
        if s.lane_mask[i]:
          s.gelu_res[i] @= s.gelu[i].out
        else:
          s.gelu_res[i] @= 0

  def _gelu_out( s, d, max_tree ):
    """`up_out` with the GELU pipe's results (`vpu_gelu`=1), the reduction
    results those of the one or two accumulators (`red_val`, `red_msg`):
    at most one pipe holds results at once."""
    s.red_val = Wire()
    s.red_msg = Wire( FP16 )
    s.gelu_head = [ Wire( FP16 ) for _ in range( d ) ]
    for i in range( d ):
      s.gelu_head[i] //= s.gelu_pipe.send.msg.v[i]
    if max_tree:
      @update
      def up_red_head_max_tree():
        s.red_val @= s.accum.send.val | s.max_accum.send.val
        s.max_accum.send.rdy @= s.out.rdy
        if s.max_accum.send.val:
          s.red_msg @= s.max_accum.send.msg
        else:
          s.red_msg @= s.accum.send.msg
    else:
      s.red_val //= s.accum.send.val
      s.red_msg //= s.accum.send.msg

    @update
    def up_out_gelu():
      s.out.val @= s.ew_pipe.send.val | s.gelu_pipe.send.val | s.red_val
      s.ew_pipe.send.rdy @= s.out.rdy
      s.gelu_pipe.send.rdy @= s.out.rdy
      s.accum.send.rdy @= s.out.rdy
      s.ew_done @= s.ew_pipe.send.val & s.out.rdy
      s.gelu_done @= s.gelu_pipe.send.val & s.out.rdy
      s.red_done @= s.red_val & s.out.rdy
      for i in range( d ):
        if s.ew_pipe.send.val:
          s.out_v[i] @= s.ew_head[i]
        elif s.gelu_pipe.send.val:
          s.out_v[i] @= s.gelu_head[i]
        elif i == 0:
          s.out_v[i] @= s.red_msg
        else:
          s.out_v[i] @= 0

  def line_trace( s ):
    gelu = f" gelu({s.gelu_pipe.line_trace()})" if hasattr( s, "gelu_pipe" ) else ""
    return s._line_trace() + gelu

  def _line_trace( s ):
    if hasattr( s, "max_accum" ):
      return ( f"ew({s.ew_pipe.line_trace()}) tree({s.tree_pipe.line_trace()}) "
               f"{s.accum.line_trace()} max({s.max_pipe.line_trace()}) {s.max_accum.line_trace()}" )
    return f"ew({s.ew_pipe.line_trace()}) tree({s.tree_pipe.line_trace()}) {s.accum.line_trace()}"
