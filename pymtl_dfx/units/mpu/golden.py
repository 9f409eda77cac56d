"""Golden functions on MPU messages, from `pymtl_dfx.numerics`."""

import numpy as np

from ... import numerics
from .msgs import FP16


def lane_msg( req ):
  """One lane's tree of products: a d x 1 `matvec` is exactly one d-chunk."""
  x = numerics.from_bits( np.array( [ int( v ) for v in req.x ], np.uint16 ) )
  w = numerics.from_bits( np.array( [ int( v ) for v in req.w ], np.uint16 ) )
  return FP16( int( numerics.bits( numerics.matvec( x, w[:, None], len( x ) )[0] ) ) )
