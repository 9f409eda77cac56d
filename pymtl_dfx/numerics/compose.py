"""LayerNorm and softmax composed from vector-unit operations, in the VPU's order.

These are the instruction sequences the compiler emits; each line below is
one VPU operation on FP16 values (`n` is the vector length, `d` the
reduction-tree width, `partials` the accumulator's interleaved partial sums
(`reduce_sum`'s order; `DFXConfig.reduce_partials`), constants are FP16
immediates from the compiler).

LayerNorm(x, gamma, beta, eps):
    mean  = mul(reduce_sum(x), 1/n)
    dev   = sub(x, mean)
    s     = inv_pow2(reduce_max(|dev|))      # 2^-floor(log2 max|dev|)
    y     = mul(dev, s)                      # |y| < 2: squares cannot overflow
    var_s = mul(reduce_sum(mul(y, y)), 1/n)  # variance of y, in [0, 4)
    eps_s = mul(mul(eps, s), s)              # eps in y's scale
    r     = rsqrt(add(var_s, eps_s))
    out   = add(mul(mul(y, r), gamma), beta)

  The power-of-two pre-scale keeps the squares finite when activations carry
  outlier dimensions of magnitude ~1e3 (real GPT-2 has them: 1e3^2 overflows
  FP16), and keeps small deviations out of the subnormal range.  Scaling by a
  power of two is exact, and y * r = dev / sqrt(var + eps).

softmax(s):
    m = reduce_max(s); e = exp(sub(s, m)); z = reduce_sum(e)
    p = mul(e, recip(z))
"""

import numpy as np

from . import fp16
from .fp16 import F16
from .reduce import reduce_max, reduce_sum
from .tables import exp, inv_pow2, recip, rsqrt


def inv_count(n):
  """The FP16 immediate 1/n that the compiler emits for a mean over n."""
  return F16(1.0 / n)


def _statistics(x, eps, d, partials):
  """LayerNorm's lines up to r: (mean, s, y, r)."""
  x = np.asarray(x, F16)
  inv_n = inv_count(x.shape[-1])
  mean = fp16.mul(reduce_sum(x, d, partials), inv_n)
  dev = fp16.sub(x, mean)
  s = inv_pow2(reduce_max(np.abs(dev)))
  y = fp16.mul(dev, s)
  var_s = fp16.mul(reduce_sum(fp16.mul(y, y), d, partials), inv_n)
  eps_s = fp16.mul(fp16.mul(F16(eps), s), s)
  r = rsqrt(fp16.add(var_s, eps_s))
  return mean, s, y, r


def layernorm_stats(x, eps, d, partials=1):
  """LayerNorm's statistics of x: (mean, s, r), each an FP16 scalar, by
  exactly `layernorm`'s operations (out = (x - mean) * s * r * gamma + beta)."""
  mean, s, _, r = _statistics(x, eps, d, partials)
  return mean, s, r


def layernorm(x, gamma, beta, eps, d, partials=1):
  _, _, y, r = _statistics(x, eps, d, partials)
  return fp16.add(fp16.mul(fp16.mul(y, r), gamma), beta)


def softmax(scores, d, partials=1):
  scores = np.asarray(scores, F16)
  m = reduce_max(scores)
  e = exp(fp16.sub(scores, m))
  z = reduce_sum(e, d, partials)
  return fp16.mul(e, recip(z))
