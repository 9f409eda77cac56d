"""exp, recip, rsqrt, GELU, inv_pow2: measured error bounds on every FP16 input.

The bounds are the ones docs/numerics.md reports; a change to a table or to
the way it is indexed that loses accuracy fails here.
"""

import math

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.numerics import error_report as R

X = N.from_bits( np.arange( 1 << 16, dtype=np.uint16 ) )


@pytest.fixture( scope="module" )
def report():
  return { row.name: row for row in R.measure_all() }


def test_rsqrt_is_correctly_rounded( report ):
  assert report["rsqrt"].max_ulp <= 0.5


def test_recip_within_one_ulp( report ):
  assert report["recip"].max_ulp < 1.0


def test_exp_within_two_ulps( report ):
  assert report["exp"].max_ulp < 2.0


def test_gelu_interpolation_error( report ):
  # linear interpolation on a 2^-7 grid: |error| <= h^2/8 * max|gelu''| ~ 1e-5,
  # plus two FP16 roundings of values below 8 (ulp 2^-8 at most)
  assert report["gelu"].max_abs <= 2.0 ** -8


def test_specials():
  inf, ninf = N.F16( np.inf ), N.F16( -np.inf )
  pz, nz = N.from_bits( 0 ), N.from_bits( 0x8000 )
  nan = N.from_bits( N.CANONICAL_NAN )
  assert N.bits( N.exp( ninf ) ) == 0 and N.exp( inf ) == inf
  assert N.exp( pz ) == 1 and N.exp( nz ) == 1
  assert N.recip( pz ) == inf and N.recip( nz ) == ninf
  assert N.bits( N.recip( inf ) ) == 0 and N.bits( N.recip( ninf ) ) == 0x8000
  assert N.rsqrt( pz ) == inf and N.rsqrt( nz ) == ninf
  assert N.bits( N.rsqrt( N.F16( -1 ) ) ) == N.CANONICAL_NAN
  assert N.bits( N.rsqrt( inf ) ) == 0
  assert N.gelu( N.F16( 9 ) ) == 9 and N.gelu( inf ) == inf
  assert N.bits( N.gelu( N.F16( -9 ) ) ) == 0 and N.bits( N.gelu( ninf ) ) == 0
  for fn in ( N.exp, N.recip, N.rsqrt, N.gelu, N.inv_pow2 ):
    assert N.bits( fn( nan ) ) == N.CANONICAL_NAN, fn.__name__


def test_exp_overflow_and_underflow_boundaries():
  with np.errstate( over="ignore" ):
    ref = np.exp( X.astype( np.float64 ) ).astype( np.float16 )
  got = N.exp( X )
  big = np.isfinite( X ) & ( X.astype( np.float64 ) > 11 )
  assert np.array_equal( np.isinf( got[ big ] ), np.isinf( ref[ big ] ) )
  # near exp(x) = 2^-25 the product of two rounded entries may land one
  # subnormal step (2^-24) off; far below it the result is exactly +0
  small = np.isfinite( X ) & ( X.astype( np.float64 ) < -16 )
  assert np.max( np.abs( got[ small ].astype( np.float64 ) -
                         ref[ small ].astype( np.float64 ) ) ) <= 2.0 ** -24
  tiny = np.isfinite( X ) & ( X.astype( np.float64 ) < -17.5 )
  assert np.all( N.bits( got[ tiny ] ) == 0 )


def test_inv_pow2_scales_into_one_two():
  x = X[ np.isfinite( X ) & ( np.abs( X.astype( np.float64 ) ) >= 2.0 ** -14 ) ]
  y = np.abs( N.mul( x, N.inv_pow2( x ) ).astype( np.float64 ) )
  assert np.all( ( y >= 1 ) & ( y < 2 ) )
  assert N.inv_pow2( N.F16( 0 ) ) == 2.0 ** 14


def test_gelu_table_is_the_papers():
  from pymtl_dfx.numerics.tables import GELU_ENTRIES, gelu_tables
  xs, y0, slope = gelu_tables()
  assert GELU_ENTRIES == 2048 and len( xs ) == len( y0 ) == len( slope ) == 2048
  assert float( xs[0] ) == -8.0 and float( xs[-1] ) + 2.0 ** -7 == 8.0
  assert math.isclose( float( y0[1024] ), 0.0, abs_tol=0 )   # gelu(0) = 0
