"""The register file manager behind its ports, at fl (stream FL), cl and rtl
(Verilator under --test-verilog): random programs with random source and
sink delays, every message it sends checked against the engines' contracts,
the register file read back through rf_rd against the sequential FL
semantics (`regfile.harness`); CL == RTL per message arrival cycle."""

import pytest

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import ComputeOp as C, encode, make
from pymtl_dfx.testing import select_or_skip
from pymtl_dfx.testing.levels import python_rtl, run_matching_cl
from pymtl_dfx.units.control.decode_cache import decoded
from pymtl_dfx.units.control.msgs import InstMsg
from pymtl_dfx.units.mpu.streams import mpu_cmd, order_of
from pymtl_dfx.testing.regfile_harness import rfm_program, run_rfm
from pymtl_dfx.units.regfile.ports import RFMError, x_buffer_entries
from pymtl_dfx.testing.rfm_with_engines import RFMWithEngines
from pymtl_dfx.units.regfile.models import MODELS

# d=4 is enough for the manager (only the DMA engine needs d % 32 == 0);
# psum_entries=2 makes the MPU's column bands matter; core 1 of 3 on the ring
SMALL = DFXConfig( d=4, l=2, vreg_entries=64, mreg_entries=16, psum_entries=2,
                   router_words=4, cores=3 )
PAPER = DFXConfig( vreg_entries=64, mreg_entries=16, cores=4 )    # d=64, l=16, W=64
# the raster tile walk (`mpu_raster_walk`): x replayed and the bias sent in
# its order
RASTER = SMALL.replace( mpu_raster_walk=1 )
# the VPU's GELU pipe (`vpu_gelu`): the programs draw gelu too
GELU = SMALL.replace( vpu_gelu=1 )
CORE = 1


def manager( level, cfg, **only ):
  return select_or_skip( level, **( only or MODELS ) )( cfg, CORE )


@pytest.mark.parametrize( "seed,chained,cfg", [ ( 0, False, SMALL ), ( 1, False, SMALL ),
                                               ( 2, True, SMALL ), ( 9, True, RASTER ),
                                               ( 4, False, GELU ) ],
                          ids=[ "0-False", "1-False", "2-True", "9-True-raster", "4-False-gelu" ] )
def test_program( seed, chained, cfg, level, cmdline_opts ):
  if cfg.vpu_gelu and level == "rtl" and not python_rtl( level, cmdline_opts ):
    pytest.skip( "vpu_gelu changes the VPU only: the manager's Verilog is the default's, "
                 "which the other cases run" )
  prog = rfm_program( cfg, seed=seed, core_id=CORE, chained=chained )
  if cfg.vpu_gelu:
    assert C.GELU in [ decoded( int( w ) )[1] for w in prog.sources["vpu_inst"][1] ]
  run_rfm( manager( level, cfg ), prog, level, cmdline_opts, max_delay=3, seed=seed )


# the paper's d=64, l=16; the RTL in Verilator only (Python simulation of
# its 4,096-element storage is too slow for the plain pass)
def test_program_paper_size( level, cmdline_opts ):
  if python_rtl( level, cmdline_opts ):
    pytest.skip( "d=64 RTL runs under --test-verilog" )
  prog = rfm_program( PAPER, seed=5, core_id=CORE, n_vpu=4, n_mpu=3, syncs=[ 100, 64 ] )
  run_rfm( manager( level, PAPER ), prog, level, cmdline_opts, max_delay=2, seed=5 )


@pytest.mark.parametrize( "size,seed,delay,chained", [
  ( "small", 3, 3, False ), ( "small", 4, 0, False ), ( "small", 5, 2, True ),
  ( "paper", 6, 2, True ), ( "raster", 7, 2, True ),
] )
def test_cl_matches_rtl( size, seed, delay, chained, level, cmdline_opts ):
  if level != "rtl":
    pytest.skip( "one comparison, run as the rtl case (Verilator under --test-verilog)" )
  if size == "paper" and python_rtl( level, cmdline_opts ):
    pytest.skip( "d=64 RTL runs under --test-verilog" )
  cfg = { "small": SMALL, "paper": PAPER, "raster": RASTER }[ size ]
  prog = rfm_program( cfg, seed=seed, core_id=CORE, chained=chained,
                      **( dict( n_vpu=4, n_mpu=4 ) if size == "paper" else {} ) )
  run_matching_cl( level, cmdline_opts, lambda lv, opts: run_rfm(
    MODELS[ lv ]( cfg, CORE ), prog, lv, opts, max_delay=delay, seed=seed ),
    key=lambda r: ( r.arrivals, r.cycles ) )


# one manager, built without a position, serves every core of the ring: its
# core_id input picks the segment it sends (at rtl the same module for all
# three positions, and cycle for cycle the CL's)
@pytest.mark.parametrize( "core", [ 0, 1, 2 ] )
def test_sync_at_every_position( core, level, cmdline_opts ):
  select_or_skip( level, **MODELS )
  prog = rfm_program( SMALL, seed=9, core_id=core, n_vpu=1, n_mpu=1, syncs=[ 5, 2 * SMALL.router_words + 1 ] )
  run = lambda lv, opts: run_rfm( MODELS[ lv ]( SMALL, None ), prog, lv, opts, max_delay=2, seed=9 )
  if level == "rtl":
    run_matching_cl( level, cmdline_opts, run, key=lambda r: ( r.arrivals, r.cycles ) )
  else:
    run( level, cmdline_opts )


def _per_inst( arrivals, counts ):
  out, k = [], 0
  for n in counts:
    out.append( arrivals[ k:k + n ] )
    k += n
  return out


# double buffering: with no delays the next instruction's x (3 entries, 3
# cycles to collect) is collected while the current one streams, so its
# cmd follows the current stream after the one-cycle stream turnaround
def test_x_collected_while_streaming( level, cmdline_opts ):
  Model = select_or_skip( level, cl=MODELS["cl"], rtl=MODELS["rtl"] )
  prog = rfm_program( SMALL, seed=7, core_id=CORE, n_mpu=4, min_r=3 )
  insts = [ decoded( int( w ) ) for w in prog.sources["mpu_inst"][1] ]
  cmds = [ mpu_cmd( i, op ) for i, op, _ in insts ]
  n_x = [ len( order_of( c, SMALL ) ) for c in cmds ]
  n_r = [ -( -int( c.rows ) // SMALL.d ) for c in cmds ]
  r = run_rfm( Model( SMALL, CORE ), prog, level, cmdline_opts )
  cmd_at, xs = r.arrivals["mpu_cmd"], _per_inst( r.arrivals["mpu_x"], n_x )
  assert min( n_r ) == 3
  for k in range( 1, len( cmds ) ):
    # stream k-1 ends with its last x (bias goes out alongside); one cycle to
    # register the end, then k's cmd: no wait for k's n_r-cycle collection
    assert cmd_at[k] - xs[ k - 1 ][-1] == 2, ( k, n_r[k] )


def test_bad_instructions( level ):
  Model = select_or_skip( level, fl=MODELS["fl"], cl=MODELS["cl"] )
  too_many = ( x_buffer_entries( SMALL ) + 1 ) * SMALL.d
  prog = rfm_program( SMALL, seed=0, core_id=CORE, n_mpu=1 )
  T, _ = prog.sources["mpu_inst"]
  prog.sources["mpu_inst"] = ( T, [ InstMsg( encode( make( C.MM, dst=20, src1=0, rows=too_many,
                                                                cols=3 ) ) ) ] )
  with pytest.raises( RFMError, match=f"rows={too_many} needs 9 x-buffer entries of 4; an x "
                                      f"buffer holds 8" ):
    run_rfm( Model( SMALL, CORE ), prog, level )


def test_gelu_needs_the_vpu_gelu_pipe( level ):
  """A core without `vpu_gelu` has no GELU pipe in its VPU: the manager
  refuses gelu, naming the option (`ports.vector_error`, which
  `Host.check_program` applies to every level)."""
  Model = select_or_skip( level, fl=MODELS["fl"], cl=MODELS["cl"] )
  prog = rfm_program( SMALL, seed=0, core_id=CORE, n_mpu=1 )
  T, _ = prog.sources["vpu_inst"]
  prog.sources["vpu_inst"] = ( T, [ InstMsg( encode( make( C.GELU, dst=8, src1=0, len=5 ) ) ) ] )
  with pytest.raises( RFMError, match=r"vpu_inst gelu: gelu needs DFXConfig.vpu_gelu=1 \(this "
                                      r"core's VPU has no GELU pipe\)" ):
    run_rfm( Model( SMALL, CORE ), prog, level )


def test_bad_config( level ):
  Model = select_or_skip( level, **MODELS )
  with pytest.raises( RFMError, match="l=8 > d=4" ):
    Model( SMALL.replace( l=8 ), CORE ).elaborate()
  with pytest.raises( RFMError, match="core 3 of 3" ):
    Model( SMALL, 3 ).elaborate()


# end to end: the manager with the VPU and MPU engines of the same level;
# the final register file is the sequential FL semantics'.  The rtl case
# (Verilator only: the engines' Python RTL runs ~30 cycles/s) is also
# compared with the cl one, message by message and cycle by cycle.
@pytest.mark.parametrize( "cfg", [ SMALL, RASTER ], ids=[ "zigzag", "raster" ] )
def test_with_engines( cfg, level, cmdline_opts ):
  if python_rtl( level, cmdline_opts ):
    pytest.skip( "the engines' RTL runs under --test-verilog" )
  prog = rfm_program( cfg, seed=8, core_id=CORE, chained=True ).with_engines()
  run_matching_cl( level, cmdline_opts, lambda lv, opts: run_rfm(
    RFMWithEngines( lv, cfg, CORE ), prog, lv, opts, max_delay=2, seed=8 ),
    key=lambda r: r.arrivals )
