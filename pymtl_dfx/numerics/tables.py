"""Non-linear functions as a hardware unit computes them: tables + FP16 operations.

Each function is defined here once: the table contents (built in float64 and
rounded to FP16 once), how the input bits index the tables, and which FP16
operations combine the entries.  The RTL special-function units implement
exactly this; `docs/numerics.md` lists each function's measured error.

exp(x)     two tables indexed by sign, exponent and 5+5 mantissa bits:
           exp(x) = mul(EXP_HI[x_hi], EXP_LO[x_lo]), x = x_hi + x_lo exactly.
recip(x)   1024-entry table of 1/m for the normalised mantissa m in [1, 2),
           scaled by 2^-E (exponent arithmetic, one RNE rounding into the
           subnormal range).
rsqrt(x)   2048-entry table of 1/sqrt(m) for m in [1, 4) (exponent parity
           selects the half), scaled by 2^-floor(E/2): exact scaling, so the
           result is the correctly rounded 1/sqrt(x).
gelu(x)    the paper's 2048-entry linear-interpolation table over [-8, 8]
           (step 2^-7) of GPT-2's tanh GELU:
           gelu(x) = add(GELU_Y0[k], mul(GELU_SLOPE[k], sub(x, x_k))),
           identity for x >= 8, +0 for x < -8.
inv_pow2(x) 2^-floor(log2|x|) clamped to [2^-15, 2^14]: an exponent-only
           operation used to pre-scale LayerNorm deviations.
"""

import functools
import math

import numpy as np

from .fp16 import (CANONICAL_NAN, EXP_BIAS, F16, F32, MANT_BITS,
                   fields, from_bits, mul, normalise, add, sub)

# exp: exponent window that needs the tables.  |x| < 2^-12 rounds to exactly
# 1.0; |x| >= 32 is +inf (x > 0) or +0 (x < 0).
EXP_TABLE_EMIN = 3       # biased exponent of 2^-12
EXP_TABLE_EMAX = 19      # biased exponent of 16 (|x| in [16, 32))
EXP_SPLIT_BITS = 5       # mantissa bits in the high part
EXP_LO_BITS = MANT_BITS - EXP_SPLIT_BITS

GELU_ENTRIES = 2048
GELU_LO = -8.0
GELU_HI = 8.0
GELU_STEP_LOG2 = 7       # (GELU_HI - GELU_LO) / GELU_ENTRIES == 2^-7

INV_POW2_EMIN = -14      # smallest normal exponent
INV_POW2_EMAX = 15


def _f16(values64):
  """float64 -> FP16 with one rounding (via binary32, exact for these values)."""
  v = np.asarray(values64, np.float64)
  # every table value is either exactly representable in binary32 or is
  # rounded from float64 by `_round_f64_to_f16`
  return _round_f64_to_f16(v)


def _round_f64_to_f16(v):
  """Correct RNE rounding of float64 to FP16 (no double rounding via binary32)."""
  v = np.asarray(v, np.float64)
  first = v.astype(F32).astype(F16)
  # If the binary32 rounding moved v onto an FP16 tie, fix the direction by
  # comparing with the exact neighbours.
  out = first.copy()
  f64 = first.astype(np.float64)
  finite = np.isfinite(f64) & np.isfinite(v)
  up = np.nextafter(first, F16(np.inf)).astype(np.float64)
  down = np.nextafter(first, F16(-np.inf)).astype(np.float64)
  closer_up = finite & (np.abs(up - v) < np.abs(f64 - v))
  closer_down = finite & (np.abs(down - v) < np.abs(f64 - v))
  out = np.where(closer_up, np.nextafter(first, F16(np.inf)), out)
  out = np.where(closer_down, np.nextafter(first, F16(-np.inf)), out)
  return np.asarray(out, F16)


def gelu_new(x):
  """GPT-2's tanh approximation of GELU, in float64 (the function tabulated)."""
  x = np.asarray(x, np.float64)
  return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


@functools.lru_cache(maxsize=None)
def exp_tables():
  """(EXP_HI, EXP_LO), each [2 signs, exponents EMIN..EMAX, 32 entries]."""
  n_exp = EXP_TABLE_EMAX - EXP_TABLE_EMIN + 1
  e = np.arange(EXP_TABLE_EMIN, EXP_TABLE_EMAX + 1) - EXP_BIAS
  scale = np.exp2(e.astype(np.float64))[:, None]
  k = np.arange(1 << EXP_SPLIT_BITS, dtype=np.float64)[None, :]
  x_hi = scale * (1.0 + k / (1 << EXP_SPLIT_BITS))
  x_lo = scale * k / (1 << MANT_BITS)
  sign = np.array([1.0, -1.0])[:, None, None]
  with np.errstate(over="ignore"):
    hi = _f16(np.exp(sign * x_hi[None]))
    lo = _f16(np.exp(sign * x_lo[None]))
  assert hi.shape == (2, n_exp, 1 << EXP_SPLIT_BITS)
  return hi, lo


@functools.lru_cache(maxsize=None)
def recip_table():
  m = 1.0 + np.arange(1 << MANT_BITS, dtype=np.float64) / (1 << MANT_BITS)
  return _f16(1.0 / m)


@functools.lru_cache(maxsize=None)
def rsqrt_table():
  """[parity, fraction]: 1/sqrt(m) for m in [1, 2) (even E) and [2, 4) (odd E)."""
  m = 1.0 + np.arange(1 << MANT_BITS, dtype=np.float64) / (1 << MANT_BITS)
  return np.stack([_f16(1.0 / np.sqrt(m)), _f16(1.0 / np.sqrt(2.0 * m))])


@functools.lru_cache(maxsize=None)
def gelu_tables():
  """(GELU_X, GELU_Y0, GELU_SLOPE): segment starts, values and slopes."""
  step = 2.0 ** -GELU_STEP_LOG2
  xk = GELU_LO + step * np.arange(GELU_ENTRIES + 1, dtype=np.float64)
  yk = gelu_new(xk)
  slope = (yk[1:] - yk[:-1]) / step
  return _f16(xk[:-1]), _f16(yk[:-1]), _f16(slope)


def _nan():
  return from_bits(CANONICAL_NAN)


def exp(x):
  x = np.asarray(x, F16)
  s, e, m = fields(x)
  hi_t, lo_t = exp_tables()
  in_table = (e >= EXP_TABLE_EMIN) & (e <= EXP_TABLE_EMAX)
  row = np.clip(e - EXP_TABLE_EMIN, 0, EXP_TABLE_EMAX - EXP_TABLE_EMIN)
  hi = hi_t[s, row, m >> EXP_LO_BITS]
  lo = lo_t[s, row, m & ((1 << EXP_LO_BITS) - 1)]
  out = mul(hi, lo)
  big = e > EXP_TABLE_EMAX
  out = np.where(e < EXP_TABLE_EMIN, F16(1.0), out)
  out = np.where(big & (s == 0), F16(np.inf), out)
  out = np.where(big & (s == 1), F16(0.0), out)
  out = np.where(np.isnan(x), _nan(), out)
  return np.asarray(out, F16)


def _scale_pow2(t, k):
  """t * 2^k with one RNE rounding (exponent arithmetic + denormalisation)."""
  v = t.astype(F32) * np.exp2(np.asarray(k, F32))
  with np.errstate(over="ignore"):
    return v.astype(F16)


def recip(x):
  x = np.asarray(x, F16)
  s, e, m = fields(x)
  big_e, frac = normalise(e, m)
  t = recip_table()[frac]
  out = _scale_pow2(t, -big_e)
  out = np.where(s == 1, -out, out)
  zero = (e == 0) & (m == 0)
  inf = (e == 31) & (m == 0)
  out = np.where(zero, np.where(s == 1, F16(-np.inf), F16(np.inf)), out)
  out = np.where(inf, np.where(s == 1, F16(-0.0), F16(0.0)), out)
  out = np.where(np.isnan(x), _nan(), out)
  return np.asarray(out, F16)


def rsqrt(x):
  x = np.asarray(x, F16)
  s, e, m = fields(x)
  big_e, frac = normalise(e, m)
  parity = big_e & 1
  t = rsqrt_table()[parity, frac]
  out = _scale_pow2(t, -((big_e - parity) >> 1))
  zero = (e == 0) & (m == 0)
  inf = (e == 31) & (m == 0)
  out = np.where(zero, np.where(s == 1, F16(-np.inf), F16(np.inf)), out)
  out = np.where(inf & (s == 0), F16(0.0), out)
  out = np.where(np.isnan(x) | ((s == 1) & ~zero), _nan(), out)
  return np.asarray(out, F16)


def gelu(x):
  x = np.asarray(x, F16)
  xs, y0, slope = gelu_tables()
  x64 = x.astype(np.float64)
  inside = (x64 >= GELU_LO) & (x64 < GELU_HI)
  # k = floor((x + 8) * 128) exactly: x + 8 needs up to 28 bits, which float64
  # holds (binary32 would round tiny negative x up into the next segment);
  # the hardware gets k from the FP16 fields with integer logic
  k = np.floor((np.where(inside, x64, 0.0) - GELU_LO) * (1 << GELU_STEP_LOG2))
  k = k.astype(np.int32)
  out = add(y0[k], mul(slope[k], sub(x, xs[k])))
  out = np.where(x64 >= GELU_HI, x, out)
  out = np.where(x64 < GELU_LO, F16(0.0), out)
  out = np.where(np.isnan(x), _nan(), out)
  return np.asarray(out, F16)


def inv_pow2(x):
  x = np.asarray(x, F16)
  s, e, m = fields(x)
  big_e = np.clip(e - EXP_BIAS, INV_POW2_EMIN, INV_POW2_EMAX)
  out = np.exp2(-big_e.astype(F32)).astype(F16)
  out = np.where(np.isnan(x), _nan(), out)
  return np.asarray(out, F16)
