"""One element-wise lane of the VPU: every element-wise operator, and the
opcode picks the result (LOAD/STORE pass `a` through)."""

from pymtl3 import *

from ...isa import ComputeOp as C
from ..fpu.FP16AddComb import FP16AddComb
from ..fpu.FP16ExpComb import FP16ExpComb
from ..fpu.FP16InvPow2Comb import FP16InvPow2Comb
from ..fpu.FP16MulComb import FP16MulComb
from ..fpu.FP16RecipComb import FP16RecipComb
from ..fpu.FP16RsqrtComb import FP16RsqrtComb
from .msgs import FP16, OpT

ADD, SUB, MUL = int( C.ADD ), int( C.SUB ), int( C.MUL )
RECIP, RSQRT, EXP, INVPOW2 = int( C.RECIP ), int( C.RSQRT ), int( C.EXP ), int( C.INVPOW2 )


class VPULaneComb( Component ):

  def construct( s ):
    s.op  = InPort ( OpT )
    s.a   = InPort ( FP16 )
    s.b   = InPort ( FP16 )
    s.out = OutPort( FP16 )

    s.add = FP16AddComb()
    s.mul = FP16MulComb()
    s.add.a //= s.a
    s.add.b //= s.b
    s.add.sub //= lambda: s.op == SUB
    s.mul.a //= s.a
    s.mul.b //= s.b
    s.recip   = FP16RecipComb()
    s.rsqrt   = FP16RsqrtComb()
    s.exp     = FP16ExpComb()
    s.invpow2 = FP16InvPow2Comb()
    for unit in ( s.recip, s.rsqrt, s.exp, s.invpow2 ):
      unit.a //= s.a

    @update
    def up_select():
      if ( s.op == ADD ) | ( s.op == SUB ):
        s.out @= s.add.out
      elif s.op == MUL:
        s.out @= s.mul.out
      elif s.op == RECIP:
        s.out @= s.recip.out
      elif s.op == RSQRT:
        s.out @= s.rsqrt.out
      elif s.op == EXP:
        s.out @= s.exp.out
      elif s.op == INVPOW2:
        s.out @= s.invpow2.out
      else:
        s.out @= s.a

  def line_trace( s ):
    return f"{s.a},{s.b}->{s.out}"
