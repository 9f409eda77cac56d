"""What each matrix instruction computes (the MPU's FL behaviour).

y = matvec(x, W) in the MFU's order (`numerics.matvec`), W being the matrix
the weight stream carries in `lib.tiling` order; then the instruction's
bias / scale / mask, then the matrix-side special function (post-op).
"""

import numpy as np

from ... import numerics
from ...lib.tiling import band_width, from_stream, stream_vectors
from ...isa import ComputeOp as C, PostOp, fp16_value

F16 = np.float16


def weights_needed( inst, d, l ):
  return stream_vectors( int( inst.rows ), int( inst.cols ), d, l )


def matrix_op( op, inst, x, weight_vectors, rf, cfg, cache=None, key=None ):
  """Compute the instruction's result and write it to the register file.

  `cache`/`key`: the FL model may keep a reassembled read-only matrix.
  """
  rows, cols = int( inst.rows ), int( inst.cols )
  w = cache.get( key ) if ( cache is not None and key is not None ) else None
  if w is None:
    w = from_stream( weight_vectors, rows, cols, cfg.d, cfg.l,
                     band_width( cols, cfg.l, cfg.psum_entries ), cfg.mpu_raster_walk )
    if cache is not None and key is not None:
      w = numerics.PreparedMatrix( w, cfg.d )
      cache[ key ] = w
  y = numerics.matvec( x, w, cfg.d )
  if op == C.CONV1D:
    y = numerics.add( y, rf.read( int( inst.bias ), cols ) )
  elif op == C.MASKEDMM:
    y = numerics.mul( y, F16( fp16_value( int( inst.scale ) ) ) )
    y[ int( inst.mask ): ] = F16( -np.inf )
  post = PostOp( int( inst.post ) )
  if post == PostOp.GELU:
    y = numerics.gelu( y )
  dst = int( inst.dst )
  if post == PostOp.REDMAX:
    rf.write( dst, np.atleast_1d( numerics.reduce_max( y ) ) )
    dst += 1
  rf.write( dst, y )
