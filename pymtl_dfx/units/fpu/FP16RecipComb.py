"""Combinational FP16 reciprocal, exactly `numerics.tables.recip`.

The datapath of `FP16RecipRTL`.  The input is normalised (a leading-zero
count turns a subnormal into 2^E * 1.f, as `numerics.fp16.normalise`), the
fraction f indexes a 1024-entry ROM of 1/(1.f) built from
`numerics.tables.recip_table`, and the entry is scaled by 2^-E: only the
exponent changes, except in the subnormal range, where the significand is
shifted right and rounded to nearest even once (the only rounding beyond the
table's); a result beyond the largest exponent is inf.

`FP16NormaliseComb` is here too and `FP16RsqrtComb` reuses it, so both
units normalise their input with the same hardware.
"""

from pymtl3 import *

from ...lib.lzc import LeadingZerosRTL

from .FP16RoundPack import FP16RoundPack

from ...lib.rom import RomRTL

from ...numerics.fp16 import (FP_BITS, CANONICAL_NAN, EXP_BIAS, EXP_BITS, MANT_BITS,
                              POS_INF, bits)
from ...numerics.tables import recip_table

PACK = FP_BITS - 1              # {exponent, mantissa} without the sign
SIG = MANT_BITS + 1             # significand with the hidden bit
EXP_MAX = ( 1 << EXP_BITS ) - 1
LZ_BITS = MANT_BITS.bit_length()   # counts 0 .. MANT_BITS

# The normaliser reports H = E + H_BIAS, which is never negative for a
# non-zero input (the smallest subnormal, 2^-24, has H = 0), so exponent
# arithmetic stays unsigned.  A normal input has H = field + SUB_TOP; a
# subnormal one SUB_TOP - lz.
SUB_TOP = MANT_BITS - 1
H_BIAS = EXP_BIAS + SUB_TOP
H_MAX = EXP_MAX - 1 + SUB_TOP   # the largest finite input
H_BITS = H_MAX.bit_length()

# The result's exponent field is te - E = te + H_BIAS - H, which is negative
# in the subnormal range; F carries it plus F_OFF, so that F >= te >= 1.
F_OFF = H_MAX - H_BIAS
F_BITS = ( EXP_MAX + H_BIAS + F_OFF ).bit_length()
# Right shifts beyond SIG + 1 leave every bit below the guard bit (sticky)
# and round to zero, like any longer shift.
SHIFT_CAP = SIG + 1


def rom_values( table ):
  """Bit patterns of an FP16 table, checked to be positive, normal and finite:
  the datapaths give every entry a hidden one and an exponent in 1 .. 30."""
  values = [ int( v ) for v in bits( table ).reshape( -1 ) ]
  for i, v in enumerate( values ):
    field = ( v >> MANT_BITS ) & EXP_MAX
    if v >> PACK or field == 0 or field == EXP_MAX:
      raise ValueError( f"table entry {i} = {v:#06x} is not a positive normal FP16" )
  return values


class FP16NormaliseComb( Component ):
  """|x| = 2^(h - H_BIAS) * (1 + frac / 2^MANT_BITS) for a non-zero finite x;
  h and frac are meaningless for zero, inf and NaN (the callers decode them)."""

  def construct( s ):
    s.a   = InPort ( FP_BITS )
    s.h    = OutPort( H_BITS )
    s.frac = OutPort( MANT_BITS )

    s.lz = Wire( LZ_BITS )

    s.lzc = LeadingZerosRTL( MANT_BITS )
    s.lzc.in_ //= s.a[0:MANT_BITS]
    s.lz //= s.lzc.out

    @update
    def up_normalise():
      if s.a[MANT_BITS:PACK] == 0:
        # the leading one becomes the hidden bit and leaves the fraction
        s.h    @= SUB_TOP - zext( s.lz, H_BITS )
        s.frac @= s.a[0:MANT_BITS] << zext( s.lz + 1, MANT_BITS )
      else:
        s.h    @= zext( s.a[MANT_BITS:PACK], H_BITS ) + SUB_TOP
        s.frac @= s.a[0:MANT_BITS]

  def line_trace( s ):
    return f"{s.a}:h={s.h},f={s.frac}"


class FP16RecipComb( Component ):

  def construct( s ):
    s.a   = InPort ( FP_BITS )
    s.out = OutPort( FP_BITS )

    FpT   = mk_bits( FP_BITS )
    ExpT  = mk_bits( EXP_BITS )
    FT    = mk_bits( F_BITS )
    PackT = mk_bits( PACK )

    s.norm = FP16NormaliseComb()
    s.norm.a //= s.a

    s.rom = RomRTL( FpT, rom_values( recip_table() ) )
    s.rom.addr //= s.norm.frac

    s.t       = Wire( FpT )
    s.f       = Wire( FT )
    s.rounded = Wire( PackT )
    s.overflow = Wire()

    s.t //= s.rom.out

    @update
    def up_exponent():
      s.f @= zext( s.t[MANT_BITS:PACK], F_BITS ) + ( H_BIAS + F_OFF ) - zext( s.norm.h, F_BITS )

    s.sig   = Wire( SIG )

    @update
    def up_sig():
      s.sig @= concat( Bits1(1), s.t[0:MANT_BITS] )

    # a normal result (no shift) is exact: guard and sticky are zero
    s.round = FP16RoundPack( SIG, SHIFT_CAP, F_OFF, F_BITS )
    s.round.sig //= s.sig
    s.round.exp //= s.f
    s.rounded   //= s.round.out
    s.overflow  //= s.round.overflow

    @update
    def up_out():
      exp_max = s.a[MANT_BITS:PACK] == EXP_MAX
      mant_zero = s.a[0:MANT_BITS] == 0
      if exp_max & ~mant_zero:
        s.out @= CANONICAL_NAN
      elif exp_max:
        s.out @= concat( s.a[PACK], PackT(0) )
      elif ( s.a[MANT_BITS:PACK] == 0 ) & mant_zero:
        s.out @= concat( s.a[PACK], PackT(POS_INF) )
      elif s.overflow:
        s.out @= concat( s.a[PACK], PackT(POS_INF) )
      else:
        s.out @= concat( s.a[PACK], s.rounded )

  def line_trace( s ):
    return f"1/{s.a}={s.out}"
