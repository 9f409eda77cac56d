"""LayerNorm and softmax in VPU operations: exact sequence, finiteness, accuracy."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N

F16 = np.float16


def ln_fp32( x, g, b, eps ):
  x = x.astype( np.float64 )
  mu = x.mean()
  return ( x - mu ) / np.sqrt( ( ( x - mu ) ** 2 ).mean() + eps ) * g + b


def test_layernorm_is_the_documented_sequence():
  rng = np.random.default_rng( 0 )
  n, d = 96, 16
  x = ( rng.standard_normal( n ) * 3 ).astype( F16 )
  g = ( 1 + 0.1 * rng.standard_normal( n ) ).astype( F16 )
  b = ( 0.1 * rng.standard_normal( n ) ).astype( F16 )
  inv_n = F16( 1.0 / n )
  mean = N.mul( N.reduce_sum( x, d ), inv_n )
  dev = N.sub( x, mean )
  s = N.inv_pow2( N.reduce_max( np.abs( dev ) ) )
  y = N.mul( dev, s )
  var = N.mul( N.reduce_sum( N.mul( y, y ), d ), inv_n )
  r = N.rsqrt( N.add( var, N.mul( N.mul( F16( 1e-5 ), s ), s ) ) )
  want = N.add( N.mul( N.mul( y, r ), g ), b )
  assert np.array_equal( N.bits( N.layernorm( x, g, b, 1e-5, d ) ), N.bits( want ) )


@pytest.mark.parametrize( "n", [ 768, 1024, 1600 ] )
@pytest.mark.parametrize( "outlier", [ 0.0, 1e3, 3e3 ] )
def test_layernorm_finite_and_close_with_outlier_dimensions( n, outlier ):
  """GPT-2's residual stream has a few dimensions of magnitude ~1e3: their
  squares overflow FP16 (max 65504), so a naive variance is inf."""
  rng = np.random.default_rng( n )
  x = rng.standard_normal( n ) * 0.5
  x[ [ 7, 300, 450 ] ] = [ outlier, -outlier / 2, outlier / 3 ]
  x16 = x.astype( F16 )
  g = np.ones( n, F16 )
  b = np.zeros( n, F16 )
  got = N.layernorm( x16, g, b, 1e-5, 64 ).astype( np.float64 )
  ref = ln_fp32( x16, 1.0, 0.0, 1e-5 )
  assert np.all( np.isfinite( got ) )
  # FP16 carries ~3 decimal digits; the outputs of size ~1 match to ~1e-2
  assert np.max( np.abs( got - ref ) ) < 2e-2 + 2e-3 * np.max( np.abs( ref ) )


def test_naive_variance_would_overflow():
  """Why the pre-scale exists: the square of an outlier is not finite in FP16."""
  assert np.isinf( N.mul( F16( 1e3 ), F16( 1e3 ) ) )


def test_layernorm_small_activations():
  """Deviations of 0.01 (random-init GPT-2 embeddings) must not vanish in
  the subnormal range."""
  rng = np.random.default_rng( 5 )
  x = ( rng.standard_normal( 768 ) * 0.01 ).astype( F16 )
  got = N.layernorm( x, np.ones( 768, F16 ), np.zeros( 768, F16 ), 1e-5, 64 )
  ref = ln_fp32( x, 1.0, 0.0, 1e-5 )
  assert np.max( np.abs( got.astype( np.float64 ) - ref ) ) < 2e-2


def test_softmax():
  rng = np.random.default_rng( 6 )
  s = ( rng.standard_normal( 200 ) * 4 ).astype( F16 )
  p = N.softmax( s, 64 ).astype( np.float64 )
  e = np.exp( s.astype( np.float64 ) - s.astype( np.float64 ).max() )
  ref = e / e.sum()
  assert np.all( np.isfinite( p ) ) and abs( p.sum() - 1 ) < 1e-2
  assert np.max( np.abs( p - ref ) ) < 2e-3
  m = N.reduce_max( s )
  e16 = N.exp( N.sub( s, m ) )
  want = N.mul( e16, N.recip( N.reduce_sum( e16, 64 ) ) )
  assert np.array_equal( N.bits( N.softmax( s, 64 ) ), N.bits( want ) )
