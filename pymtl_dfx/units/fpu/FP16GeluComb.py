"""Combinational FP16 GELU: segment index, three table ROMs, sub -> mul -> add.

The datapath of `FP16GeluRTL`, exactly `numerics.tables.gelu`:

  k    = floor((x + 8) * 128)                    for x in [-8, 8)
  gelu = add(Y0[k], mul(SLOPE[k], sub(x, X[k])))

k comes from the FP16 fields with integer logic: |x| * 128 is the 11-bit
significand shifted right (a subnormal counts as exponent field 1), the bits
shifted out form a sticky bit, and k = 1024 + int for x >= 0 and
1024 - int - sticky (a ceiling) for x < 0.  The arithmetic reuses
`FP16AddComb` and `FP16MulComb`, so every rounding is numerics' own.  The ROM
contents come from `numerics.tables.gelu_tables()`.

x >= 8 (and +inf) passes through, x < -8 (and -inf) gives +0, and any NaN
gives the canonical NaN.
"""


from pymtl3 import *

from ...lib.rom import RomRTL

from ...numerics.fp16 import (FP_BITS, SIGN_POS, CANONICAL_NAN, EXP_BIAS, EXP_BITS, F16,
                              MANT_BITS, bits)
from ...numerics.tables import (GELU_ENTRIES, GELU_HI, GELU_LO, GELU_STEP_LOG2,
                                gelu_tables)
from .FP16AddComb import FP16AddComb
from .FP16MulComb import FP16MulComb

SIG = MANT_BITS + 1
EXP_MAX = ( 1 << EXP_BITS ) - 1
K_BITS = ( GELU_ENTRIES - 1 ).bit_length()
KW = K_BITS + 1                 # room for the borrow of 1024 - int - sticky
# The table is symmetric about zero, so one magnitude bound serves both ends.
assert GELU_HI == -GELU_LO
assert GELU_ENTRIES == int( GELU_HI - GELU_LO ) << GELU_STEP_LOG2
BOUND_MAG = int( bits( F16( GELU_HI ) ) )
ZERO_K = int( -GELU_LO ) << GELU_STEP_LOG2
# |x| * 2^STEP_LOG2 = sig * 2^(eff_exp - RS_BASE); in range, eff_exp <= RS_BASE
# (-8 itself has eff_exp == RS_BASE), so this is always a right shift.
RS_BASE = EXP_BIAS + MANT_BITS - GELU_STEP_LOG2
RS_MAX = RS_BASE - 1            # eff_exp >= 1
SHW = SIG + RS_MAX


class FP16GeluComb( Component ):

  def construct( s ):
    s.a   = InPort ( FP_BITS )
    s.out = OutPort( FP_BITS )

    FpT   = mk_bits( FP_BITS )
    ExpT  = mk_bits( EXP_BITS )
    ShT   = mk_bits( SHW )
    KT    = mk_bits( K_BITS )
    KWT   = mk_bits( KW )

    x_t, y0_t, slope_t = ( bits( t ) for t in gelu_tables() )
    s.rom_x     = RomRTL( FpT, x_t )
    s.rom_y0    = RomRTL( FpT, y0_t )
    s.rom_slope = RomRTL( FpT, slope_t )

    s.eff_exp  = Wire( ExpT )
    s.rshift   = Wire( ExpT )
    s.shifted  = Wire( ShT )
    s.int_part = Wire( KWT )
    s.sticky   = Wire()
    s.k        = Wire( KT )
    s.seg_x     = Wire( FP_BITS )
    s.seg_y0    = Wire( FP_BITS )
    s.seg_slope = Wire( FP_BITS )

    @update
    def up_index():
      # a subnormal has the scale of exponent field 1
      s.eff_exp @= s.a[MANT_BITS:SIGN_POS] | zext( s.a[MANT_BITS:SIGN_POS] == 0, EXP_BITS )
      # wraps for |x| > 8; those inputs never use k
      s.rshift @= RS_BASE - s.eff_exp
      s.shifted @= ( zext( concat( s.a[MANT_BITS:SIGN_POS] != 0, s.a[0:MANT_BITS] ), SHW )
                     << RS_MAX ) >> zext( s.rshift, SHW )
      s.int_part @= zext( s.shifted[RS_MAX:SHW], KW )
      s.sticky @= s.shifted[0:RS_MAX] != 0
      if ~s.a[SIGN_POS]:
        s.k @= trunc( ZERO_K + s.int_part, K_BITS )
      else:
        s.k @= trunc( ZERO_K - s.int_part - zext( s.sticky, KW ), K_BITS )

    for rom, seg in ( ( s.rom_x, s.seg_x ), ( s.rom_y0, s.seg_y0 ),
                      ( s.rom_slope, s.seg_slope ) ):
      rom.addr //= s.k
      seg //= rom.out

    s.offset = FP16AddComb()
    s.offset.a   //= s.a
    s.offset.b   //= s.seg_x
    s.offset.sub //= 1

    s.scale = FP16MulComb()
    s.scale.a //= s.seg_slope
    s.scale.b //= s.offset.out

    s.interp = FP16AddComb()
    s.interp.a   //= s.seg_y0
    s.interp.b   //= s.scale.out
    s.interp.sub //= 0

    @update
    def up_out():
      if ( s.a[MANT_BITS:SIGN_POS] == EXP_MAX ) & ( s.a[0:MANT_BITS] != 0 ):
        s.out @= CANONICAL_NAN
      elif ~s.a[SIGN_POS] & ( s.a[0:SIGN_POS] >= BOUND_MAG ):
        s.out @= s.a
      elif s.a[SIGN_POS] & ( s.a[0:SIGN_POS] > BOUND_MAG ):
        s.out @= 0
      else:
        s.out @= s.interp.out

  def line_trace( s ):
    return f"gelu({s.a})[k={s.k}]={s.out}"
