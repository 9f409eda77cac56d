"""The functional MPU (MPUFunc): matrix instructions on the weight stream, against numerics."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.lib.tiling import band_width, to_stream
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import ComputeOp as C, PostOp, make
from pymtl_dfx.testing.units import run_instructions
from pymtl_dfx.funcsim.MPUFunc import MPUFunc
from pymtl_dfx.funcsim.weight_stream import WeightStreamError, WeightStreamFunc
from pymtl_dfx.units.regfile.state import VectorRegisterFile

# the instruction-level functional units (pymtl_dfx.funcsim): untimed, one level
pytestmark = pytest.mark.no_verilog

F16 = np.float16
CONFIGS = [ DFXConfig( d=8, l=4 ), DFXConfig( d=64, l=16 ), DFXConfig( d=32, l=8, psum_entries=2 ) ]


def setup( cfg ):
  rf = VectorRegisterFile( 256, cfg.d )
  stream = WeightStreamFunc()
  dut = MPUFunc( cfg, rf, stream, readonly_words=0 )
  return dut, rf, stream


def push_matrix( stream, w, cfg ):
  v = to_stream( w, cfg.d, cfg.l, band_width( w.shape[1], cfg.l, cfg.psum_entries ) )
  half = v.shape[0] // 2
  # two blocks: a matrix may span several hbm_reads
  stream.push( v[ :half ], None )
  stream.push( v[ half: ], None )


@pytest.mark.parametrize( "cfg", CONFIGS, ids=lambda c: f"d{c.d}l{c.l}p{c.psum_entries}" )
@pytest.mark.parametrize( "op,post", [ ( C.CONV1D, PostOp.NONE ), ( C.CONV1D, PostOp.GELU ),
                                       ( C.MM, PostOp.NONE ), ( C.MASKEDMM, PostOp.NONE ),
                                       ( C.MM, PostOp.REDMAX ) ] )
def test_matrix_op( op, post, cfg, cmdline_opts ):
  rng = np.random.default_rng( int( op ) * 10 + int( post ) + cfg.d )
  for rows, cols in ( ( 5, 3 ), ( cfg.d, cfg.l ), ( 3 * cfg.d + 1, 2 * cfg.l + 3 ) ):
    dut, rf, stream = setup( cfg )
    x = ( rng.standard_normal( rows ) * 2 ).astype( F16 )
    w = ( rng.standard_normal( ( rows, cols ) ) ).astype( F16 )
    b = ( rng.standard_normal( cols ) ).astype( F16 )
    rf.write( 0, x )
    rf.write( 64, b )
    push_matrix( stream, w, cfg )
    fields = dict( dst=128, src1=0, rows=rows, cols=cols, post=int( post ) )
    y = N.matvec( x, w, cfg.d )
    if op == C.CONV1D:
      fields["bias"] = 64
      y = N.add( y, b )
    if op == C.MASKEDMM:
      fields.update( scale=0.125, mask=cols - 1 )
      y = N.mul( y, F16( 0.125 ) )
      y[ cols - 1: ] = F16( -np.inf )
    if post == PostOp.GELU:
      y = N.gelu( y )
    run_instructions( dut, [ make( op, **fields ) ], "fl", cmdline_opts )
    dst = 128
    if post == PostOp.REDMAX:
      assert N.bits( rf.read( dst, 1 )[0] ) == N.bits( N.reduce_max( y ) )
      dst += 1
    assert np.array_equal( N.bits( rf.read( dst, cols ) ), N.bits( y ) )
    assert stream.available == 0


def test_missing_weights_are_reported( cmdline_opts ):
  cfg = DFXConfig( d=8, l=4 )
  dut, rf, stream = setup( cfg )
  with pytest.raises( WeightStreamError, match="needs 4 weight vectors but the stream holds 0" ):
    run_instructions( dut, [ make( C.MM, dst=8, src1=0, rows=8, cols=4 ) ], "fl", cmdline_opts )
