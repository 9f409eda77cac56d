"""One MFU lane: d FP16 multipliers and a balanced FP16 adder tree.

Level by level, element 2i is added to element 2i+1, which is the order
`numerics.matvec` fixes for one d-chunk.
"""

from pymtl3 import *

from ..fpu.FP16AddComb import FP16AddComb
from ..fpu.FP16MulComb import FP16MulComb
from .msgs import FP16


class MFULaneComb( Component ):

  def construct( s, d ):
    if d < 2 or d & ( d - 1 ):
      raise ValueError( f"MFULaneComb: d={d} must be a power of two >= 2" )
    s.x   = [ InPort( FP16 ) for _ in range( d ) ]
    s.w   = [ InPort( FP16 ) for _ in range( d ) ]
    s.out = OutPort( FP16 )

    s.mul = [ FP16MulComb() for _ in range( d ) ]
    for i in range( d ):
      s.mul[i].a //= s.x[i]
      s.mul[i].b //= s.w[i]

    level = [ m.out for m in s.mul ]
    depth = 0
    while len( level ) > 1:
      adders = [ FP16AddComb() for _ in range( len( level ) // 2 ) ]
      setattr( s, f"add{depth}", adders )
      for i, a in enumerate( adders ):
        a.a   //= level[ 2 * i ]
        a.b   //= level[ 2 * i + 1 ]
        a.sub //= 0
      level = [ a.out for a in adders ]
      depth += 1
    s.out //= level[0]

  def line_trace( s ):
    return f"lane={s.out}"
