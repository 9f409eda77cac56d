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
