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


def scalar_reduce_sum_partials( x, d, partials ):
  """The interleaved order (numerics.reduce docstring, steps 3' and 3''),
  one FP16 addition at a time: chunk trees, P partials from -0, chunk i into
  partial i mod P, then the partials' pairwise tree."""
  x = np.asarray( x, F16 )
  chunks = max( 1, -( -x.size // d ) )
  sums = [ tree( [ x[i] if i < x.size else F16( 0 ) for i in range( c * d, c * d + d ) ] )
           for c in range( chunks ) ]
  part = [ F16( -0.0 ) ] * partials
  for i, c in enumerate( sums ):
    part[ i % partials ] = F16( part[ i % partials ] + c )
  return tree( part )


def same_fp16( a, b ):
  a, b = F16( a ), F16( b )
  return ( np.isnan( a ) and np.isnan( b ) ) or N.bits( a ) == N.bits( b )


@pytest.mark.parametrize( "d", [ 4, 16 ] )
@pytest.mark.parametrize( "partials", [ 2, 4, 8, 16 ] )
def test_reduce_sum_with_partials_is_the_stated_order( d, partials ):
  """Lengths from one element to past 2P + 1 chunks (fewer chunks than
  partials, exactly P, a partial round), values with specials."""
  rng = np.random.default_rng( d * 100 + partials )
  with np.errstate( over="ignore", invalid="ignore" ):
    for n in sorted( { 1, 2, d - 1, d, d + 1, 3 * d, partials * d, partials * d + 1,
                       ( 2 * partials + 1 ) * d + 3 } ):
      for _ in range( 4 ):
        x = ( rng.standard_normal( n ) * rng.choice( [ 1, 300, 1e4 ] ) ).astype( F16 )
        got = N.reduce_sum( x, d, partials )
        assert same_fp16( got, scalar_reduce_sum_partials( x, d, partials ) ), ( n, partials )


@pytest.mark.parametrize( "partials", [ 1, 4, 16 ] )
def test_reduce_sum_with_partials_on_special_values( partials ):
  """-0 stays -0 (every partial is -0 + -0 ...), +0 beside -0 is +0, inf
  wins, inf - inf and NaN give the canonical NaN, in every order."""
  d = 4
  nz, inf = F16( -0.0 ), F16( np.inf )
  cases = [ [ nz ] * 3, [ nz ] * ( 5 * d ), [ nz ] * ( 5 * d - 1 ) + [ F16( 0 ) ],
            [ F16( 1 ) ] * ( 3 * d ) + [ inf ], [ inf ] + [ F16( 0 ) ] * ( 9 * d ) + [ -inf ],
            [ F16( 2 ) ] * ( 7 * d ) + [ F16( np.nan ) ], [ F16( 65504 ) ] * ( 2 * d + 1 ) ]
  with np.errstate( over="ignore", invalid="ignore" ):
    for x in cases:
      got = N.reduce_sum( np.array( x, F16 ), d, partials )
      want = scalar_reduce_sum_partials( x, d, partials )
      assert same_fp16( got, want ), ( x, partials )
      if np.isnan( want ):
        assert N.bits( got ) == N.bits( F16( np.nan ) ) or np.isnan( got )
  # whole chunks of -0 (no +0 padding) and unused partials: -0
  assert N.bits( N.reduce_sum( np.array( [ nz ] * 8, F16 ), d, 4 ) ) == 0x8000


def test_reduce_sum_with_one_partial_is_the_ascending_order():
  """partials=1 is DFX's order: chunk sums added ascending from chunk 0."""
  rng = np.random.default_rng( 5 )
  x = ( rng.standard_normal( 300 ) * 100 ).astype( F16 )
  sums = [ tree( list( x[ c:c + 16 ] ) + [ F16( 0 ) ] * ( 16 - len( x[ c:c + 16 ] ) ) )
           for c in range( 0, 300, 16 ) ]
  acc = sums[0]
  for c in sums[1:]:
    acc = F16( acc + c )
  assert N.bits( N.reduce_sum( x, 16 ) ) == N.bits( acc ) == N.bits( N.reduce_sum( x, 16, 1 ) )


@pytest.mark.parametrize( "bad", [ 0, 3, -1, 6, 2.0, True ] )
def test_reduce_sum_refuses_partials_that_are_not_a_power_of_two( bad ):
  with pytest.raises( ValueError, match="partials" ):
    N.reduce_sum( np.ones( 8, F16 ), 4, bad )


# -- the row-split Conv1D (proj_row_split) -----------------------------------

@pytest.mark.parametrize( "k,n,d", [ ( 64, 24, 8 ), ( 50, 7, 16 ), ( 3, 5, 4 ) ] )
def test_row_split_of_one_segment_is_conv1d( k, n, d ):
  rng = np.random.default_rng( k * n + d )
  x, w, b = rand16( rng, k ), rand16( rng, ( k, n ), 0.2 ), rand16( rng, n )
  assert np.array_equal( N.bits( N.row_split_conv1d( x, w, b, [ 0, k ], d ) ),
                         N.bits( N.conv1d( x, w, b, d ) ) )


@pytest.mark.parametrize( "cuts,d", [ ( ( 0, 16, 32, 48 ), 8 ), ( ( 0, 8, 40 ), 4 ),
                                      ( ( 0, 5, 6, 20 ), 4 ) ] )
def test_row_split_is_the_stated_order( cuts, d ):
  """Each segment's scalar matvec, the partials left to right, then the bias."""
  rng = np.random.default_rng( sum( cuts ) + d )
  k = cuts[-1]
  x, w, b = rand16( rng, k ), rand16( rng, ( k, 9 ), 0.3 ), rand16( rng, 9 )
  acc = None
  for lo, hi in zip( cuts[ :-1 ], cuts[ 1: ] ):
    p = scalar_matvec( x[ lo:hi ], w[ lo:hi ], d )
    acc = p if acc is None else ( acc + p ).astype( F16 )
  want = ( acc + b ).astype( F16 )
  assert np.array_equal( N.bits( N.row_split_conv1d( x, w, b, cuts, d ) ), N.bits( want ) )


def test_row_split_association_by_hand():
  """Partials 2048, 1, 1 (FP16 spacing 2 at 2048; 2049 rounds to even, 2048):
  left to right gives 2048, where (1 + 1) first would give 2050; one
  segment of the last two rows sums them first (2050), one matvec over all
  rows adds 1 twice (2048); the bias comes last: -2048 gives 0, not the 2
  of the bias added to the first partial."""
  x = np.ones( 3, F16 )
  w = np.array( [ [ 2048 ], [ 1 ], [ 1 ] ], F16 )
  zero = np.zeros( 1, F16 )

  def y( cuts, b=zero ):
    return float( N.row_split_conv1d( x, w, b, cuts, 1 )[0] )
  assert y( [ 0, 1, 2, 3 ] ) == 2048
  assert y( [ 0, 1, 3 ] ) == 2050
  assert y( [ 0, 3 ] ) == float( N.conv1d( x, w, zero, 1 )[0] ) == 2048
  assert y( [ 0, 1, 2, 3 ], np.array( [ -2048 ], F16 ) ) == 0


def test_row_split_padding_rows_are_ordinary_rows():
  """A whole chunk of +0 padding rows after a -0 partial sum adds +0 (-0 + +0 =
  +0), as the matrix unit does; without the padding rows the -0 stays."""
  x = np.array( [ -1, 0 ], F16 )
  w = np.zeros( ( 2, 1 ), F16 )
  b = np.array( [ -0.0 ], F16 )
  assert N.bits( N.row_split_conv1d( x[ :1 ], w[ :1 ], b, [ 0, 1 ], 1 ) )[0] == 0x8000
  assert N.bits( N.row_split_conv1d( x, w, b, [ 0, 2 ], 1 ) )[0] == 0x0000


@pytest.mark.parametrize( "cuts", [ [ 0 ], [ 1, 4 ], [ 0, 3 ], [ 0, 2, 2, 4 ], [ 0, 3, 2, 4 ],
                                    [ 0, 5 ] ] )
def test_row_split_refuses_cuts_that_are_not_rising_to_the_rows( cuts ):
  with pytest.raises( ValueError, match=r"row_cuts=.* must rise from 0 to the 4 rows" ):
    N.row_split_conv1d( np.ones( 4, F16 ), np.ones( ( 4, 2 ), F16 ), np.zeros( 2, F16 ), cuts, 4 )
