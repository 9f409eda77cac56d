"""The MPU engine (tile streams in, finished columns out) at every level,
against `numerics` on whole matrices, and CL == RTL cycle for cycle; with
`mpu_post_bypass` (post-op stages only as the command needs) on every op x
post-op, and each command's tile latency as the config says."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import ComputeOp as C, PostOp
from pymtl_dfx.testing.levels import python_rtl, run_matching_cl
from pymtl_dfx.testing.mpu import KINDS, random_matrix_inst, run_program
from pymtl_dfx.units.mpu.timing import tile_latency

# (d, l, psum entries): the three shapes; small buffers so that
# matrices span several bands, one band narrower than the others; two in
# the raster tile walk (`mpu_raster_walk`); and a tile as wide as it is
# tall (l = d, `streaming-wide`'s l=32 on the small model's d=32)
CONFIGS = { "d4l2": DFXConfig( d=4, l=2, psum_entries=2 ),
            "d8l4": DFXConfig( d=8, l=4, psum_entries=4 ),
            "d64l16": DFXConfig( d=64, l=16, psum_entries=2 ),
            "d4l2-raster": DFXConfig( d=4, l=2, psum_entries=2, mpu_raster_walk=1 ),
            "d8l4-raster": DFXConfig( d=8, l=4, psum_entries=4, mpu_raster_walk=1 ),
            "d4l4-raster": DFXConfig( d=4, l=4, psum_entries=2, mpu_raster_walk=1 ) }
# every op with every post-op (the compiler emits the six of KINDS; the
# format, the random programs and the post-op stages take any pair)
ALL_KINDS = [ ( op, post ) for op in ( C.CONV1D, C.MASKEDMM, C.MM ) for post in PostOp ]
BYPASS = pytest.mark.parametrize( "bypass", [ 0, 1 ], ids=lambda b: f"bypass{b}" )


def kinds( bypass ):
  return ALL_KINDS if bypass else KINDS


def _one_option( name, bypass ):
  if bypass and CONFIGS[ name ].mpu_raster_walk:
    pytest.skip( "each design option alone here (a Verilator build per pair); both together "
                 "run in the streaming profile's end-to-end and random-program tests" )


@BYPASS
@pytest.mark.parametrize( "name", list( CONFIGS ) )
def test_every_kind_and_shape( name, bypass, level, cmdline_opts ):
  """Each op / post-op on full tiles, ragged edges, one-tile and many-band
  matrices, as one instruction stream with random delays (with the post-op
  bypass every op x post-op: the stages a command skips change no value)."""
  _one_option( name, bypass )
  cfg = CONFIGS[ name ].replace( mpu_post_bypass=bypass )
  d, l = cfg.d, cfg.l
  if d > 4 and python_rtl( level, cmdline_opts ):
    pytest.skip( "pymtl3's Python simulation takes minutes here; Verilator runs it "
                 "under --test-verilog" )
  if d == 64 and level == "rtl":
    pytest.skip( "the full-size MPU is 1,024 multipliers: pymtl3 takes minutes to elaborate "
                 "it and Verilator over ten to build it; `python sim/check_mpu_full_size.py` "
                 "translates, lints and runs it on full tiles" )
  rng = np.random.default_rng( d )
  shapes = [ ( d, l ), ( 5, 3 ), ( 2 * d + 1, 5 * l + 1 ) ] if d < 64 else [ ( d, l ), ( 2 * d + 3, 3 * l - 1 ) ]
  if bypass and python_rtl( level, cmdline_opts ):
    shapes = shapes[ -1: ]     # a sample (every kind on a ragged many-band matrix)
  insts = [ random_matrix_inst( rng, cfg, op, post, r, c ) for op, post in kinds( bypass )
            for r, c in shapes ]
  run_program( level, cmdline_opts, cfg, insts, max_delay=2, seed=d )


@BYPASS
@pytest.mark.parametrize( "name", [ "d4l2", "d8l4", "d4l2-raster", "d8l4-raster" ] )
def test_cl_cycles_equal_rtl( name, bypass, level, cmdline_opts ):
  """Random delays on every port: each output leaves the CL model in the
  cycle it leaves the RTL (and Verilator); with the post-op bypass the
  depth changes from command to command."""
  if level == "fl":
    pytest.skip( "FL is untimed" )
  _one_option( name, bypass )
  if CONFIGS[ name ].d > 4 and python_rtl( level, cmdline_opts ):
    pytest.skip( "Verilator runs this RTL case under --test-verilog" )
  cfg = CONFIGS[ name ].replace( mpu_post_bypass=bypass )
  rng = np.random.default_rng( 7 )
  insts = [ random_matrix_inst( rng, cfg, op, post ) for op, post in kinds( bypass )
            for _ in range( 1 if bypass else 2 ) ]
  run_matching_cl( level, cmdline_opts, lambda lv, opts: run_program(
    lv, opts, cfg, insts, max_delay=3, seed=11 ), key=lambda r: r.arrivals )


@pytest.mark.parametrize( "kind", KINDS, ids=lambda k: f"{k[0].mnemonic}-{k[1].mnemonic}" )
def test_random_instructions( kind, level, cmdline_opts ):
  """At least 1,000 random tiles of one instruction kind (random shapes,
  masks and operands, lanes past the matrix holding edge values) at d=4,
  l=2, as one stream with random delays.  The RTL runs it in Verilator:
  pymtl3's Python simulation of it manages about a hundred cycles a second."""
  if python_rtl( level, cmdline_opts ):
    pytest.skip( "the RTL runs this stream under --test-verilog" )
  cfg = CONFIGS["d4l2"]
  rng = np.random.default_rng( int( kind[0] ) * 4 + int( kind[1] ) )
  insts, tiles = [], 0
  while tiles < 1000:
    insts.append( random_matrix_inst( rng, cfg, *kind ) )
    cmd = insts[-1][0]
    tiles += -( -int( cmd.rows ) // cfg.d ) * -( -int( cmd.cols ) // cfg.l )
  run_program( level, cmdline_opts, cfg, insts, max_delay=1, seed=3 )


# the post-op bypass: each op without and with GELU, and the post-ops that
# are selects (REDMAX, VECTORIZE), which add no stage
ONE_TILE = ( [ ( 0, ( C.MM, PostOp.NONE ) ) ] +
             [ ( 1, ( op, post ) ) for op in ( C.CONV1D, C.MASKEDMM, C.MM )
               for post in ( PostOp.NONE, PostOp.GELU ) ] +
             [ ( 1, ( C.MM, PostOp.REDMAX ) ), ( 1, ( C.MM, PostOp.VECTORIZE ) ) ] )


@pytest.mark.parametrize( "bypass, kind", ONE_TILE,
                          ids=[ f"bypass{b}-{k[0].mnemonic}-{k[1].mnemonic}" for b, k in ONE_TILE ] )
def test_latency_of_one_tile( bypass, kind, level, cmdline_opts ):
  """Without stalls a one-tile instruction's output leaves
  `timing.tile_latency` of its op and post-op cycles after its weights (plus
  the command's cycle and the harness's): `mpu_tile_latency` for every
  command by default, only the stages it uses with the post-op bypass."""
  if level == "fl":
    pytest.skip( "FL is untimed" )
  cfg = CONFIGS["d4l2"].replace( mpu_post_bypass=bypass )
  op, post = kind
  inst = random_matrix_inst( np.random.default_rng( 0 ), cfg, op, post, 4, 2 )
  r = run_program( level, cmdline_opts, cfg, [ inst ] )
  assert r.arrivals["out"][0] == tile_latency( cfg, op, post ) + 3
  assert len( r.arrivals["out"] ) == 1 + ( post == PostOp.REDMAX )


def test_padding_rows_of_a_tile_are_ignored( level, cmdline_opts ):
  """A tile's rows past the matrix (rows not a multiple of d) hold whatever
  memory holds there: inf, NaN, negative values.  They enter the MFU as
  +0 with their x lanes, as `numerics.matvec` pads a chunk, so the result
  is the matrix's alone (found by the whole-core random programs: the
  engine zeroed only x, and +0 * inf gave NaN, +0 * -w a -0 product)."""
  cfg = CONFIGS["d4l2"]
  d, l = cfg.d, cfg.l
  rng = np.random.default_rng( 5 )
  insts = []
  for op, post in KINDS:
    for rows, cols in ( ( 5, 3 ), ( 2 * d + 1, 3 * l - 1 ), ( d - 1, l ) ):
      cmd, x, w, b, y, top = random_matrix_inst( rng, cfg, op, post, rows, cols )
      n_r = -( -rows // d )
      pad = N.from_bits( rng.choice( np.array( [ 0x7c00, 0xfc00, 0x7e00, 0xbc00, 0x8001, 0x7bff ],
                                               np.uint16 ), ( n_r * d - rows, cols ) ) )
      insts.append( ( cmd, x, np.concatenate( [ w, pad ] ), b, y, top ) )
  run_program( level, cmdline_opts, cfg, insts, max_delay=1, seed=5 )
