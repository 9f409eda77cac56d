"""The VPU's chunk accumulator: combines chunk results in ascending order.

A chunk enters when the previous accumulation leaves the adder's pipe (its
result is the new chunk's operand; it is forwarded in the cycle it leaves),
so a reduction of C chunks spends C accumulator latencies here.  The first
chunk of an instruction is combined with the identity (-0 for a sum, -inf for
a max): -0 + x == x bit for bit for every adder output, and max(-inf, x) == x,
so every chunk takes the same path.  The last chunk's result leaves on `send`.
"""

from pymtl3 import *
from pymtl3.stdlib.basic_rtl import RegEn, RegRst
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...config import DFXConfig
from ...lib.pipeline import StallPipeRTL
from ...numerics.fp16 import NEG_INF
from ..fpu.FP16AddComb import FP16AddComb
from ..fpu.FP16MaxComb import FP16MaxComb
from .msgs import FP16, VPUAccMsg, VPUTreeMsg

NEG_ZERO = 0x8000


class VPUAccumRTL( Component ):

  def construct( s, latency=DFXConfig().vpu_accum_latency ):
    s.recv = RecvIfcRTL( VPUTreeMsg )
    s.send = SendIfcRTL( FP16 )

    s.pipe = StallPipeRTL( VPUAccMsg, latency )
    s.busy = RegRst( Bits1 )          # an accumulation is in the pipe
    s.acc  = RegEn( FP16 )            # the running value between chunks
    s.add  = FP16AddComb()
    s.max  = FP16MaxComb()

    s.leaving = Wire()
    s.operand = Wire( FP16 )          # the running value this chunk combines with

    s.add.sub //= 0
    s.add.b //= s.recv.msg.v
    s.max.b //= s.recv.msg.v
    s.add.a //= s.operand
    s.max.a //= s.operand

    s.acc.in_ //= s.pipe.send.msg.v
    s.acc.en  //= s.leaving
    s.send.msg //= s.pipe.send.msg.v

    @update
    def up_accum_ctrl():
      s.pipe.send.rdy @= ~s.pipe.send.msg.last | s.send.rdy
      s.send.val @= s.pipe.send.val & s.pipe.send.msg.last
      s.leaving @= s.pipe.send.val & s.pipe.send.rdy
      s.recv.rdy @= ~s.busy.out | s.leaving
      s.pipe.recv.val @= s.recv.val & s.recv.rdy
      s.busy.in_ @= ( s.recv.val & s.recv.rdy ) | ( s.busy.out & ~s.leaving )

    @update
    def up_accum_operand():
      if s.recv.msg.first:
        if s.recv.msg.is_max:
          s.operand @= NEG_INF
        else:
          s.operand @= NEG_ZERO
      elif s.leaving:
        s.operand @= s.pipe.send.msg.v
      else:
        s.operand @= s.acc.out

    @update
    def up_accum_combine():
      s.pipe.recv.msg.last @= s.recv.msg.last
      if s.recv.msg.is_max:
        s.pipe.recv.msg.v @= s.max.out
      else:
        s.pipe.recv.msg.v @= s.add.out

  def line_trace( s ):
    return f"acc({s.pipe.line_trace()})"
