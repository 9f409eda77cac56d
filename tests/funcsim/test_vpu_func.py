"""The functional VPU (VPUFunc): every vector instruction against numerics."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.isa import ComputeOp as C, make
from pymtl_dfx.testing.fp16_ops import random_fp16
from pymtl_dfx.testing.units import run_instructions
from pymtl_dfx.units.regfile.state import VectorRegisterFile
from pymtl_dfx.funcsim.VPUFunc import VPUFunc

# the instruction-level functional units (pymtl_dfx.funcsim): untimed, one level
pytestmark = pytest.mark.no_verilog

F16 = np.float16
UNARY = { C.RECIP: N.recip, C.RSQRT: N.rsqrt, C.EXP: N.exp, C.INVPOW2: N.inv_pow2,
          C.GELU: N.gelu, C.LOAD: lambda a: a, C.STORE: lambda a: a }
BINARY = { C.ADD: N.add, C.SUB: N.sub, C.MUL: N.mul }
REDUCE = { C.ACCUM: None, C.REDMAX: N.reduce_max,
           C.REDMAXABS: lambda a: N.reduce_max( np.abs( a ) ) }


def make_vpu( d, partials=1 ):
  rf = VectorRegisterFile( 64, d )
  return VPUFunc( rf, partials ), rf


# (d, DFXConfig.reduce_partials): the accumulator's interleaved order at P=4
# (lengths of 1 to 5 chunks: fewer partials used than there are, and a wrap)
@pytest.mark.parametrize( "d, partials", [ ( 8, 1 ), ( 64, 1 ), ( 8, 4 ) ] )
@pytest.mark.parametrize( "op", list( UNARY ) + list( BINARY ) + list( REDUCE ) )
def test_vector_op( op, d, partials, cmdline_opts ):
  rng = np.random.default_rng( int( op ) * 7 + d )
  dut, rf = make_vpu( d, partials )
  insts, checks = [], []
  for k, n in enumerate( ( 1, 3, d, 2 * d + 5, 5 * d ) ):
    a, b = random_fp16( rng, n ), random_fp16( rng, n )
    src1, src2, dst = 0, 8, 16 + 8 * ( k % 2 )
    rf.write( src1, a )
    rf.write( src2, b )
    if op in BINARY:
      bcast = k % 2 == 1
      insts = [ make( op, dst=dst, src1=src1, src2=src2, len=n, bcast=int( bcast ) ) ]
      want = BINARY[ op ]( a, b[0] if bcast else b )
    elif op in UNARY:
      insts = [ make( op, dst=dst, src1=src1, len=n ) ]
      want = UNARY[ op ]( a )
    else:
      insts = [ make( op, dst=dst, src1=src1, len=n ) ]
      want = np.atleast_1d( N.reduce_sum( a, d, partials ) if op == C.ACCUM else REDUCE[ op ]( a ) )
    run_instructions( dut, insts, "fl", cmdline_opts )
    got = rf.read( dst, want.size )
    assert np.array_equal( N.bits( got ), N.bits( want ) ), ( op.mnemonic, n )
    # lanes past the result up to the end of its last entry are +0
    n_ent = -( -want.size // d )
    tail = rf.read_entries( dst, n_ent ).reshape( -1 )[ want.size: ]
    assert not N.bits( tail ).any()
    dut, rf2 = make_vpu( d, partials )
    rf2.mem[:] = rf.mem
    rf = rf2


def test_a_chain_of_instructions_is_layernorm( cmdline_opts ):
  """A whole VPU program (the compiler's LayerNorm sequence) on one unit."""
  from pymtl_dfx.compiler.emit import StepEmitter
  d, E = 64, 200
  rng = np.random.default_rng( 0 )
  x = ( rng.standard_normal( E ) * 3 ).astype( F16 )
  x[ 17 ] = F16( 900 )
  g = ( 1 + 0.1 * rng.standard_normal( E ) ).astype( F16 )
  b = ( 0.1 * rng.standard_normal( E ) ).astype( F16 )
  rf = VectorRegisterFile( 64, d )
  regs = dict( inv_n=0, eps=1, s0=2, s1=3, s2=4, s3=5, dev=8, y=12, sq=16, gamma=20,
               beta=24, x=28, h=32 )
  rf.write( regs["inv_n"], [ N.inv_count( E ) ] )
  rf.write( regs["eps"], [ F16( 1e-5 ) ] )
  rf.write( regs["x"], x )
  rf.write( regs["gamma"], g )
  rf.write( regs["beta"], b )
  em = StepEmitter.__new__( StepEmitter )
  em.rf, em.E, em.d = regs, E, d
  insts = em.layernorm_vpu( regs["x"], regs["h"] )
  dut = VPUFunc( rf )
  run_instructions( dut, insts, "fl", cmdline_opts, max_delay=2, seed=4 )
  want = N.layernorm( x, g, b, 1e-5, d )
  assert np.array_equal( N.bits( rf.read( regs["h"], E ) ), N.bits( want ) )
