"""The VPU opcode groups (ComputeOp properties) against what the FL
semantics do, and the RTL's constant masks against the properties."""

import numpy as np
import pytest

from pymtl_dfx.isa import ComputeOp as C, make
from pymtl_dfx.isa.formats import op_mask
from pymtl_dfx.isa.opcodes import VPU_GROUPS
from pymtl_dfx.units.regfile.state import VectorRegisterFile
from pymtl_dfx.units.vpu.semantics import vector_op

D = 4
N = 3 * D          # three entries: a reduction's one result differs from n


class Recording( VectorRegisterFile ):
  """A register file that counts operand reads and keeps each write's length."""

  def __init__( s, *a ):
    super().__init__( *a )
    s.reads, s.written = 0, []

  def read( s, entry, n_elems ):
    s.reads += 1
    return super().read( entry, n_elems )

  def write( s, entry, v ):
    s.written.append( len( v ) )
    super().write( entry, v )


@pytest.mark.parametrize( "op", C.group( "on_vpu" ), ids=lambda op: op.mnemonic )
def test_groups_are_what_the_semantics_do( op ):
  rf = Recording( 16, D )
  rf.mem[ 0:3 ] = np.arange( N ).reshape( 3, D ) - 7     # negatives: max != max|x|
  rf.mem[ 4:7 ] = 1
  f = dict( dst=8, src1=0, len=N ) | ( dict( src2=4 ) if op.is_binary else {} )
  vector_op( op, make( op, **f ), rf )
  assert op.is_binary == ( rf.reads == 2 )
  assert op.is_reduction == ( rf.written == [ 1 ] )
  assert op.is_elementwise == ( rf.written == [ N ] )
  assert op.is_unary == ( op.is_elementwise and not op.is_binary )
  # the max reductions give a max (4 for redmax, 7 for redmaxabs), accum the sum (-18)
  assert op.is_max_reduction == ( op.is_reduction and float( rf.mem[ 8, 0 ] ) in ( 4, 7 ) )


def test_matrix_ops_are_in_no_vpu_group():
  for op in C.group( "on_vpu" ):
    assert [ op.is_unary, op.is_binary, op.is_reduction ].count( True ) == 1, op
  for op in ( C.CONV1D, C.MASKEDMM, C.MM ):
    assert not any( getattr( op, p ) for p in VPU_GROUPS ), op


@pytest.mark.parametrize( "prop", VPU_GROUPS )
def test_op_mask_has_the_groups_bits( prop ):
  mask = op_mask( prop )
  assert mask.nbits == 32
  assert [ op for op in C if mask[ int( op ) ] ] == list( C.group( prop ) )
  assert int( mask ) >> ( max( C ) + 1 ) == 0          # no bit past the opcodes
