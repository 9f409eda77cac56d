"""FP16 adder and multiplier: one test body at FL, CL, RTL and Verilator.

Outputs are compared with `pymtl_dfx.numerics` bit for bit on the edge-case
set (every pair of special values) and on random pairs drawn over all bit
patterns and over the normal range with close exponents (where cancellation
and rounding carries happen).
"""

import numpy as np
import pytest

from pymtl_dfx import numerics
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.testing import run_stream_test, select
from pymtl_dfx.units.fpu import (FP16, FP16AddReq, FP16AdderCL, FP16AdderFL,
                                 FP16AdderRTL, FP16MulReq, FP16MultiplierCL,
                                 FP16MultiplierFL, FP16MultiplierRTL)

EDGE_BITS = [
  0x0000, 0x8000,                  # +-0
  0x0001, 0x8001, 0x03FF, 0x83FF,  # smallest / largest subnormal
  0x0200, 0x0400, 0x8400,          # subnormal half, smallest normal
  0x3C00, 0xBC00, 0x3C01, 0x3BFF,  # 1, -1, 1+ulp, 1-ulp/2
  0x4000, 0x3800, 0x1400, 0x0C00,  # 2, 0.5, small normals
  0x7BFF, 0xFBFF, 0x7BFE,          # max finite
  0x7C00, 0xFC00,                  # +-inf
  0x7E00, 0x7C01, 0xFE00, 0x7FFF,  # NaNs (quiet, signalling, negative)
  0x6800, 0x1000, 0x5BFF,          # exponents far apart
]

OPS = {
  "add": dict( fl=FP16AdderFL, cl=FP16AdderCL, rtl=FP16AdderRTL,
               latency=DFXConfig().fp_add_latency ),
  "mul": dict( fl=FP16MultiplierFL, cl=FP16MultiplierCL, rtl=FP16MultiplierRTL,
               latency=DFXConfig().fp_mul_latency ),
}


def random_pairs( n, seed ):
  """Half uniform over all bit patterns, half with exponents within 2 of
  each other (cancellation, carries and ties are common there)."""
  rng = np.random.default_rng( seed )
  a = rng.integers( 0, 1 << 16, n, dtype=np.uint32 )
  b = rng.integers( 0, 1 << 16, n, dtype=np.uint32 )
  close = rng.random( n ) < 0.5
  b_close = ( a & 0xFC00 ) ^ ( rng.integers( 0, 3, n, dtype=np.uint32 ) << 10 ) \
            | rng.integers( 0, 1 << 10, n, dtype=np.uint32 ) \
            | ( rng.integers( 0, 2, n, dtype=np.uint32 ) << 15 )
  b = np.where( close, b_close & 0xFFFF, b )
  return a.astype( np.uint16 ), b.astype( np.uint16 )


def edge_pairs():
  e = np.array( EDGE_BITS, dtype=np.uint16 )
  return np.repeat( e, len( e ) ), np.tile( e, len( e ) )


def golden( op, a, b, sub ):
  x, y = numerics.from_bits( a ), numerics.from_bits( b )
  if op == "mul":
    return numerics.bits( numerics.mul( x, y ) )
  return np.where( sub, numerics.bits( numerics.sub( x, y ) ),
                   numerics.bits( numerics.add( x, y ) ) )


def requests( op, a, b, sub ):
  if op == "mul":
    return [ FP16MulReq( FP16( int( x ) ), FP16( int( y ) ) ) for x, y in zip( a, b ) ]
  return [ FP16AddReq( int( s ), FP16( int( x ) ), FP16( int( y ) ) )
           for x, y, s in zip( a, b, sub ) ]


def describe( msg ):
  return repr( msg )


def run_op( op, level, cmdline_opts, a, b, seed=0, max_delay=0, latency=None ):
  sub = np.random.default_rng( seed ).integers( 0, 2, len( a ) ) if op == "add" \
        else np.zeros( len( a ), int )
  want = golden( op, a, b, sub )
  Model = select( level, **{ k: OPS[op][k] for k in ( "fl", "cl", "rtl" ) } )
  dut = Model( latency or OPS[op]["latency"] )
  return run_stream_test(
    dut,
    sources={ "recv": ( dut_req_type( op ), requests( op, a, b, sub ) ) },
    sinks={ "send": ( FP16, [ FP16( int( w ) ) for w in want ] ) },
    level=level, cmdline_opts=cmdline_opts, max_delay=max_delay, seed=seed )


def dut_req_type( op ):
  return FP16MulReq if op == "mul" else FP16AddReq


@pytest.mark.parametrize( "op", OPS )
def test_edge_cases( op, level, cmdline_opts ):
  a, b = edge_pairs()
  run_op( op, level, cmdline_opts, a, b )


@pytest.mark.parametrize( "op", OPS )
def test_random_100k( op, level, cmdline_opts ):
  a, b = random_pairs( 100_000, seed=7 if op == "add" else 8 )
  run_op( op, level, cmdline_opts, a, b, seed=3 )


@pytest.mark.parametrize( "op", OPS )
@pytest.mark.parametrize( "latency", [ 1, 3 ] )
def test_backpressure_and_latency( op, latency, level, cmdline_opts ):
  a, b = random_pairs( 300, seed=latency )
  r = run_op( op, level, cmdline_opts, a, b, seed=5, max_delay=3, latency=latency )
  assert len( r.arrivals["send"] ) == 300
  if level == "rtl":
    # the CL model's timing must be the RTL's, cycle for cycle, under stalls
    cl = run_op( op, "cl", {}, a, b, seed=5, max_delay=3, latency=latency )
    assert r.arrivals == cl.arrivals


@pytest.mark.parametrize( "op", OPS )
def test_latency_is_the_parameter( op, level, cmdline_opts ):
  """One message, no stalls: it leaves exactly `latency` cycles after it enters
  (CL and RTL); FL is untimed and only has to deliver it."""
  for latency in ( 1, 4, OPS[op]["latency"] ):
    a, b = np.array( [ 0x3C00 ], np.uint16 ), np.array( [ 0x4000 ], np.uint16 )
    r = run_op( op, level, cmdline_opts, a, b, latency=latency )
    if level != "fl":
      # the source's message is valid from cycle 1; the pipe takes it in
      # cycle 2; it is on the output `latency` cycles after that, and the
      # sink stamps the cycle in which it takes it
      assert r.arrivals["send"][0] == latency + 2
