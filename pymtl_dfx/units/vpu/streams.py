"""The VPU engine's stream contract, as the register-file manager sees it.

For one vector instruction of length n on a register file of d-element
entries (C = ceil(n / d) chunks):

  cmd  one `VPUCmd` (op, len, bcast).
  a    C messages: src1's entries src1 .. src1+C-1 as stored; lanes past n
       hold whatever the register file holds (the engine ignores them).
  b    binary ops only: C messages (src2's entries), or with bcast exactly one
       (src2's first entry; lane 0 is the scalar).  No b for other ops.
  out  element-wise ops (including the LOAD/STORE bypass): C messages, the
       entries to write at dst, lanes past n +0; reductions: one message,
       lane 0 the result, the other lanes +0.

The out messages are exactly the entries the instruction leaves at dst, so
writing them back is a plain entry copy (`write_back`).  `execute` is the
instruction's meaning on messages (the FL semantics of `semantics.py` on a
scratch register file); the FL and CL engines and the tests share it.
"""

from types import SimpleNamespace

import numpy as np

from ... import numerics
from ...isa import ComputeOp
from ...lib.arith import ceil_div
from ..regfile.state import VectorRegisterFile
from .msgs import BINARY, FP16, REDUCTIONS, mk_fp16_vec, vpu_cmd
from .semantics import vector_op


def n_chunks( length, d ):
  return ceil_div( int( length ), d )


def n_b_msgs( op, length, bcast, d ):
  if op not in BINARY:
    return 0
  return 1 if bcast else n_chunks( length, d )


def n_out_msgs( op, length, d ):
  return 1 if op in REDUCTIONS else n_chunks( length, d )


def to_msgs( entries, d ):
  """[k, d] FP16 register-file entries -> k vector messages."""
  Vec = mk_fp16_vec( d )
  return [ Vec( [ FP16( int( x ) ) for x in row ] )
           for row in numerics.bits( np.asarray( entries ) ).reshape( -1, d ) ]


def from_msgs( msgs, d ):
  """Vector messages -> [k, d] FP16 entries."""
  raw = np.array( [ [ int( x ) for x in m.v ] for m in msgs ], np.uint16 ).reshape( -1, d )
  return numerics.from_bits( raw )


def request_streams( inst, rf ):
  """(cmd, a, b) message lists the register-file manager sends for `inst`."""
  op, n, bcast = ComputeOp( int( inst.hdr.op ) ), int( inst.len ), int( inst.bcast )
  a = to_msgs( rf.read_entries( int( inst.src1 ), n_chunks( n, rf.d ) ), rf.d )
  b = []
  if op in BINARY:
    b = to_msgs( rf.read_entries( int( inst.src2 ), n_b_msgs( op, n, bcast, rf.d ) ), rf.d )
  return [ vpu_cmd( inst ) ], a, b


def execute( op, length, bcast, a_msgs, b_msgs, d, partials=1 ):
  """The out messages of one instruction, from its a and b messages
  (`partials`: the accumulator's, `DFXConfig.reduce_partials`)."""
  op = ComputeOp( int( op ) )
  n_a, n_b = len( a_msgs ), len( b_msgs )
  rf = VectorRegisterFile( n_a + n_b + n_a, d )
  rf.mem[ :n_a ] = from_msgs( a_msgs, d )
  if n_b:
    rf.mem[ n_a: n_a + n_b ] = from_msgs( b_msgs, d )
  inst = SimpleNamespace( dst=n_a + n_b, src1=0, src2=n_a, len=int( length ),
                          bcast=int( bcast ) )
  vector_op( op, inst, rf, partials )
  return to_msgs( rf.read_entries( n_a + n_b, n_out_msgs( op, length, d ) ), d )


def out_messages( inst, rf, partials=1 ):
  """The out stream the engine gives for `inst` on `rf` (rf is not changed)."""
  cmd, a, b = request_streams( inst, rf )
  return execute( cmd[0].op, cmd[0].len, cmd[0].bcast, a, b, rf.d, partials )


def write_back( inst, out_msgs, rf ):
  """Write the engine's out messages for `inst` into `rf` at dst."""
  rf.write( int( inst.dst ), from_msgs( out_msgs, rf.d ).reshape( -1 ) )
