"""Golden functions on MPU messages, from `pymtl_dfx.numerics`.

The FL and CL engines compute every value with these; each is the piece of
`semantics.matrix_op` that one pipeline stage performs, so tile by tile
they give `numerics.matvec` and the post-ops bit for bit.
"""

import numpy as np

from ... import numerics
from ...isa import ComputeOp as C, PostOp
from ...isa.codec import fp16_value
from .msgs import FP16

F16 = np.float16
NEG_INF = F16( -np.inf )


def to_array( vec ):
  """A list field of FP16 Bits -> float16 array."""
  return numerics.from_bits( np.array( [ int( v ) for v in vec ], np.uint16 ) )


def to_fields( values ):
  return [ FP16( int( b ) ) for b in numerics.bits( np.asarray( values, F16 ) ) ]


def lane_msg( req ):
  """One lane's tree of products: a d x 1 `matvec` is exactly one d-chunk."""
  x, w = to_array( req.x ), to_array( req.w )
  return FP16( int( numerics.bits( numerics.matvec( x, w[:, None], len( x ) )[0] ) ) )


def tile_sums( x, w, rows_left ):
  """The l lane sums of one tile: x (d) times the tile (l columns of d).
  Input lanes at or past `rows_left` are outside the matrix: their x and
  their weights enter as +0 (the chunk padding of `numerics.matvec`), so
  whatever the tile's padding rows hold in memory (inf, NaN, a negative
  value whose product with +0 is -0) leaves the sums unchanged."""
  d = x.size
  inside = np.arange( d ) < rows_left
  x = np.where( inside, x, F16( 0 ) ).astype( F16 )
  w = np.where( inside[ None, : ], w.reshape( -1, d ), F16( 0 ) ).astype( F16 )
  return numerics.matvec( x, w.T, d )


def accumulate( psum, sums ):
  """Chunks accumulate in ascending order; the first chunk starts the sum."""
  return sums.copy() if psum is None else numerics.add( psum, sums )


def finish( cmd, tile, acc, bias, l ):
  """Bias / scale / mask, then GELU, of one finished column tile; lanes past
  `cols` become +0 (what the register file holds past a result)."""
  op, post, cols = int( cmd.op ), PostOp( int( cmd.post ) ), int( cmd.cols )
  col = tile * l + np.arange( l )
  y = acc
  if op == C.CONV1D:
    y = numerics.add( y, bias )
  elif op == C.MASKEDMM:
    y = numerics.mul( y, F16( fp16_value( int( cmd.scale ) ) ) )
    y = np.where( col >= int( cmd.mask ), NEG_INF, y ).astype( F16 )
  if post == PostOp.GELU:
    y = numerics.gelu( y )
  return np.where( col < cols, y, F16( 0 ) ).astype( F16 )


def tile_max( running, values, tile, cols ):
  """The REDMAX post-op's running maximum over the columns inside the matrix."""
  l = values.size
  inside = values[ ( tile * l + np.arange( l ) ) < cols ]
  if inside.size == 0:
    return running
  m = numerics.reduce_max( inside )
  return m if running is None else numerics.maximum( running, m )[()]
