"""The DMA -> MPU weight stream at FL: blocks of d-element vectors in order.

At FL a block is a whole `hbm_read mpu` (numpy view of HBM), so a full-size
matrix moves as one object; CL and RTL carry it as d x l tiles per cycle.
"""

from collections import deque

import numpy as np


class WeightStreamError( RuntimeError ):
  pass


class WeightStreamFunc:

  def __init__( s ):
    s.blocks = deque()
    s.available = 0

  def push( s, block, source ):
    """`source` (e.g. ('hbm', addr, vecs)) identifies read-only weights for caching."""
    s.blocks.append( ( block, source ) )
    s.available += block.shape[0]

  def pop( s, n ):
    """The next n vectors, and the sources they came from."""
    if n > s.available:
      raise WeightStreamError( f"a matrix instruction needs {n} weight vectors but the "
                               f"stream holds {s.available}: a missing hbm_read mpu" )
    parts, sources, need = [], [], n
    while need:
      block, src = s.blocks.popleft()
      if block.shape[0] > need:
        s.blocks.appendleft( ( block[need:], None ) )
        block, src = block[:need], None
      parts.append( block )
      sources.append( src )
      need -= block.shape[0]
    s.available -= n
    out = parts[0] if len( parts ) == 1 else np.concatenate( parts )
    return out, tuple( sources )
