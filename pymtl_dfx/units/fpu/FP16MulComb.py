"""Combinational IEEE binary16 multiplier (RNE, subnormals, inf, NaN).

The datapath of `FP16MultiplierRTL`.  The 11x11-bit significand product is
normalised with a leading-zero count (so subnormal operands work), shifted
right with sticky when the result is subnormal, and rounded to nearest even
by adding the round-up bit to the packed {exponent, mantissa}: a carry moves
into the exponent (subnormal -> normal, max -> inf) for free.  Every NaN
result is the canonical NaN, as `pymtl_dfx.numerics` specifies.
"""

from pymtl3 import *

from ...lib.lzc import LeadingZerosRTL

from .FP16RoundPack import FP16RoundPack

from ...numerics.fp16 import FP_BITS, SIGN_POS, CANONICAL_NAN, EXP_BIAS, EXP_BITS, MANT_BITS, POS_INF

SIG = MANT_BITS + 1
PROD = 2 * SIG                  # significand product width
EXP_MAX = (1 << EXP_BITS) - 1
# Exponent arithmetic is done with this offset so it never goes negative.
# A normalised product 1.f * 2^(ea + eb - lz - 2*bias + 1) has exponent field
# ea + eb - lz - bias + 1; with the offset, field = t - T_BIAS.
T_OFFSET = 2 * PROD
T_BIAS = T_OFFSET + EXP_BIAS - 1
T_BITS = ( T_OFFSET + 2 * EXP_MAX ).bit_length()
SHIFT_CAP = PROD + 2            # right shifts beyond this leave only sticky
PACK = FP_BITS - 1           # {exponent, mantissa} without the sign


class FP16MulComb( Component ):

  def construct( s ):
    s.a   = InPort ( FP_BITS )
    s.b   = InPort ( FP_BITS )
    s.out = OutPort( FP_BITS )

    ExpT  = mk_bits( EXP_BITS )
    SigT  = mk_bits( SIG )
    ProdT = mk_bits( PROD )
    TT    = mk_bits( T_BITS )
    LzT   = mk_bits( PROD.bit_length() )
    PackT = mk_bits( PACK )

    s.sign    = Wire()
    s.prod    = Wire( ProdT )
    s.lz      = Wire( LzT )
    s.t       = Wire( TT )
    s.norm    = Wire( ProdT )
    s.rounded = Wire( PackT )
    s.overflow = Wire()

    @update
    def up_product():
      s.sign @= s.a[SIGN_POS] ^ s.b[SIGN_POS]
      s.prod @= zext( concat( s.a[MANT_BITS:SIGN_POS] != 0, s.a[0:MANT_BITS] ), PROD ) * \
                zext( concat( s.b[MANT_BITS:SIGN_POS] != 0, s.b[0:MANT_BITS] ), PROD )

    s.lzc = LeadingZerosRTL( PROD )
    s.lzc.in_ //= s.prod
    s.lz //= s.lzc.out

    @update
    def up_exponent():
      ea = zext( s.a[MANT_BITS:SIGN_POS] | zext( s.a[MANT_BITS:SIGN_POS] == 0, EXP_BITS ), T_BITS )
      eb = zext( s.b[MANT_BITS:SIGN_POS] | zext( s.b[MANT_BITS:SIGN_POS] == 0, EXP_BITS ), T_BITS )
      s.t @= ea + eb + T_OFFSET - zext( s.lz, T_BITS )
      s.norm @= s.prod << zext( s.lz, PROD )

    s.round = FP16RoundPack( PROD, SHIFT_CAP, T_BIAS, T_BITS )
    s.round.sig //= s.norm
    s.round.exp //= s.t
    s.rounded   //= s.round.out
    s.overflow  //= s.round.overflow

    @update
    def up_out():
      a_exp_max = s.a[MANT_BITS:SIGN_POS] == EXP_MAX
      b_exp_max = s.b[MANT_BITS:SIGN_POS] == EXP_MAX
      a_zero = s.a[0:SIGN_POS] == 0
      b_zero = s.b[0:SIGN_POS] == 0
      a_nan = a_exp_max & ( s.a[0:MANT_BITS] != 0 )
      b_nan = b_exp_max & ( s.b[0:MANT_BITS] != 0 )
      if a_nan | b_nan | ( a_exp_max & b_zero ) | ( b_exp_max & a_zero ):
        s.out @= CANONICAL_NAN
      elif a_exp_max | b_exp_max | ( s.overflow & ( s.prod != 0 ) ):
        s.out @= concat( s.sign, PackT(POS_INF) )
      elif s.prod == 0:
        s.out @= concat( s.sign, PackT(0) )
      else:
        s.out @= concat( s.sign, s.rounded )

  def line_trace( s ):
    return f"{s.a}*{s.b}={s.out}"
