"""Combinational FP16 exp, exactly as `pymtl_dfx.numerics.tables.exp` defines it.

The datapath of `FP16ExpRTL`.  Inside the exponent window EMIN..EMAX the
input splits exactly into x_hi (sign, exponent, top mantissa bits) and x_lo
(the same sign and exponent, low mantissa bits); each part addresses its own
ROM and the two entries are multiplied by an `FP16MulComb`, so the one
rounding after the tables is the multiplier's.  Outside the window the result
is a constant: 1.0 below it, +inf / +0 above it (by sign), and the canonical
NaN for any NaN input.

Both ROMs are the golden tables flattened in their [sign, row, entry] order,
so the address is concat(sign * ROWS + row, entry) with no multiplier.
"""

from pymtl3 import *

from ...lib.rom import RomRTL

from ...numerics.fp16 import (FP_BITS, CANONICAL_NAN, EXP_BIAS, EXP_BITS, MANT_BITS,
                              POS_INF)
from ...numerics.tables import (EXP_LO_BITS, EXP_SPLIT_BITS, EXP_TABLE_EMAX,
                                EXP_TABLE_EMIN, exp_tables)
from .FP16MulComb import FP16MulComb

SIGN = FP_BITS - 1
EXP_MAX = ( 1 << EXP_BITS ) - 1
ONE = EXP_BIAS << MANT_BITS                  # 1.0
PACK = FP_BITS - 1                           # {exponent, mantissa} without the sign
EXP_ROWS = EXP_TABLE_EMAX - EXP_TABLE_EMIN + 1
ENTRY_BITS = EXP_SPLIT_BITS                  # both tables have 2^5 entries per row
ROM_ENTRIES = 2 * EXP_ROWS * ( 1 << ENTRY_BITS )
IDX_BITS = clog2( ROM_ENTRIES )
SROW_BITS = IDX_BITS - ENTRY_BITS            # {sign, row} folded into one field
# the translator takes constant names, not expressions, as operands
NEG_ROW_OFFSET = EXP_ROWS - EXP_TABLE_EMIN   # negative inputs use the second half

# the lo part is addressed by the low mantissa bits, the hi table's entry by
# the top ones: one entry width serves both only because 10 = 5 + 5
assert EXP_LO_BITS == ENTRY_BITS and EXP_SPLIT_BITS + EXP_LO_BITS == MANT_BITS
assert 2 * EXP_ROWS <= ( 1 << SROW_BITS )


def rom_contents():
  """(hi, lo) flattened golden tables as lists of 16-bit patterns."""
  hi_t, lo_t = exp_tables()
  assert hi_t.shape == lo_t.shape == ( 2, EXP_ROWS, 1 << ENTRY_BITS )
  return ( [ int( v ) for v in hi_t.reshape( -1 ).view( 'uint16' ) ],
           [ int( v ) for v in lo_t.reshape( -1 ).view( 'uint16' ) ] )


class FP16ExpComb( Component ):

  def construct( s ):
    s.a   = InPort ( FP_BITS )
    s.out = OutPort( FP_BITS )

    FpT   = mk_bits( FP_BITS )
    IdxT  = mk_bits( IDX_BITS )
    SrowT = mk_bits( SROW_BITS )
    PackT = mk_bits( PACK )

    hi_vals, lo_vals = rom_contents()
    s.hi_rom = RomRTL( FpT, hi_vals )
    s.lo_rom = RomRTL( FpT, lo_vals )

    s.in_window = Wire()
    s.srow   = Wire( SrowT )
    s.hi_idx = Wire( IdxT )
    s.lo_idx = Wire( IdxT )
    s.hi     = Wire( FpT )
    s.lo     = Wire( FpT )

    s.mul = FP16MulComb()
    s.mul.a //= s.hi
    s.mul.b //= s.lo

    @update
    def up_index():
      s.in_window @= ( s.a[MANT_BITS:SIGN] >= EXP_TABLE_EMIN ) & \
                     ( s.a[MANT_BITS:SIGN] <= EXP_TABLE_EMAX )
      # outside the window the output ignores the tables; row 0 keeps the
      # address in range
      if ~s.in_window:
        s.srow @= 0
      elif s.a[SIGN]:
        s.srow @= zext( s.a[MANT_BITS:SIGN], SROW_BITS ) + NEG_ROW_OFFSET
      else:
        s.srow @= zext( s.a[MANT_BITS:SIGN], SROW_BITS ) - EXP_TABLE_EMIN
      s.hi_idx @= concat( s.srow, s.a[EXP_LO_BITS:MANT_BITS] )
      s.lo_idx @= concat( s.srow, s.a[0:EXP_LO_BITS] )

    s.hi_rom.addr //= s.hi_idx
    s.lo_rom.addr //= s.lo_idx
    s.hi //= s.hi_rom.out
    s.lo //= s.lo_rom.out

    @update
    def up_out():
      if ( s.a[MANT_BITS:SIGN] == EXP_MAX ) & ( s.a[0:MANT_BITS] != 0 ):
        s.out @= CANONICAL_NAN
      elif s.a[MANT_BITS:SIGN] > EXP_TABLE_EMAX:
        # |x| >= 32 (and +-inf): exp overflows or underflows completely
        if s.a[SIGN]:
          s.out @= 0
        else:
          s.out @= POS_INF
      elif s.a[MANT_BITS:SIGN] < EXP_TABLE_EMIN:
        s.out @= ONE
      else:
        s.out @= s.mul.out

  def line_trace( s ):
    return f"exp({s.a})={s.out}"
