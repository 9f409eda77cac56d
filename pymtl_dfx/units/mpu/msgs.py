"""Message types of the matrix function unit, sized by d."""

import functools

from pymtl3 import *

from ...config import FP16_BITS

FP16 = mk_bits( FP16_BITS )


@functools.lru_cache( maxsize=None )
def mk_lane_req( d ):
  """One MFU lane's operands: d inputs and d weights (list fields: a d=64
  vector is 1,024 bits, past pymtl3's largest Bits)."""
  return mk_bitstruct( f"MFULaneReq_{d}", { "x": [ FP16 ] * d, "w": [ FP16 ] * d } )
