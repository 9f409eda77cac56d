"""One MFU lane (d multipliers + balanced adder tree): every level, bit for bit."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.testing import run_stream_test, select
from pymtl_dfx.testing.levels import run_matching_cl
from pymtl_dfx.testing.fp16_ops import EDGE_BITS
from pymtl_dfx.units.mpu.models import MFU_LANE_MODELS
from pymtl_dfx.units.mpu.msgs import FP16, mk_lane_req


def operands( d, n, seed ):
  """Gaussian values (cancellation in the tree is common) with some edge
  values (subnormals, infinities, NaN) mixed in."""
  rng = np.random.default_rng( seed )
  x = ( rng.standard_normal( ( n, d ) ) * 4 ).astype( np.float16 )
  w = ( rng.standard_normal( ( n, d ) ) ).astype( np.float16 )
  edge = rng.random( ( n, d ) ) < 0.02
  x[ edge ] = N.from_bits( rng.choice( np.array( EDGE_BITS, np.uint16 ), edge.sum() ) )
  return x, w


def run_lane( d, level, cmdline_opts, n, seed=0, max_delay=0, latency=None ):
  x, w = operands( d, n, seed )
  want = [ N.matvec( x[k], w[k][:, None], d )[0] for k in range( n ) ]
  Req = mk_lane_req( d )
  reqs = [ Req( [ FP16( int( v ) ) for v in N.bits( x[k] ) ],
                [ FP16( int( v ) ) for v in N.bits( w[k] ) ] ) for k in range( n ) ]
  Model = select( level, **MFU_LANE_MODELS )
  return run_stream_test( Model( d, latency ), sources={ "recv": ( Req, reqs ) },
                          sinks={ "send": ( FP16, [ FP16( int( N.bits( v ) ) ) for v in want ] ) },
                          level=level, cmdline_opts=cmdline_opts, max_delay=max_delay,
                          seed=seed )


@pytest.mark.parametrize( "d,n", [ ( 4, 2000 ), ( 8, 1000 ), ( 16, 200 ), ( 64, 20 ) ] )
def test_lane_bit_exact( d, n, level, cmdline_opts ):
  r = run_lane( d, level, cmdline_opts, n, seed=d )
  assert len( r.arrivals["send"] ) == n


@pytest.mark.parametrize( "d", [ 4, 8 ] )
def test_lane_backpressure_cl_equals_rtl( d, level, cmdline_opts ):
  run_matching_cl( level, cmdline_opts, lambda lv, opts: run_lane(
    d, lv, opts, 100, seed=1, max_delay=3 ), key=lambda r: r.arrivals )
  if level != "fl":
    # with no stalls the first result leaves after the configured latency
    first = run_lane( d, level, cmdline_opts, 1 ).arrivals["send"][0]
    assert first == DFXConfig( d=d ).mfu_lane_latency + 2
