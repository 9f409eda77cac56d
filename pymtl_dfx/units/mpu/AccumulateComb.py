"""Partial-sum accumulation: psum + chunk sum for each of l columns.

The first row chunk of a column starts the sum: it is added to -0, which
returns an adder output unchanged (canonical NaN included), so the
accumulator needs no bypass multiplexer on its output.
"""

from pymtl3 import *

from ..fpu.FP16AddComb import FP16AddComb
from .msgs import FP16

NEG_ZERO = 0x8000


class AccumulateComb( Component ):

  def construct( s, l ):
    s.psum  = [ InPort( FP16 ) for _ in range( l ) ]
    s.sums  = [ InPort( FP16 ) for _ in range( l ) ]
    s.first = InPort()
    s.out   = [ OutPort( FP16 ) for _ in range( l ) ]

    s.add = [ FP16AddComb() for _ in range( l ) ]
    for j in range( l ):
      s.add[j].b   //= s.sums[j]
      s.add[j].sub //= 0
      s.out[j]     //= s.add[j].out

    @update
    def up_acc_operand():
      for j in range( l ):
        s.add[j].a @= FP16( NEG_ZERO ) if s.first else s.psum[j]

  def line_trace( s ):
    return "|".join( f"{o}" for o in s.out )
