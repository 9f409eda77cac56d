"""The max reductions' own chunk accumulator (`DFXConfig.vpu_max_tree`=1): a
comparator with one running value, behind a pipe of `vpu_max_accum_latency`.

The handshake is `VPUAccumRTL`'s: a chunk enters when the previous
comparison leaves the pipe (forwarded in the cycle it leaves), the first
chunk of an instruction is compared with -inf (max(-inf, x) == x), and the
last chunk's result leaves on `send`.  Only max reductions come here, so
there is no adder and no is_max select.  The control block restates
`VPUAccumRTL`'s rather than sharing a submodule with it: moving that block
into one would change the default VPU's Verilog (and every default model's
ccache entry) for no change in behaviour.
"""

from pymtl3 import *
from pymtl3.stdlib.basic_rtl import RegEn, RegRst
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...config import DFXConfig
from ...lib.pipeline import StallPipeRTL
from ...numerics.fp16 import NEG_INF
from ..fpu.FP16MaxComb import FP16MaxComb
from .msgs import FP16, VPUAccMsg, VPUTreeMsg


class VPUMaxAccumRTL( Component ):

  def construct( s, latency=DFXConfig().vpu_max_accum_latency ):
    s.recv = RecvIfcRTL( VPUTreeMsg )
    s.send = SendIfcRTL( FP16 )

    s.pipe = StallPipeRTL( VPUAccMsg, latency )
    s.busy = RegRst( Bits1 )          # a comparison is in the pipe
    s.acc  = RegEn( FP16 )            # the running value between chunks
    s.max  = FP16MaxComb()

    s.leaving = Wire()
    s.operand = Wire( FP16 )          # the running value this chunk is compared with

    s.max.b //= s.recv.msg.v
    s.max.a //= s.operand
    s.pipe.recv.msg.v //= s.max.out
    s.pipe.recv.msg.last //= s.recv.msg.last

    s.acc.in_ //= s.pipe.send.msg.v
    s.acc.en  //= s.leaving
    s.send.msg //= s.pipe.send.msg.v

    @update
    def up_max_accum_ctrl():
      s.pipe.send.rdy @= ~s.pipe.send.msg.last | s.send.rdy
      s.send.val @= s.pipe.send.val & s.pipe.send.msg.last
      s.leaving @= s.pipe.send.val & s.pipe.send.rdy
      s.recv.rdy @= ~s.busy.out | s.leaving
      s.pipe.recv.val @= s.recv.val & s.recv.rdy
      s.busy.in_ @= ( s.recv.val & s.recv.rdy ) | ( s.busy.out & ~s.leaving )

    @update
    def up_max_accum_operand():
      if s.recv.msg.first:
        s.operand @= NEG_INF
      elif s.leaving:
        s.operand @= s.pipe.send.msg.v
      else:
        s.operand @= s.acc.out

  def line_trace( s ):
    return f"maxacc({s.pipe.line_trace()})"
