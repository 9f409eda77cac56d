"""LayerNorm folded into the next matrix (`numerics.fold`, DFXConfig.ln_fold):
the compile-time W', c, b' in their stated order, the per-token statistics
and correction against an exact LayerNorm + Conv1D, and the DFX-numerics
reference using exactly these functions."""

import math

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.config import DFXConfig, gpt2_preset
from pymtl_dfx.gpt2 import DFXForward, random_weights

F16 = np.float16
U = 2.0 ** -11
EPS = 1e-5


def _params( rng, k, n ):
  g = rng.uniform( 0.9, 1.1, k ).astype( F16 )
  b = rng.uniform( -0.02, 0.02, k ).astype( F16 )
  w = ( rng.standard_normal( ( k, n ) ) * 0.02 ).astype( F16 )
  bias = ( rng.standard_normal( n ) * 0.01 ).astype( F16 )
  return g, b, w, bias


def test_fold_layernorm_is_the_documented_order():
  """W' one FP16 product per weight, c the exact column sum rounded once,
  b' the binary64 sum in ascending rows then + b, rounded once (a scalar
  statement of the order)."""
  rng = np.random.default_rng( 3 )
  k, n = 96, 40
  g, b, w, bias = _params( rng, k, n )
  b[5] = F16( 0.0 )
  wf, c, bf = N.fold_layernorm( g, b, w, bias )
  assert np.array_equal( N.bits( wf ), N.bits( N.mul( g[:, None], w ) ) )
  for j in range( n ):
    col = [ float( v ) for v in wf[:, j] ]
    assert N.bits( c[j] ) == N.bits( F16( math.fsum( col ) ) ), j
    acc = 0.0
    for i in range( k ):
      acc += float( b[i] ) * float( w[i, j] )
    assert N.bits( bf[j] ) == N.bits( F16( acc + float( bias[j] ) ) ), j


def test_statistics_are_layernorms_own():
  """(x - mean) * s * r * gamma + beta from `layernorm_stats` is
  `layernorm`'s result, bit for bit."""
  rng = np.random.default_rng( 1 )
  x = ( rng.standard_normal( 256 ) * 3 + 1 ).astype( F16 )
  g, b, _, _ = _params( rng, 256, 1 )
  mean, s, r = N.layernorm_stats( x, EPS, 16, 4 )
  y = N.mul( N.sub( x, mean ), s )
  out = N.add( N.mul( N.mul( y, r ), g ), b )
  assert np.array_equal( N.bits( out ), N.bits( N.layernorm( x, g, b, EPS, 16, 4 ) ) )


def _exact( x, g, b, w, bias ):
  x64 = x.astype( np.float64 )
  mu = x64.mean()
  h = ( x64 - mu ) / np.sqrt( ( ( x64 - mu ) ** 2 ).mean() + EPS ) * g + b
  return h @ w.astype( np.float64 ) + bias, h


@pytest.mark.parametrize( "n", [ 768, 1024 ] )
@pytest.mark.parametrize( "outlier,mean", [ ( 0.0, 0.0 ), ( 3e3, 0.0 ), ( 0.0, 2.0 ),
                                            ( 0.0, 16.0 ) ] )
def test_folded_conv1d_against_exact( n, outlier, mean ):
  """The folded product within its FP16 error bound of an exact float64
  LayerNorm + Conv1D, with GPT-2's outlier dimensions and with a mean far
  from 0: the bound is in units of u times the magnitudes the fold rounds
  (z = x W' and mean * c apart, scaled by s r), so it grows with |mean|
  over the deviation where LayerNorm-then-Conv1D's does not.  The same
  bound refuses a fold that forgets gamma or the mean's correction."""
  rng = np.random.default_rng( n )
  x = rng.standard_normal( n ) * 0.5 + mean
  x[:3] += outlier * np.array( [ 1.0, -0.5, 0.8 ] )
  x = x.astype( F16 )
  g, b, w, bias = _params( rng, n, 96 )
  d = 64
  wf, c, bf = N.fold_layernorm( g, b, w, bias )
  exact, h = _exact( x, g, b, w, bias )
  mu, s, r = ( float( v ) for v in N.layernorm_stats( x, EPS, d ) )
  wf64 = np.abs( wf.astype( np.float64 ) )
  scale = U * ( s * r * ( np.abs( x.astype( np.float64 ) ) @ wf64 + abs( mu ) * np.abs( c ) )
                + np.abs( h ) @ np.abs( w.astype( np.float64 ) ) + np.abs( bf ) )
  # rounding errors add up like a random walk, far below the worst case
  # (log2 d + chunks) u S: 2.1 at most on these draws
  bound = 4

  def ratio( wf, c ):
    got = N.folded_conv1d( x, wf, c, bf, EPS, d ).astype( np.float64 )
    assert np.isfinite( got ).all()
    return ( np.abs( got - exact ) / scale ).max()

  assert ratio( wf, c ) <= bound
  assert ratio( w, c ) > bound
  if mean:
    assert ratio( wf, np.zeros_like( c ) ) > bound


def test_fold_refuses_mismatched_shapes():
  g, b, w, bias = _params( np.random.default_rng( 0 ), 8, 4 )
  for args in ( ( g[:7], b, w, bias ), ( g, b[:7], w, bias ), ( g, b, w[:7], bias ),
                ( g, b, w, bias[:3] ), ( g, b, w[:, 0], bias ) ):
    with pytest.raises( ValueError, match="fold_layernorm: shapes" ):
      N.fold_layernorm( *args )


def test_dfx_forward_folds_ln_1_with_these_functions():
  """With ln_fold=1 the reference's qkv is `folded_conv1d` of the embedding
  with `fold_layernorm`'s W', c, b' (layer 0), its trace has c_attn_z in
  place of ln_1, and the logits differ from LayerNorm-then-Conv1D's; with
  ln_fold=0 it is LayerNorm then Conv1D."""
  cfg = gpt2_preset( "tiny" )
  w = random_weights( cfg, 2 ).to_fp16()
  dfx = DFXConfig( d=16, ln_fold=1 )
  trace, plain = {}, {}
  folded = DFXForward( w, dfx ).step( 3, trace=trace )
  default = DFXForward( w, DFXConfig( d=16 ) ).step( 3, trace=plain )
  wf, c, bf = N.fold_layernorm( w.layer( 0, "ln_1.weight" ), w.layer( 0, "ln_1.bias" ),
                                w.layer( 0, "attn.c_attn.weight" ), w.layer( 0, "attn.c_attn.bias" ) )
  x = trace["embed"]
  want = N.folded_conv1d( x, wf, c, bf, cfg.layer_norm_epsilon, 16 )
  assert np.array_equal( N.bits( trace["h0.qkv"] ), N.bits( want ) )
  assert np.array_equal( N.bits( trace["h0.c_attn_z"] ), N.bits( N.matvec( x, wf, 16 ) ) )
  assert "h0.ln_1" not in trace and "h0.ln_2" in trace
  assert "h0.ln_1" in plain and "h0.c_attn_z" not in plain
  plain_qkv = N.conv1d( N.layernorm( x, w.layer( 0, "ln_1.weight" ), w.layer( 0, "ln_1.bias" ),
                                     cfg.layer_norm_epsilon, 16 ),
                        w.layer( 0, "attn.c_attn.weight" ), w.layer( 0, "attn.c_attn.bias" ), 16 )
  assert np.array_equal( N.bits( plain["h0.qkv"] ), N.bits( plain_qkv ) )
  assert not np.array_equal( N.bits( folded ), N.bits( default ) )


def test_dfx_forward_folds_ln_2_with_these_functions():
  """With ln2_fold=1 the reference's c_fc output is `folded_conv1d` of the
  attention's residual with ln_2 and c_fc's W', c, b', GELU follows it,
  its trace has c_fc_z in place of ln_2, and ln_1 stays a LayerNorm."""
  cfg = gpt2_preset( "tiny" )
  w = random_weights( cfg, 2 ).to_fp16()
  trace = {}
  folded = DFXForward( w, DFXConfig( d=16, vpu_gelu=1, ln2_fold=1 ) ).step( 3, trace=trace )
  default = DFXForward( w, DFXConfig( d=16 ) ).step( 3 )
  wf, c, bf = N.fold_layernorm( w.layer( 0, "ln_2.weight" ), w.layer( 0, "ln_2.bias" ),
                                w.layer( 0, "mlp.c_fc.weight" ), w.layer( 0, "mlp.c_fc.bias" ) )
  x = trace["h0.x_attn"]
  want = N.folded_conv1d( x, wf, c, bf, cfg.layer_norm_epsilon, 16 )
  assert np.array_equal( N.bits( trace["h0.fc"] ), N.bits( want ) )
  assert np.array_equal( N.bits( trace["h0.gelu"] ), N.bits( N.gelu( want ) ) )
  assert np.array_equal( N.bits( trace["h0.c_fc_z"] ), N.bits( N.matvec( x, wf, 16 ) ) )
  assert "h0.ln_2" not in trace and "h0.ln_1" in trace and "h0.c_attn_z" not in trace
  assert not np.array_equal( N.bits( folded ), N.bits( default ) )
