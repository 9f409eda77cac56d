"""What the manager sends and writes for one instruction, on a
`VectorRegisterFile` (the meaning the FL and CL managers share; the tests
check it against the engines' own contracts in `mpu.streams`,
`vpu.streams` and `router.streams`).

MPU: x is src1's ceil(rows/d) entries as stored, one message per weight
tile (`order_of`); CONV1D's bias is the bias register's elements
[c*l, (c+1)*l) for each column tile c in `finish_order`, lanes at or past
cols +0; the out messages become the instruction's result as in
`semantics.matrix_op` (REDMAX: the maximum at dst, y from dst+1).
"""

import numpy as np

from ...lib.arith import ceil_div
from ...isa import ComputeOp as C, PostOp
from ..mpu.golden import to_fields
from ..mpu.msgs import mk_mpu_types
from ..mpu.streams import finish_order, mpu_cmd, mpu_result, order_of

F16 = np.float16


def entry_values( fields ):
  """A list field of FP16 Bits -> float16 array (no rounding: the bits)."""
  return np.array( [ int( x ) for x in fields ], np.uint16 ).view( F16 )


def mpu_requests( inst, op, rf, cfg ):
  """(cmd, x, bias) message lists for a matrix instruction."""
  T = mk_mpu_types( cfg.d, cfg.l, cfg.psum_entries )
  d, l = cfg.d, cfg.l
  cmd = mpu_cmd( inst, op )
  rows, cols = int( inst.rows ), int( inst.cols )
  x = rf.read_entries( int( inst.src1 ), ceil_div( rows, d ) )
  xs = [ T["X"]( to_fields( x[ r ] ) ) for r, _ in order_of( cmd, cfg ) ]
  bias = []
  if op == C.CONV1D:
    b = np.zeros( ceil_div( cols, l ) * l, F16 )
    b[ :cols ] = rf.read( int( inst.bias ), cols )
    bias = [ T["Bias"]( to_fields( b[ c * l:( c + 1 ) * l ] ) )
             for c in finish_order( cmd, cfg ) ]
  return cmd, xs, bias


def n_mpu_outs( inst, cfg ):
  return ceil_div( int( inst.cols ), cfg.l ) + ( int( inst.post ) == PostOp.REDMAX )


def mpu_write_back( inst, cmd, out_msgs, rf, cfg ):
  """Write a matrix instruction's out messages into `rf`."""
  top, y = mpu_result( cmd, out_msgs, cfg )
  dst = int( inst.dst )
  if int( inst.post ) == PostOp.REDMAX:
    rf.write( dst, np.atleast_1d( F16( top ) ) )
    dst += 1
  rf.write( dst, y )


def mpu_write_out( msg, y_base, last_tile, rf, cfg ):
  """One out message as the CL/RTL manager writes it on arrival: its l
  lanes at element tile*l of y (y_base's entries) or, the maximum, lanes
  0..l-1 of entry y_base - 1; the message of the last column tile (and the
  maximum) also zero the rest of their entry, so the entries end as
  `mpu_write_back` leaves them."""
  d, l = cfg.d, cfg.l
  v = entry_values( msg.v )
  if int( msg.max ):
    entry, lo, last = y_base - 1, 0, True
  else:
    t = int( msg.tile )
    entry, lo, last = y_base + t * l // d, t * l % d, t == last_tile
  rf.write_elements( entry, lo, v )
  if last and lo + l < d:
    rf.write_elements( entry, lo + l, np.zeros( d - lo - l, F16 ) )
