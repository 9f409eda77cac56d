"""Round a normalised significand into FP16 {exponent, mantissa}, RNE.

Shared by the multiplier and the reciprocal.  `sig` holds the significand
with its leading one at the top bit; `rshift` is 0 for a normal result
(whose exponent field is `field`) and the right shift into the subnormal
range otherwise, at most `cap` (the caller caps it: past the guard bit a
larger shift only feeds sticky).  Adding the round-up bit to the packed {exponent, mantissa} lets a
carry move a subnormal up to the smallest normal, or the largest finite
value up to inf, for free.
"""

from pymtl3 import *

from ...numerics.fp16 import EXP_BITS, MANT_BITS

PACK = EXP_BITS + MANT_BITS


class FP16RoundPack( Component ):

  def construct( s, sig_bits, cap ):
    shift_bits = cap.bit_length()
    wide = sig_bits + cap
    ExpT = mk_bits( EXP_BITS )
    WIDE = wide                            # names the translator can read as constants
    MANT_LO = wide - 1 - MANT_BITS
    GUARD = wide - 2 - MANT_BITS
    TOP = wide - 1

    s.sig    = InPort ( sig_bits )
    s.rshift = InPort ( shift_bits )
    s.field  = InPort ( EXP_BITS )
    s.out    = OutPort( PACK )

    s.shifted = Wire( wide )
    s.pk      = Wire( PACK )

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
