"""The golden FP16 arithmetic of DFX: every operation and its exact order.

FL models call these functions; CL and RTL models must produce the same bit
patterns.  See the submodules' docstrings for the order of operations:
`fp16` (single operations, NaN rule), `reduce` (trees, matrix-vector product),
`tables` (exp, recip, rsqrt, GELU, inv_pow2), `compose` (LayerNorm, softmax),
`fold` (LayerNorm folded into the next matrix, `DFXConfig.ln_fold`).
"""

from .fp16 import (CANONICAL_NAN, F16, add, bits, canonical, from_bits,
                   maximum, mul, order_key, sub)
from .reduce import (PreparedMatrix, conv1d, matvec, reduce_max, reduce_sum,
                     row_split_conv1d)
from .tables import exp, gelu, gelu_new, inv_pow2, recip, rsqrt
from .compose import inv_count, layernorm, layernorm_stats, softmax
from .fold import fold_correct, fold_layernorm, folded_conv1d

__all__ = [
  "CANONICAL_NAN", "F16", "add", "bits", "canonical", "from_bits", "maximum",
  "mul", "order_key", "sub", "PreparedMatrix", "conv1d", "matvec", "reduce_max", "reduce_sum",
  "row_split_conv1d",
  "exp", "gelu", "gelu_new", "inv_pow2", "recip", "rsqrt", "inv_count",
  "layernorm", "softmax", "layernorm_stats", "fold_layernorm", "fold_correct",
  "folded_conv1d",
]
