"""Round a normalised significand into FP16 {exponent, mantissa}, RNE.

Shared by the multiplier and the reciprocal.  `sig` holds the significand
with its leading one at the top bit; `exp` is the result's exponent field
plus `bias` (callers offset it so their arithmetic stays unsigned).  An
exponent field <= 0 is a subnormal result: the significand is shifted right
by 1 - field, at most `cap` (past the guard bit a larger shift only feeds
sticky).  Adding the round-up bit to the packed {exponent, mantissa} lets a
carry move a subnormal up to the smallest normal, or the largest finite
value up to inf, for free; `overflow` flags a field beyond the largest.
"""

from pymtl3 import *

from ...numerics.fp16 import EXP_BITS, EXP_MASK, MANT_BITS

PACK = EXP_BITS + MANT_BITS


class FP16RoundPack( Component ):

  def construct( s, sig_bits, cap, bias, exp_bits ):
    shift_bits = cap.bit_length()
    SHIFT_BITS = shift_bits
    OVERFLOW = bias + EXP_MASK
    wide = sig_bits + cap
    ExpT = mk_bits( EXP_BITS )
    WIDE = wide                            # names the translator can read as constants
    MANT_LO = wide - 1 - MANT_BITS
    GUARD = wide - 2 - MANT_BITS
    TOP = wide - 1

    s.sig      = InPort ( sig_bits )
    s.exp      = InPort ( exp_bits )
    s.out      = OutPort( PACK )
    s.overflow = OutPort()

    s.rshift  = Wire( shift_bits )
    s.field   = Wire( EXP_BITS )

    s.shifted = Wire( wide )
    s.pk      = Wire( PACK )

    @update
    def up_exponent():
      if s.exp > bias:
        s.rshift @= 0
      elif bias + 1 - s.exp > cap:
        s.rshift @= cap
      else:
        s.rshift @= trunc( bias + 1 - s.exp, SHIFT_BITS )
      s.field @= trunc( s.exp - bias, EXP_BITS )
      s.overflow @= s.exp >= OVERFLOW

    @update
    def up_round_pack():
      # `shifted` keeps the significand in its top bits; what is shifted
      # below them becomes guard and sticky
      s.shifted @= ( zext( s.sig, WIDE ) << cap ) >> zext( s.rshift, WIDE )
      if s.rshift == 0:
        s.pk @= concat( s.field, s.shifted[MANT_LO:TOP] )
      else:
        s.pk @= concat( ExpT(0), s.shifted[MANT_LO:TOP] )
      round_up = s.shifted[GUARD] & ( ( s.shifted[0:GUARD] != 0 ) | s.shifted[MANT_LO] )
      s.out @= s.pk + zext( round_up, PACK )

  def line_trace( s ):
    return f"{s.sig}>>{s.rshift}={s.out}"
