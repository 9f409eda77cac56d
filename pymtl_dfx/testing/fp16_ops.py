"""Stimulus and a runner for the FP16 operators, shared by tests and benchmarks."""

import numpy as np

from .. import numerics
from ..config import DFXConfig
from ..units.fpu import (FP16, FP16AddReq, FP16AdderCL, FP16AdderFL,
                         FP16AdderRTL, FP16MulReq, FP16MultiplierCL,
                         FP16MultiplierFL, FP16MultiplierRTL)
from .harness import run_stream_test
from .levels import select

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
  "add": dict( fl=FP16AdderFL, cl=FP16AdderCL, rtl=FP16AdderRTL, Req=FP16AddReq,
               latency=DFXConfig().fp_add_latency ),
  "mul": dict( fl=FP16MultiplierFL, cl=FP16MultiplierCL, rtl=FP16MultiplierRTL,
               Req=FP16MulReq, latency=DFXConfig().fp_mul_latency ),
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
  """Every ordered pair of the edge values."""
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


def run_fp16_op( op, level, cmdline_opts, a, b, seed=0, max_delay=0, latency=None ):
  """Stream the pairs (a, b) through the operator at `level`; every output is
  checked against numerics.  The adder gets a random add/sub mix."""
  spec = OPS[ op ]
  sub = np.random.default_rng( seed ).integers( 0, 2, len( a ) ) if op == "add" \
        else np.zeros( len( a ), int )
  want = golden( op, a, b, sub )
  Model = select( level, fl=spec["fl"], cl=spec["cl"], rtl=spec["rtl"] )
  dut = Model( latency or spec["latency"] )
  return run_stream_test(
    dut,
    sources={ "recv": ( spec["Req"], requests( op, a, b, sub ) ) },
    sinks={ "send": ( FP16, [ FP16( int( w ) ) for w in want ] ) },
    level=level, cmdline_opts=cmdline_opts, max_delay=max_delay, seed=seed,
    describe=repr )
