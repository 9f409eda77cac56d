"""Combinational FP16 reciprocal square root, exactly `numerics.tables.rsqrt`.

The datapath of `FP16RsqrtRTL`.  The input is normalised to 2^E * 1.f (the
same `FP16NormaliseComb` as the reciprocal's), the parity of E and the
fraction index a 2048-entry ROM of 1/sqrt(m) for m in [1, 4) built from
`numerics.tables.rsqrt_table`, and the entry is scaled by 2^-floor(E/2).
Every result of that scaling is a normal number, so it only adds to the
exponent and never rounds (checked when the ROM is built).  Negative inputs
other than -0 give the canonical NaN.
"""

from pymtl3 import *

from ...lib.rom import RomRTL

from ...numerics.fp16 import CANONICAL_NAN, EXP_BITS, MANT_BITS, POS_INF
from ...numerics.tables import rsqrt_table
from .FP16RecipComb import (EXP_MAX, FP_BITS, H_BIAS, H_BITS, H_MAX, PACK,
                            FP16NormaliseComb, rom_values)

ADDR_BITS = 1 + MANT_BITS

# H = E + H_BIAS with H_BIAS even, so E and H have the same parity and
# floor(E/2) = floor(H/2) - RS_BIAS: the result's exponent field is
# te + RS_BIAS - floor(H/2), never negative (checked below).
RS_BIAS = H_BIAS // 2
F_BITS = ( EXP_MAX + RS_BIAS ).bit_length()


def _check_exact( values ):
  """The datapath has no rounding: every entry times 2^-floor(E/2), for every
  finite non-zero input, must be a normal number."""
  fields = [ ( v >> MANT_BITS ) & EXP_MAX for v in values ]
  lo = min( fields ) + RS_BIAS - ( H_MAX >> 1 )
  hi = max( fields ) + RS_BIAS
  if H_BIAS % 2 or lo < 1 or hi > EXP_MAX - 1:
    raise ValueError( f"rsqrt table gives exponent fields {lo} .. {hi}: "
                      f"scaling would round or overflow" )
  return values


class FP16RsqrtComb( Component ):

  def construct( s ):
    s.a   = InPort ( FP_BITS )
    s.out = OutPort( FP_BITS )

    FpT   = mk_bits( FP_BITS )
    AddrT = mk_bits( ADDR_BITS )
    FT    = mk_bits( F_BITS )
    PackT = mk_bits( PACK )

    s.norm = FP16NormaliseComb()
    s.norm.a //= s.a

    # rows of the [parity, fraction] table one after the other, so the
    # address is {parity, fraction}
    s.rom = RomRTL( FpT, _check_exact( rom_values( rsqrt_table() ) ) )

    s.addr = Wire( AddrT )
    s.t    = Wire( FpT )
    s.f    = Wire( FT )

    @update
    def up_lookup():
      s.addr @= concat( s.norm.h[0], s.norm.frac )

    s.rom.addr //= s.addr
    s.t //= s.rom.out

    @update
    def up_exponent():
      s.f @= zext( s.t[MANT_BITS:PACK], F_BITS ) + RS_BIAS - zext( s.norm.h[1:H_BITS], F_BITS )

    @update
    def up_out():
      exp_max = s.a[MANT_BITS:PACK] == EXP_MAX
      mant_zero = s.a[0:MANT_BITS] == 0
      zero = ( s.a[MANT_BITS:PACK] == 0 ) & mant_zero
      if ( exp_max & ~mant_zero ) | ( s.a[PACK] & ~zero ):
        s.out @= CANONICAL_NAN
      elif zero:
        s.out @= concat( s.a[PACK], PackT(POS_INF) )
      elif exp_max:
        s.out @= 0
      else:
        s.out @= concat( Bits1(0), s.f[0:EXP_BITS], s.t[0:MANT_BITS] )

  def line_trace( s ):
    return f"rsqrt({s.a})={s.out}"
