"""The MPU engine (tile streams in, finished columns out) at every level,
against `numerics` on whole matrices, and CL == RTL cycle for cycle."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import ComputeOp as C, PostOp
from pymtl_dfx.isa.codec import fp16_bits
from pymtl_dfx.testing import run_stream_test, select_or_skip
from pymtl_dfx.testing.fp16_ops import EDGE_BITS
from pymtl_dfx.units.mpu.MPUEngineFL import MPUEngineFL
from pymtl_dfx.units.mpu.msgs import MPUCmd, mk_mpu_types
from pymtl_dfx.units.mpu.streams import expected_out, mpu_streams

F16 = np.float16
KINDS = [ ( C.CONV1D, PostOp.NONE ), ( C.CONV1D, PostOp.GELU ), ( C.MM, PostOp.NONE ),
          ( C.MASKEDMM, PostOp.NONE ), ( C.MM, PostOp.REDMAX ), ( C.MM, PostOp.VECTORIZE ) ]
# (d, l, psum entries): the three shapes; small buffers so that
# matrices span several bands, one band narrower than the others
CONFIGS = { "d4l2": DFXConfig( d=4, l=2, psum_entries=2 ),
            "d8l4": DFXConfig( d=8, l=4, psum_entries=4 ),
            "d64l16": DFXConfig( d=64, l=16, psum_entries=2 ) }


def engine( level ):
  from pymtl_dfx.units import mpu
  models = { "fl": MPUEngineFL }
  for lv, name in ( ( "cl", "MPUEngineCL" ), ( "rtl", "MPUEngineRTL" ) ):
    try:
      models[ lv ] = getattr( __import__( f"pymtl_dfx.units.mpu.{name}", fromlist=[ name ] ), name )
    except ImportError:
      pass
  return select_or_skip( level, **models )


def random_matrix_inst( rng, cfg, op, post, rows=None, cols=None ):
  """A command with its operands and the numerics result (whole matrix)."""
  d, l = cfg.d, cfg.l
  rows = rows or int( rng.integers( 1, 3 * d + 2 ) )
  cols = cols or int( rng.integers( 1, 4 * l + 2 ) )
  x = ( rng.standard_normal( -( -rows // d ) * d ) * 2 ).astype( F16 )
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


@pytest.mark.parametrize( "name", list( CONFIGS ) )
def test_every_kind_and_shape( name, level, cmdline_opts ):
  """Each op / post-op on full tiles, ragged edges, one-tile and many-band
  matrices, as one instruction stream with random delays."""
  cfg = CONFIGS[ name ]
  d, l = cfg.d, cfg.l
  rng = np.random.default_rng( d )
  shapes = [ ( d, l ), ( 5, 3 ), ( 2 * d + 1, 5 * l + 1 ) ] if d < 64 else [ ( d, l ), ( 2 * d + 3, 3 * l - 1 ) ]
  insts = [ random_matrix_inst( rng, cfg, op, post, r, c ) for op, post in KINDS for r, c in shapes ]
  run_program( level, cmdline_opts, cfg, insts, max_delay=2, seed=d )


@pytest.mark.parametrize( "name", [ "d4l2", "d8l4" ] )
def test_cl_cycles_equal_rtl( name, level, cmdline_opts ):
  """Random delays on every port: each output leaves the CL model in the
  cycle it leaves the RTL (and Verilator)."""
  if level == "fl":
    pytest.skip( "FL is untimed" )
  cfg = CONFIGS[ name ]
  rng = np.random.default_rng( 7 )
  insts = [ random_matrix_inst( rng, cfg, op, post ) for op, post in KINDS for _ in range( 2 ) ]
  got = run_program( level, cmdline_opts, cfg, insts, max_delay=3, seed=11 ).arrivals
  if level == "rtl":
    assert got == run_program( "cl", {}, cfg, insts, max_delay=3, seed=11 ).arrivals


@pytest.mark.parametrize( "kind", KINDS, ids=lambda k: f"{k[0].mnemonic}-{k[1].mnemonic}" )
def test_random_instructions( kind, level, cmdline_opts ):
  """At least 1,000 random tiles of one instruction kind (random shapes,
  masks and operands, lanes past the matrix holding edge values) at d=4,
  l=2, as one stream with random delays.  pymtl3's Python simulation of the
  RTL runs a few hundred cycles per second, so it takes the first 100 tiles;
  Verilator runs the RTL on all of them."""
  cfg = CONFIGS["d4l2"]
  rng = np.random.default_rng( int( kind[0] ) * 4 + int( kind[1] ) )
  python_rtl = level == "rtl" and not cmdline_opts.get( "test_verilog" )
  insts, tiles = [], 0
  while tiles < ( 100 if python_rtl else 1000 ):
    insts.append( random_matrix_inst( rng, cfg, *kind ) )
    cmd = insts[-1][0]
    tiles += -( -int( cmd.rows ) // cfg.d ) * -( -int( cmd.cols ) // cfg.l )
  run_program( level, cmdline_opts, cfg, insts, max_delay=1, seed=3 )


def test_latency_of_one_tile( level, cmdline_opts ):
  """Without stalls a one-tile instruction's output leaves `mpu_tile_latency`
  cycles after its weights (plus the command's cycle and the harness's)."""
  if level == "fl":
    pytest.skip( "FL is untimed" )
  cfg = CONFIGS["d4l2"]
  inst = random_matrix_inst( np.random.default_rng( 0 ), cfg, C.MM, PostOp.NONE, 4, 2 )
  r = run_program( level, cmdline_opts, cfg, [ inst ] )
  assert r.arrivals["out"] == [ cfg.mpu_tile_latency + 3 ]
