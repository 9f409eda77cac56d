"""Single FP16 operations: IEEE results, the canonical-NaN rule, the comparator."""

import numpy as np
from hypothesis import given, strategies as st

from pymtl_dfx import numerics as N

ALL = np.arange( 1 << 16, dtype=np.uint16 )


def exact_f64( a, b, op ):
  x, y = N.from_bits( a ).astype( np.float64 ), N.from_bits( b ).astype( np.float64 )
  with np.errstate( all="ignore" ):
    return { "add": x + y, "sub": x - y, "mul": x * y }[ op ]


def test_add_mul_are_correctly_rounded_against_float64():
  """numpy's float16 is the golden only because it is correctly rounded:
  check that against exact float64 results (exact for sums and products of
  FP16 values) rounded to nearest-even, on 200k random pairs."""
  rng = np.random.default_rng( 0 )
  a = rng.integers( 0, 1 << 16, 200_000 ).astype( np.uint16 )
  b = rng.integers( 0, 1 << 16, 200_000 ).astype( np.uint16 )
  for op, fn in ( ( "add", N.add ), ( "sub", N.sub ), ( "mul", N.mul ) ):
    got = fn( N.from_bits( a ), N.from_bits( b ) )
    ref = exact_f64( a, b, op )
    with np.errstate( all="ignore" ):
      want = N.canonical( ref.astype( np.float16 ) )   # float64 -> f16 is RNE
    finite = np.isfinite( ref )
    assert np.array_equal( N.bits( got )[ finite ], N.bits( want )[ finite ] ), op


def test_every_nan_result_is_canonical():
  x = N.from_bits( np.array( [ 0x7C01, 0xFE00, 0x7FFF, 0x7C00 ], np.uint16 ) )
  y = N.from_bits( np.array( [ 0x3C00, 0x3C00, 0x7E00, 0xFC00 ], np.uint16 ) )
  for fn in ( N.add, N.mul, N.maximum ):
    out = N.bits( fn( x, y ) )
    assert all( o == N.CANONICAL_NAN for o in out[:3] ), fn.__name__
  assert N.bits( N.add( x[3], y[3] ) ) == N.CANONICAL_NAN        # inf - inf


def test_signed_zero_results():
  pz, nz = N.from_bits( 0x0000 ), N.from_bits( 0x8000 )
  assert N.bits( N.add( nz, nz ) ) == 0x8000
  assert N.bits( N.add( pz, nz ) ) == 0x0000
  assert N.bits( N.sub( N.F16( 1 ), N.F16( 1 ) ) ) == 0x0000
  assert N.bits( N.mul( nz, N.F16( 3 ) ) ) == 0x8000


def test_subnormals_are_kept():
  tiny = N.from_bits( 0x0001 )
  assert N.bits( N.add( tiny, tiny ) ) == 0x0002
  assert N.bits( N.mul( N.from_bits( 0x0400 ), N.F16( 0.5 ) ) ) == 0x0200


@given( st.integers( 0, 0xFFFF ), st.integers( 0, 0xFFFF ) )
def test_maximum_is_the_comparator_order( a, b ):
  x, y = N.from_bits( a ), N.from_bits( b )
  m = N.maximum( x, y )
  if np.isnan( x ) or np.isnan( y ):
    assert N.bits( m ) == N.CANONICAL_NAN
  else:
    assert N.bits( m ) in ( a, b )
    assert N.order_key( m ) >= max( N.order_key( x ), N.order_key( y ) )
    if float( x ) != float( y ):
      assert float( m ) == max( float( x ), float( y ) )


def test_order_key_puts_negative_zero_below_positive_zero():
  assert N.order_key( N.from_bits( 0x8000 ) ) < N.order_key( N.from_bits( 0x0000 ) )
  keys = N.order_key( N.from_bits( ALL ) )
  vals = N.from_bits( ALL ).astype( np.float64 )
  ok = ~np.isnan( vals )
  order = np.argsort( keys[ ok ], kind="stable" )
  assert np.all( np.diff( vals[ ok ][ order ] ) >= 0 )
