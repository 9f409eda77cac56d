"""A finished column tile through the matrix-side functions, lane by lane:
bias add (CONV1D), scale and causal mask (MASKEDMM), GELU (post-op), and
+0 past the matrix's last column.

Every lane always passes the adder, the multiplier and the GELU table, so
the stage has one latency: an unused adder adds -0 and an unused
multiplier multiplies by 1.0, both exact on every value the accumulator
produces.
"""

from pymtl3 import *

from ...isa import ComputeOp as C, PostOp
from ...isa.fields import OPCODE_BITS, POST_BITS
from ..fpu.FP16AddComb import FP16AddComb
from ..fpu.FP16GeluComb import FP16GeluComb
from ..fpu.FP16MulComb import FP16MulComb
from .msgs import FP16, Elems

NEG_ZERO, ONE, NEG_INF = 0x8000, 0x3C00, 0xFC00


class PostOpComb( Component ):

  def construct( s, l ):
    if l < 1 or l & ( l - 1 ):
      raise ValueError( f"PostOpComb: l={l} must be a power of two" )
    s.acc   = [ InPort( FP16 ) for _ in range( l ) ]
    s.bias  = [ InPort( FP16 ) for _ in range( l ) ]
    s.tile  = InPort( Elems )
    s.op    = InPort( mk_bits( OPCODE_BITS ) )
    s.post  = InPort( mk_bits( POST_BITS ) )
    s.scale = InPort( FP16 )
    s.mask  = InPort( Elems )
    s.cols  = InPort( Elems )
    s.out   = [ OutPort( FP16 ) for _ in range( l ) ]

    s.add  = [ FP16AddComb() for _ in range( l ) ]
    s.mul  = [ FP16MulComb() for _ in range( l ) ]
    s.gelu = [ FP16GeluComb() for _ in range( l ) ]
    s.col  = [ Wire( Elems ) for _ in range( l ) ]
    for j in range( l ):
      s.add[j].a   //= s.acc[j]
      s.add[j].sub //= 0
      s.mul[j].a   //= s.add[j].out

    log2_l = l.bit_length() - 1

    # two blocks: the GELU's input and its output must not share one
    # always_comb (Verilator would see a combinational loop through it)
    @update
    def up_post_operands():
      for j in range( l ):
        s.col[j] @= ( s.tile << log2_l ) + j
        s.add[j].b @= s.bias[j] if s.op == C.CONV1D else FP16( NEG_ZERO )
        s.mul[j].b @= s.scale if s.op == C.MASKEDMM else FP16( ONE )
        if ( s.op == C.MASKEDMM ) & ( s.col[j] >= s.mask ):
          s.gelu[j].a @= FP16( NEG_INF )
        else:
          s.gelu[j].a @= s.mul[j].out

    @update
    def up_post_select():
      for j in range( l ):
        if s.col[j] >= s.cols:
          s.out[j] @= 0
        elif s.post == PostOp.GELU:
          s.out[j] @= s.gelu[j].out
        else:
          s.out[j] @= s.gelu[j].a

  def line_trace( s ):
    return "|".join( f"{o}" for o in s.out )
