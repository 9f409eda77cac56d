"""One MFU lane: d FP16 multipliers and a balanced FP16 adder tree.

Level by level, element 2i is added to element 2i+1 (`FP16TreeComb`), which
is the order `numerics.matvec` fixes for one d-chunk.
"""

from pymtl3 import *

from ..fpu.FP16AddComb import FP16AddComb
from ..fpu.FP16MulComb import FP16MulComb
from ..fpu.FP16TreeComb import FP16TreeComb
from .msgs import FP16


class MFULaneComb( Component ):

  def construct( s, d ):
    s.x   = [ InPort( FP16 ) for _ in range( d ) ]
    s.w   = [ InPort( FP16 ) for _ in range( d ) ]
    s.out = OutPort( FP16 )

    s.mul = [ FP16MulComb() for _ in range( d ) ]
    s.tree = FP16TreeComb( FP16AddComb, d )
    for i in range( d ):
      s.mul[i].a //= s.x[i]
      s.mul[i].b //= s.w[i]
      s.tree.ins[i] //= s.mul[i].out
    s.out //= s.tree.out

  def line_trace( s ):
    return f"lane={s.out}"
