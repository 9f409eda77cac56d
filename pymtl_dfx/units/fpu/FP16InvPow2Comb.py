"""Combinational 2^-floor(log2|x|), exactly `numerics.tables.inv_pow2`.

The datapath of `FP16InvPow2RTL`.  Only the exponent field matters: the
result is a power of two whose exponent is the input's negated and clamped to
[-15, 14] (the clamp is what keeps both the result and the LayerNorm scaling
it feeds finite).  Subnormal and zero inputs count as exponent -14, so they
give 2^14; exponent 15 and inf give 2^-15, which is subnormal (a lone
mantissa bit).  NaN gives the canonical NaN.
"""

from pymtl3 import *

from ...numerics.fp16 import FP_BITS, SIGN_POS, CANONICAL_NAN, EXP_BIAS, EXP_BITS, MANT_BITS
from ...numerics.tables import INV_POW2_EMAX, INV_POW2_EMIN

EXP_MAX = ( 1 << EXP_BITS ) - 1
FIELD_MIN = INV_POW2_EMIN + EXP_BIAS        # subnormals count as this field
FIELD_SUB = INV_POW2_EMAX + EXP_BIAS        # from this field on: 2^-EMAX
# 2^-EMAX is subnormal: a lone mantissa bit (the smallest subnormal is
# 2^(1 - EXP_BIAS - MANT_BITS))
SUB_RESULT = 1 << ( EXP_BIAS - 1 + MANT_BITS - INV_POW2_EMAX )


class FP16InvPow2Comb( Component ):

  def construct( s ):
    s.a   = InPort ( FP_BITS )
    s.out = OutPort( FP_BITS )

    ExpT = mk_bits( EXP_BITS )

    @update
    def up_inv_pow2():
      exp = s.a[MANT_BITS:SIGN_POS]
      if ( exp == EXP_MAX ) & ( s.a[0:MANT_BITS] != 0 ):
        s.out @= CANONICAL_NAN
      elif exp >= FIELD_SUB:
        s.out @= SUB_RESULT
      elif exp < FIELD_MIN:
        s.out @= zext( ExpT( 2 * EXP_BIAS - FIELD_MIN ), FP_BITS ) << MANT_BITS
      else:
        s.out @= zext( ExpT( 2 * EXP_BIAS ) - exp, FP_BITS ) << MANT_BITS

  def line_trace( s ):
    return f"invpow2({s.a})={s.out}"
