"""A balanced combinational tree of a binary FP16 operator over n inputs.

Level by level, element 2i is combined with element 2i+1: the order
`numerics.reduce_sum` / `numerics.matvec` fix for one d-chunk (an adder
tree), and any order is exact for the comparator (a max tree).
"""

from pymtl3 import *

from .msgs import FP16


class FP16TreeComb( Component ):

  def construct( s, Op, n ):
    """Op: a two-input comb operator (`a`, `b` -> `out`; an adder's `sub` is
    tied to 0).  n: a power of two >= 2."""
    if n < 2 or n & ( n - 1 ):
      raise ValueError( f"FP16TreeComb: n={n} must be a power of two >= 2" )
    s.ins = [ InPort( FP16 ) for _ in range( n ) ]
    s.out = OutPort( FP16 )

    level = list( s.ins )
    depth = 0
    while len( level ) > 1:
      nodes = [ Op() for _ in range( len( level ) // 2 ) ]
      setattr( s, f"lvl{depth}", nodes )
      for i, node in enumerate( nodes ):
        node.a //= level[ 2 * i ]
        node.b //= level[ 2 * i + 1 ]
        if hasattr( node, "sub" ):
          node.sub //= 0
      level = [ node.out for node in nodes ]
      depth += 1
    s.out //= level[0]

  def line_trace( s ):
    return f"tree={s.out}"
