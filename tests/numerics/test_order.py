"""The order of operations: vectorised numerics == a scalar loop of FP16 ops.

The scalar loops below restate the documented order one addition at a time
(using numpy float16 scalars), so a vectorisation that reorders anything
fails here.
"""

import numpy as np
import pytest

from pymtl_dfx import numerics as N

F16 = np.float16


def tree( values ):
  vals = list( values )
  while len( vals ) > 1:
    vals = [ F16( vals[ 2*i ] + vals[ 2*i+1 ] ) for i in range( len( vals ) // 2 ) ]
  return vals[0]


def scalar_matvec( x, w, d ):
  k, n = w.shape
  chunks = -( -k // d )
  out = []
  for j in range( n ):
    acc = None
    for c in range( chunks ):
      prods = [ F16( x[i] * w[i, j] ) if i < k else F16( 0 )
                for i in range( c * d, ( c + 1 ) * d ) ]
      part = tree( prods )
      acc = part if acc is None else F16( acc + part )
    out.append( acc )
  return np.array( out, F16 )


def rand16( rng, shape, scale=1.0 ):
  return ( rng.standard_normal( shape ) * scale ).astype( F16 )


@pytest.mark.parametrize( "k,n,d", [ ( 8, 3, 4 ), ( 13, 5, 4 ), ( 64, 7, 16 ),
                                     ( 100, 9, 64 ), ( 3, 2, 8 ) ] )
def test_matvec_order( k, n, d ):
  rng = np.random.default_rng( k * 100 + n )
  x, w = rand16( rng, k, 4.0 ), rand16( rng, ( k, n ), 4.0 )
  got = N.matvec( x, w, d, col_block=4 )
  assert np.array_equal( N.bits( got ), N.bits( scalar_matvec( x, w, d ) ) )


def test_matvec_order_matters():
  """The test above can fail: a sequential sum gives other bits on some input."""
  rng = np.random.default_rng( 1 )
  x, w = rand16( rng, 64, 8.0 ), rand16( rng, ( 64, 64 ), 8.0 )
  seq = np.zeros( 64, F16 )
  for i in range( 64 ):
    seq = ( seq + ( x[i] * w[i] ).astype( F16 ) ).astype( F16 )
  assert not np.array_equal( N.bits( N.matvec( x, w, 64 ) ), N.bits( seq ) )


def test_conv1d_adds_bias_after_accumulation():
  rng = np.random.default_rng( 2 )
  x, w, b = rand16( rng, 20 ), rand16( rng, ( 20, 6 ) ), rand16( rng, 6 )
  want = ( scalar_matvec( x, w, 8 ) + b ).astype( F16 )
  assert np.array_equal( N.bits( N.conv1d( x, w, b, 8 ) ), N.bits( want ) )


def test_reduce_sum_is_matvec_with_ones():
  rng = np.random.default_rng( 3 )
  x = rand16( rng, 77, 10.0 )
  want = scalar_matvec( x, np.ones( ( 77, 1 ), F16 ), 16 )[0]
  assert N.bits( N.reduce_sum( x, 16 ) ) == N.bits( want )


def test_reduce_max():
  assert N.bits( N.reduce_max( N.from_bits( np.array( [ 0x8000, 0x0000 ], np.uint16 ) ) ) ) == 0
  assert N.reduce_max( np.array( [ -3, 7, 2 ], F16 ) ) == 7
  nan = np.array( [ 1, np.nan ], F16 )
  assert N.bits( N.reduce_max( nan ) ) == N.CANONICAL_NAN


def test_matvec_shape_error_names_shapes():
  with pytest.raises( ValueError, match=r"x\(3,\).*w\(4, 2\)" ):
    N.matvec( np.zeros( 3, F16 ), np.zeros( ( 4, 2 ), F16 ), 4 )


def test_fast_rounding_equals_numpy_conversion():
  """The bit-twiddling rounding inside matvec is numpy's f32 -> f16 -> f32."""
  from pymtl_dfx.numerics.reduce import _r
  rng = np.random.default_rng( 9 )
  bits = rng.integers( 0, 1 << 32, 2_000_000, dtype=np.uint64 ).astype( np.uint32 )
  # plus dense coverage of the FP16 range, its subnormals and the ties
  near = ( rng.integers( 0x33000000, 0x47800000, 1_000_000, dtype=np.uint64 )
           .astype( np.uint32 ) & ~np.uint32( 0xFFF ) ) | np.uint32( 0x1000 )
  edges = np.array( [ 0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x477FE000,
                      0x477FEFFF, 0x477FF000, 0x477FF001, 0x38800000, 0x387FFFFF,
                      0x33000000, 0x33000001, 0xB3000000, 0x32FFFFFF ], np.uint32 )
  a = np.concatenate( [ bits, near, edges ] ).view( np.float32 )
  with np.errstate( over="ignore" ):
    want = a.astype( np.float16 ).astype( np.float32 )
  got = _r( a )
  nan = np.isnan( want )
  assert np.array_equal( np.isnan( got ), nan )
  assert np.array_equal( got[ ~nan ].view( np.uint32 ), want[ ~nan ].view( np.uint32 ) )
