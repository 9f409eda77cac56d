"""The functional DMA (DMAFunc): HBM/DDR transfers, the weight stream and the transposed V write."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.lib.tiling import band_width, from_stream
from pymtl_dfx.lib.arith import ceil_div
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import DmaOp as D, make
from pymtl_dfx.testing.units import run_instructions
from pymtl_dfx.funcsim.DMAFunc import DMAFunc
from pymtl_dfx.units.dma.semantics import MemoryError_
from pymtl_dfx.funcsim.weight_stream import WeightStreamFunc
from pymtl_dfx.units.regfile.state import VectorRegisterFile

# the instruction-level functional units (pymtl_dfx.funcsim): untimed, one level
pytestmark = pytest.mark.no_verilog

F16 = np.float16


def setup( cfg, words=4096 ):
  rf = VectorRegisterFile( 256, cfg.d )
  hbm = np.zeros( ( words, 32 ), F16 )
  ddr = np.zeros( ( words, 32 ), F16 )
  stream = WeightStreamFunc()
  dut = DMAFunc( cfg, rf, hbm, ddr, stream )
  return dut, rf, hbm, ddr, stream


@pytest.mark.parametrize( "d", [ 32, 64 ] )
def test_reads_and_writes( d, cmdline_opts ):
  cfg = DFXConfig( d=d, l=8 )
  dut, rf, hbm, ddr, stream = setup( cfg )
  rng = np.random.default_rng( d )
  data = rng.standard_normal( ( 64, 32 ) ).astype( F16 )
  ddr[ 100:164 ] = data
  hbm[ 10:74 ] = data[::-1]
  vw = d // 32
  n_vec = 64 // vw
  run_instructions( dut, [
    make( D.DDR_READ, rf=0, addr=100, vecs=n_vec ),
    make( D.HBM_READ, rf=100, addr=10, vecs=n_vec ),
    make( D.DDR_WRITE, rf=100, addr=1000, vecs=n_vec ),
    make( D.HBM_WRITE, rf=0, addr=2000, vecs=n_vec ),
    make( D.HBM_READ, addr=10, vecs=2 * cfg.l, rows=d, mpu=1 ),   # a 1 x 2 tile grid
  ], "fl", cmdline_opts, max_delay=2 )
  assert np.array_equal( N.bits( rf.read( 0, 64 * 32 ) ), N.bits( data.reshape( -1 ) ) )
  assert np.array_equal( N.bits( ddr[ 1000:1064 ] ), N.bits( data[::-1] ) )
  assert np.array_equal( N.bits( hbm[ 2000:2064 ] ), N.bits( data ) )
  block, _ = stream.pop( 2 * cfg.l )
  assert np.array_equal( N.bits( block ), N.bits( data[::-1].reshape( -1, d )[ :2 * cfg.l ] ) )


@pytest.mark.parametrize( "d,l,hd", [ ( 32, 8, 64 ), ( 64, 16, 64 ), ( 32, 4, 32 ) ] )
def test_transposed_v_rows_form_the_mpu_matrix( d, l, hd, cmdline_opts ):
  """Rows written with `tr` are a row-major tile grid: one `hbm_read mpu
  rows=T` streams them, in tile order, as V [T, hd]."""
  cfg = DFXConfig( d=d, l=l )
  dut, rf, hbm, ddr, stream = setup( cfg )
  T = 2 * d + 3
  V = np.random.default_rng( 1 ).standard_normal( ( T, hd ) ).astype( F16 )
  per_row = hd // d
  for t in range( T ):
    rf.write( t * per_row, V[t] )
  n_vecs = ceil_div( T, d ) * ceil_div( hd, l ) * l
  run_instructions( dut, [ make( D.HBM_WRITE, rf=t * per_row, addr=64, vecs=per_row, tr=1, pos=t )
                           for t in range( T ) ] +
                    [ make( D.HBM_READ, mpu=1, addr=64, vecs=n_vecs, rows=T ) ],
                    "fl", cmdline_opts, max_delay=1 )
  vecs, _ = stream.pop( n_vecs )
  band = band_width( hd, l, cfg.psum_entries )
  assert np.array_equal( N.bits( from_stream( vecs, T, hd, d, l, band ) ), N.bits( V ) )


@pytest.mark.parametrize( "fields,match", [
  ( dict( mpu=1, vecs=24, rows=64 ), "hbm_read mpu: vecs=24 is 3 tiles, not a whole number of "
                                     r"columns of ceil\(rows=64 / d=32\) = 2 row chunks" ),
  ( dict( mpu=1, vecs=8, rows=0 ), "hbm_read mpu: rows=0 with vecs=8" ),
  ( dict( rf=0, vecs=2, rows=32 ), "hbm_read without mpu: rows=32 and cmajor=0 must be 0" ),
] )
def test_bad_matrix_read_names_the_problem( fields, match, cmdline_opts ):
  cfg = DFXConfig( d=32, l=8 )
  dut, rf, hbm, ddr, stream = setup( cfg )
  with pytest.raises( ValueError, match=match ):
    run_instructions( dut, [ make( D.HBM_READ, addr=0, **fields ) ], "fl", cmdline_opts )


def test_out_of_range_names_the_memory( cmdline_opts ):
  cfg = DFXConfig( d=32, l=8 )
  dut, rf, hbm, ddr, stream = setup( cfg, words=16 )
  with pytest.raises( MemoryError_, match="ddr_read of 2 words at DDR 0xf runs past its 16 words" ):
    run_instructions( dut, [ make( D.DDR_READ, rf=0, addr=15, vecs=2 ) ], "fl", cmdline_opts )
