"""Combinational IEEE binary16 adder/subtractor (RNE, subnormals, inf, NaN).

The datapath of `FP16AdderRTL`.  Algorithm: swap so |x| >= |y|, align y with
guard/round/sticky bits, add or subtract the 14-bit extended significands,
normalise (carry shifts right; cancellation shifts left but never below the
smallest exponent, which yields subnormals), then round to nearest even by
adding the round-up bit to the packed {exponent, mantissa} so that a carry
moves into the exponent (subnormal -> normal, max -> inf) for free.
Every NaN result is the canonical NaN, as `pymtl_dfx.numerics` specifies.
"""

from pymtl3 import *

from ...lib.lzc import LeadingZerosRTL

from ...numerics.fp16 import FP_BITS, SIGN_POS, CANONICAL_NAN, EXP_BITS, MANT_BITS, POS_INF

SIG = MANT_BITS + 1             # significand with the hidden bit
EXT = SIG + 3                   # plus guard, round, sticky
EXP_MAX = (1 << EXP_BITS) - 1
SUMW = EXT + 1                  # with the carry out
EXPW = EXP_BITS + 1           # exponent with room for the carry
PACK = FP_BITS - 1           # {exponent, mantissa} without the sign


class FP16AddComb( Component ):

  def construct( s ):
    s.a   = InPort ( FP_BITS )
    s.b   = InPort ( FP_BITS )
    s.sub = InPort ()           # 1: a - b
    s.out = OutPort( FP_BITS )

    ExpT  = mk_bits( EXP_BITS )
    ExpW  = mk_bits( EXPW )
    SigT  = mk_bits( SIG )
    ExtT  = mk_bits( EXT )
    SumT  = mk_bits( EXT + 1 )
    ShT   = mk_bits( EXP_BITS )
    LzT   = mk_bits( EXT.bit_length() )
    PackT = mk_bits( PACK )

    s.b_sign  = Wire()
    s.swap    = Wire()
    s.x_sign  = Wire(); s.y_sign = Wire()
    s.x_exp   = Wire( ExpT ); s.y_exp = Wire( ExpT )
    s.x_sig   = Wire( SigT ); s.y_sig = Wire( SigT )
    s.shamt   = Wire( ShT )
    s.y_ext   = Wire( ExtT )
    s.sum     = Wire( SumT )
    s.lz      = Wire( LzT )
    s.norm    = Wire( ExtT )
    s.n_exp   = Wire( ExpW )
    s.pk      = Wire( PackT )
    s.rounded = Wire( PackT )
    s.special = Wire()
    s.special_val = Wire( FP_BITS )

    @update
    def up_unpack():
      s.b_sign @= s.b[SIGN_POS] ^ s.sub
      # compare magnitudes as integers: {exp, mant} orders like the value
      s.swap @= s.b[0:SIGN_POS] > s.a[0:SIGN_POS]
      if s.swap:
        s.x_sign @= s.b_sign
        s.y_sign @= s.a[SIGN_POS]
        s.x_exp  @= s.b[MANT_BITS:SIGN_POS]
        s.y_exp  @= s.a[MANT_BITS:SIGN_POS]
        s.x_sig  @= concat( s.b[MANT_BITS:SIGN_POS] != 0, s.b[0:MANT_BITS] )
        s.y_sig  @= concat( s.a[MANT_BITS:SIGN_POS] != 0, s.a[0:MANT_BITS] )
      else:
        s.x_sign @= s.a[SIGN_POS]
        s.y_sign @= s.b_sign
        s.x_exp  @= s.a[MANT_BITS:SIGN_POS]
        s.y_exp  @= s.b[MANT_BITS:SIGN_POS]
        s.x_sig  @= concat( s.a[MANT_BITS:SIGN_POS] != 0, s.a[0:MANT_BITS] )
        s.y_sig  @= concat( s.b[MANT_BITS:SIGN_POS] != 0, s.b[0:MANT_BITS] )

    @update
    def up_align():
      # subnormals have the same effective exponent as exponent field 1
      s.shamt @= ( s.x_exp | zext( s.x_exp == 0, EXP_BITS ) ) - ( s.y_exp | zext( s.y_exp == 0, EXP_BITS ) )
      if s.shamt >= EXT:
        s.y_ext @= zext( s.y_sig != 0, EXT )
      else:
        s.y_ext @= ( zext( s.y_sig, EXT ) << 3 ) >> zext( s.shamt, EXT )
        # sticky: any one shifted out of the window
        if ( ( zext( s.y_sig, EXT ) << 3 ) & ( ( ExtT(1) << zext( s.shamt, EXT ) ) - 1 ) ) != 0:
          s.y_ext @= s.y_ext | 1

    @update
    def up_add():
      if s.x_sign ^ s.y_sign:
        s.sum @= ( zext( s.x_sig, SUMW ) << 3 ) - zext( s.y_ext, SUMW )
      else:
        s.sum @= ( zext( s.x_sig, SUMW ) << 3 ) + zext( s.y_ext, SUMW )

    s.lzc = LeadingZerosRTL( EXT )
    s.lzc.in_ //= s.sum[0:EXT]
    s.lz //= s.lzc.out

    @update
    def up_normalise():
      x_eff = zext( s.x_exp | zext( s.x_exp == 0, EXP_BITS ), EXPW )
      if s.sum[EXT]:
        # carry out: shift right, keep the shifted-out bit as sticky
        s.norm  @= s.sum[1:EXT+1] | zext( s.sum[0], EXT )
        s.n_exp @= x_eff + 1
      elif zext( s.lz, EXPW ) < x_eff:
        s.norm  @= s.sum[0:EXT] << zext( s.lz, EXT )
        s.n_exp @= x_eff - zext( s.lz, EXPW )
      else:
        # cancellation reaches the smallest exponent: subnormal (field 0)
        s.norm  @= s.sum[0:EXT] << zext( x_eff - 1, EXT )
        s.n_exp @= 0

    @update
    def up_round():
      # packed {exponent field, 10-bit mantissa}: an all-zero or subnormal
      # result has no hidden one at the top of `norm`
      if s.norm[EXT-1]:
        s.pk @= concat( s.n_exp[0:EXP_BITS], s.norm[3:EXT-1] )
      else:
        s.pk @= concat( ExpT(0), s.norm[3:EXT-1] )
      round_up = s.norm[2] & ( s.norm[1] | s.norm[0] | s.norm[3] )
      s.rounded @= s.pk + zext( round_up, PACK )

    @update
    def up_special():
      a_exp_max = s.a[MANT_BITS:SIGN_POS] == EXP_MAX
      b_exp_max = s.b[MANT_BITS:SIGN_POS] == EXP_MAX
      a_nan = a_exp_max & ( s.a[0:MANT_BITS] != 0 )
      b_nan = b_exp_max & ( s.b[0:MANT_BITS] != 0 )
      a_inf = a_exp_max & ( s.a[0:MANT_BITS] == 0 )
      b_inf = b_exp_max & ( s.b[0:MANT_BITS] == 0 )
      s.special @= a_exp_max | b_exp_max
      if a_nan | b_nan | ( a_inf & b_inf & ( s.a[SIGN_POS] ^ s.b_sign ) ):
        s.special_val @= CANONICAL_NAN
      elif a_inf:
        s.special_val @= concat( s.a[SIGN_POS], PackT(POS_INF) )
      else:
        s.special_val @= concat( s.b_sign, PackT(POS_INF) )

    @update
    def up_out():
      if s.special:
        s.out @= s.special_val
      elif s.sum == 0:
        # exact zero: -0 only when both operands are -0
        s.out @= concat( s.x_sign & s.y_sign, PackT(0) )
      elif s.n_exp >= EXP_MAX:
        s.out @= concat( s.x_sign, PackT(POS_INF) )
      else:
        s.out @= concat( s.x_sign, s.rounded )

  def line_trace( s ):
    return f"{s.a}{'-' if s.sub else '+'}{s.b}={s.out}"
