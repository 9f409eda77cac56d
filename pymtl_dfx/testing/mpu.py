"""MPU engine stimulus and runner, shared by the tests and `sim/` scripts.

`random_matrix_inst` makes a command with random operands and its result
from `numerics` on the whole matrix (never from the engine's own per-tile
functions); `run_program` streams a list of them through the engine at a
level and checks every output message.
"""

import numpy as np

from .. import numerics as N
from ..isa import ComputeOp as C, PostOp
from ..isa.codec import fp16_bits
from ..lib.arith import ceil_div
from ..units.mpu.models import MODELS
from ..units.mpu.msgs import MPUCmd, mk_mpu_types
from ..units.mpu.streams import expected_out, mpu_streams
from .fp16_ops import EDGE_BITS
from .harness import run_stream_test
from .levels import select

F16 = np.float16
KINDS = [ ( C.CONV1D, PostOp.NONE ), ( C.CONV1D, PostOp.GELU ), ( C.MM, PostOp.NONE ),
          ( C.MASKEDMM, PostOp.NONE ), ( C.MM, PostOp.REDMAX ), ( C.MM, PostOp.VECTORIZE ) ]


def engine( level ):
  return select( level, **MODELS )


def random_matrix_inst( rng, cfg, op, post, rows=None, cols=None ):
  """A command with its operands and the numerics result (whole matrix)."""
  d, l = cfg.d, cfg.l
  rows = rows or int( rng.integers( 1, 3 * d + 2 ) )
  cols = cols or int( rng.integers( 1, 4 * l + 2 ) )
  x = ( rng.standard_normal( ceil_div( rows, d ) * d ) * 2 ).astype( F16 )
  x[ rows: ] = N.from_bits( rng.choice( np.array( EDGE_BITS, np.uint16 ), x.size - rows ) )
  w = rng.standard_normal( ( rows, cols ) ).astype( F16 )
  edge = rng.random( ( rows, cols ) ) < 0.01
  w[ edge ] = N.from_bits( rng.choice( np.array( EDGE_BITS, np.uint16 ), edge.sum() ) )
  b = rng.standard_normal( cols ).astype( F16 )
  scale, mask = F16( 0.125 ), int( rng.integers( 0, cols + 1 ) )
  y = N.matvec( x[ :rows ], w, d )
  if op == C.CONV1D:
    y = N.add( y, b )
  elif op == C.MASKEDMM:
    y = N.mul( y, scale )
    y[ mask: ] = F16( -np.inf )
  if post == PostOp.GELU:
    y = N.gelu( y )
  top = N.reduce_max( y ) if post == PostOp.REDMAX else None
  cmd = MPUCmd( int( op ), int( post ), rows, cols,
                mask if op == C.MASKEDMM else 0, fp16_bits( scale ) if op == C.MASKEDMM else 0 )
  return cmd, x, w, ( b if op == C.CONV1D else None ), y, top


def program_streams( insts, cfg ):
  """Concatenated port streams of a list of instructions."""
  T = mk_mpu_types( cfg.d, cfg.l, cfg.psum_entries )
  ports = { "cmd": ( MPUCmd, [] ), "x": ( T["X"], [] ), "w": ( T["W"], [] ),
            "bias": ( T["Bias"], [] ) }
  out = []
  for cmd, x, w, b, y, top in insts:
    for port, msgs in mpu_streams( cmd, x, w, b, cfg ).items():
      ports[ port ][1].extend( msgs )
    out += expected_out( cmd, y, top, cfg )
  return ports, { "out": ( T["Out"], out ) }


def run_program( level, cmdline_opts, cfg, insts, max_delay=0, seed=0 ):
  sources, sinks = program_streams( insts, cfg )
  return run_stream_test( engine( level )( cfg ), sources, sinks, level, cmdline_opts,
                          max_delay=max_delay, seed=seed )
