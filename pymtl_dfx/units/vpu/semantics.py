"""What each vector instruction computes (the VPU's FL behaviour).

Every operation is a `pymtl_dfx.numerics` call; reductions use the VPU's
chunked tree of width d and its accumulator's `partials` interleaved partial
sums (`DFXConfig.reduce_partials`).
"""

import numpy as np

from ... import numerics
from ...isa import ComputeOp as C

_ELEMENTWISE = {
  C.RECIP: numerics.recip, C.RSQRT: numerics.rsqrt, C.EXP: numerics.exp,
  C.INVPOW2: numerics.inv_pow2, C.GELU: numerics.gelu,
}
_BINARY = { C.ADD: numerics.add, C.SUB: numerics.sub, C.MUL: numerics.mul }


def vector_op( op, inst, rf, partials=1 ):
  n = int( inst.len )
  a = rf.read( int( inst.src1 ), n )
  if op in _BINARY:
    b = rf.read( int( inst.src2 ), 1 if inst.bcast else n )
    out = _BINARY[ op ]( a, b[0] if inst.bcast else b )
  elif op in _ELEMENTWISE:
    out = _ELEMENTWISE[ op ]( a )
  elif op == C.ACCUM:
    out = np.atleast_1d( numerics.reduce_sum( a, rf.d, partials ) )
  elif op == C.REDMAX:
    out = np.atleast_1d( numerics.reduce_max( a ) )
  elif op == C.REDMAXABS:
    out = np.atleast_1d( numerics.reduce_max( np.abs( a ) ) )
  elif op in ( C.LOAD, C.STORE ):
    out = a
  else:
    raise ValueError( f"{op.mnemonic} is not a vector instruction" )
  rf.write( int( inst.dst ), out )
