"""Stimulus and a runner for every FP16 operator, shared by tests and benchmarks.

Binary operators (add/sub, mul, max) take a pair, unary ones (exp, recip,
rsqrt, gelu, invpow2) one value; every output is checked against `pymtl_dfx.numerics`
bit for bit.
"""

import numpy as np

from .. import numerics
from ..config import DFXConfig
from ..units import fpu as F
from ..units.fpu import models as M
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

_CFG = DFXConfig()


def _op( models, Req, latency, golden ):
  return dict( models=models, Req=Req, latency=latency, golden=golden )


OPS = {
  "add":   _op( M.ADDER_MODELS, F.FP16AddReq,
                _CFG.fp_add_latency, None ),
  "mul":   _op( M.MULTIPLIER_MODELS, F.FP16MulReq,
                _CFG.fp_mul_latency, numerics.mul ),
  "max":   _op( M.MAX_MODELS, F.FP16MulReq,
                _CFG.fp_max_latency, numerics.maximum ),
  "exp":   _op( M.EXP_MODELS, None, _CFG.fp_exp_latency,
                numerics.exp ),
  "recip": _op( M.RECIP_MODELS, None, _CFG.fp_recip_latency,
                numerics.recip ),
  "rsqrt": _op( M.RSQRT_MODELS, None, _CFG.fp_rsqrt_latency,
                numerics.rsqrt ),
  "gelu":  _op( M.GELU_MODELS, None, _CFG.fp_gelu_latency,
                numerics.gelu ),
  "invpow2": _op( M.INVPOW2_MODELS, None,
                  _CFG.fp_invpow2_latency, numerics.inv_pow2 ),
}
BINARY = [ op for op, spec in OPS.items() if spec["Req"] is not None ]
UNARY = [ op for op, spec in OPS.items() if spec["Req"] is None ]


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


def all_patterns():
  """Every FP16 bit pattern, in order."""
  return np.arange( 1 << 16, dtype=np.uint32 ).astype( np.uint16 )


def random_operands( op, n, seed ):
  """`random_pairs` for a binary operator, random patterns for a unary one."""
  if op in BINARY:
    return random_pairs( n, seed )
  return ( np.random.default_rng( seed ).integers( 0, 1 << 16, n, dtype=np.uint32 )
           .astype( np.uint16 ), )


def edge_operands( op ):
  return edge_pairs() if op in BINARY else ( np.array( EDGE_BITS, np.uint16 ), )


def golden( op, operands, sub ):
  vals = [ numerics.from_bits( x ) for x in operands ]
  if op == "add":
    return np.where( sub, numerics.bits( numerics.sub( *vals ) ),
                     numerics.bits( numerics.add( *vals ) ) )
  return numerics.bits( OPS[ op ]["golden"]( *vals ) )


def requests( op, operands, sub ):
  Req = OPS[ op ]["Req"]
  if op == "add":
    a, b = operands
    return [ Req( int( s ), F.FP16( int( x ) ), F.FP16( int( y ) ) )
             for x, y, s in zip( a, b, sub ) ]
  if Req is not None:
    a, b = operands
    return [ Req( F.FP16( int( x ) ), F.FP16( int( y ) ) ) for x, y in zip( a, b ) ]
  return [ F.FP16( int( x ) ) for x in operands[0] ]


def run_fp16_op( op, level, cmdline_opts, operands, seed=0, max_delay=0, latency=None ):
  """Stream the operands (a tuple of arrays: (a, b) or (x,)) through the
  operator at `level`; every output is checked against numerics.  The adder
  gets a random add/sub mix."""
  spec = OPS[ op ]
  n = len( operands[0] )
  sub = np.random.default_rng( seed ).integers( 0, 2, n ) if op == "add" \
        else np.zeros( n, int )
  want = golden( op, operands, sub )
  Model = select( level, **spec["models"] )
  dut = Model( latency or spec["latency"] )
  return run_stream_test(
    dut,
    sources={ "recv": ( spec["Req"] or F.FP16, requests( op, operands, sub ) ) },
    sinks={ "send": ( F.FP16, [ F.FP16( int( w ) ) for w in want ] ) },
    level=level, cmdline_opts=cmdline_opts, max_delay=max_delay, seed=seed,
    describe=repr )


def random_fp16( rng, n ):
  """Mostly normal values, some specials and subnormals."""
  x = ( rng.standard_normal( n ) * 4 ).astype( np.float16 )
  special = rng.random( n ) < 0.05
  x[ special ] = numerics.from_bits( rng.integers( 0, 1 << 16, special.sum() ).astype( np.uint16 ) )
  return x
