"""LayerNorm folded into the matrix that follows it (`DFXConfig.ln_fold`).

LayerNorm then Conv1D, in `compose.layernorm`'s terms (y = dev * s,
r = rsqrt(var_s + eps_s)):

    qkv_j = sum_i (y_i r gamma_i + beta_i) W_ij + b_j
          = s r (sum_i x_i gamma_i W_ij - mean sum_i gamma_i W_ij)
            + (sum_i beta_i W_ij + b_j)

so the matrix can run on the un-normalised x while the statistics are
computed beside it.  At compile time, from the FP16 weights (`fold_layernorm`):

    W'_ij = mul(gamma_i, W_ij)                 one FP16 rounding, as the VPU's mul
    c_j   = FP16(sum_i W'_ij)                  the sum is exact in binary64 (FP16
                                               values are multiples of 2^-24 below
                                               2^16, so up to 2^13 rows carry
                                               exactly), rounded once (RNE)
    b'_j  = FP16(((0 + beta_0 W_0j) + beta_1 W_1j) + ... + b_j)
                                               binary64, ascending i (each product
                                               of two FP16 values is exact), then
                                               + b_j, rounded once (RNE)

and per token, as VPU/MPU operations on FP16 values (`fold_correct`):

    z          = matvec(x, W')                  the MPU, no bias (`reduce.matvec`)
    mean, s, r = layernorm_stats(x)             `compose.layernorm`'s own lines
    t          = mul(s, r)
    out        = add(mul(sub(z, mul(c, mean)), t), b')

The numerics differ from LayerNorm then Conv1D: z and mean * c are
computed apart and subtracted, so when |mean| is large against the
deviations their rounding errors (u |z|, u |mean c|) do not cancel
(docs/perf.md, "LayerNorm folded into c_attn").  t = s * r is exact
while it stays a normal FP16 number (max|x - mean| < 2^14).
"""

import numpy as np

from . import fp16
from .compose import layernorm_stats
from .fp16 import F16
from .reduce import matvec

F64 = np.float64


def _rows_sum64(rows64, start64):
  """start + rows[0] + rows[1] + ... in binary64, ascending (elementwise)."""
  acc = np.array(start64, F64)
  for row in rows64:
    acc = acc + row
  return acc


def fold_layernorm(gamma, beta, w, b):
  """(W', c, b') of a LayerNorm (gamma, beta [K]) followed by a Conv1D
  (w [K, N], b [N]), all FP16: the module docstring's definitions."""
  gamma, beta = np.asarray(gamma, F16), np.asarray(beta, F16)
  w, b = np.asarray(w, F16), np.asarray(b, F16)
  if gamma.shape != beta.shape or w.ndim != 2 or gamma.shape != w.shape[:1] \
     or b.shape != w.shape[1:]:
    raise ValueError(f"fold_layernorm: shapes gamma{gamma.shape}, beta{beta.shape}, "
                     f"w{w.shape}, b{b.shape} do not match (need [K], [K], [K, N], [N])")
  wf = fp16.mul(gamma[:, None], w)
  c = wf.astype(F64).sum(axis=0).astype(F16)        # exact in binary64: any order
  prods = beta.astype(F64)[:, None] * w.astype(F64)   # exact
  bf = (_rows_sum64(prods, np.zeros(w.shape[1], F64)) + b.astype(F64)).astype(F16)
  return wf, fp16.canonical(c), fp16.canonical(bf)


def fold_correct(z, x, c, bf, eps, d, partials=1):
  """The folded Conv1D's output from z = matvec(x, W'): LayerNorm's
  statistics of x and the per-column correction (module docstring)."""
  mean, s, r = layernorm_stats(x, eps, d, partials)
  t = fp16.mul(s, r)
  return fp16.add(fp16.mul(fp16.sub(z, fp16.mul(c, mean)), t), bf)


def folded_conv1d(x, wf, c, bf, eps, d, partials=1):
  """conv1d(layernorm(x, gamma, beta), W, b) the folded way, from
  `fold_layernorm`'s (W', c, b')."""
  return fold_correct(matvec(x, wf, d), x, c, bf, eps, d, partials)
