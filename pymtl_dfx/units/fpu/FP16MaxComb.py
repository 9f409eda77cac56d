"""Combinational FP16 comparator max, as `pymtl_dfx.numerics.maximum` defines it.

The datapath of `FP16MaxRTL`.  Values are ordered by sign and magnitude bits
(so -0 < +0, and no subtractor is needed): {exponent, mantissa} orders like
the magnitude, a positive value beats a negative one, and between two
negative values the smaller magnitude wins.  Any NaN operand gives the
canonical NaN, whatever its payload.
"""

from pymtl3 import *

from ...numerics.fp16 import FP_BITS, CANONICAL_NAN, EXP_BITS, MANT_BITS

SIGN = FP_BITS - 1
EXP_MAX = ( 1 << EXP_BITS ) - 1


class FP16MaxComb( Component ):

  def construct( s ):
    s.a   = InPort ( FP_BITS )
    s.b   = InPort ( FP_BITS )
    s.out = OutPort( FP_BITS )

    s.any_nan = Wire()
    s.b_wins  = Wire()

    @update
    def up_compare():
      a_nan = ( s.a[MANT_BITS:SIGN] == EXP_MAX ) & ( s.a[0:MANT_BITS] != 0 )
      b_nan = ( s.b[MANT_BITS:SIGN] == EXP_MAX ) & ( s.b[0:MANT_BITS] != 0 )
      s.any_nan @= a_nan | b_nan
      mag_gt = s.b[0:SIGN] > s.a[0:SIGN]
      mag_lt = s.b[0:SIGN] < s.a[0:SIGN]
      # equal patterns keep a, which is the same value
      s.b_wins @= ( ~s.a[SIGN] & ~s.b[SIGN] & mag_gt ) | \
                  ( s.a[SIGN] & ~s.b[SIGN] ) | \
                  ( s.a[SIGN] & s.b[SIGN] & mag_lt )

    @update
    def up_out():
      if s.any_nan:
        s.out @= CANONICAL_NAN
      elif s.b_wins:
        s.out @= s.b
      else:
        s.out @= s.a

  def line_trace( s ):
    return f"max({s.a},{s.b})={s.out}"
