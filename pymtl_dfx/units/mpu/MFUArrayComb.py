"""The MFU: l lanes, each d multipliers and a balanced adder tree, sharing
one d-element input chunk (one d x l tile per cycle)."""

from pymtl3 import *

from .MFULaneComb import MFULaneComb
from .msgs import FP16


class MFUArrayComb( Component ):

  def construct( s, d, l ):
    s.x   = [ InPort( FP16 ) for _ in range( d ) ]
    s.w   = [ InPort( FP16 ) for _ in range( d * l ) ]   # column j: w[j*d : (j+1)*d]
    s.out = [ OutPort( FP16 ) for _ in range( l ) ]

    s.lane = [ MFULaneComb( d ) for _ in range( l ) ]
    for j in range( l ):
      for i in range( d ):
        s.lane[j].x[i] //= s.x[i]
        s.lane[j].w[i] //= s.w[ j * d + i ]
      s.out[j] //= s.lane[j].out

  def line_trace( s ):
    return "|".join( f"{o}" for o in s.out )
