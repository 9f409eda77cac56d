"""Single FP16 operations: the golden every FP16 operator in the hardware matches.

Storage and arithmetic are IEEE binary16 with round-to-nearest-even and
subnormals kept (no flush to zero).  numpy's float16 add, subtract and
multiply are correctly rounded (they compute in binary32, which has at least
2p+2 = 24 bits, so the second rounding is innocuous), so they define the
finite results.

NaN is the one place IEEE leaves a choice: every NaN result, whatever its
operands, is the canonical quiet NaN 0x7E00.  Hardware produces exactly that
pattern, so bit-exact comparisons hold for NaN too.

Every function takes and returns numpy float16 arrays (or scalars); `bits` /
`from_bits` convert to and from the 16-bit patterns that ports carry.
"""

import numpy as np

F16 = np.float16
F32 = np.float32

SIGN_BIT = 1 << 15
EXP_BITS = 5
MANT_BITS = 10
FP_BITS = 1 + EXP_BITS + MANT_BITS
SIGN_POS = FP_BITS - 1          # bit index of the sign
EXP_MASK = (1 << EXP_BITS) - 1
MANT_MASK = (1 << MANT_BITS) - 1
EXP_BIAS = 15

CANONICAL_NAN = 0x7E00
POS_INF = 0x7C00
NEG_INF = 0xFC00
MAX_FINITE = 0x7BFF


def bits(x):
  """FP16 value(s) -> uint16 bit pattern(s)."""
  return np.asarray(x, dtype=F16).view(np.uint16)


def from_bits(b):
  """uint16 bit pattern(s) -> FP16 value(s)."""
  return np.asarray(b, dtype=np.uint16).view(F16)


def canonical(x):
  """Replace every NaN by the canonical NaN; other values unchanged."""
  x = np.asarray(x, dtype=F16)
  nan = np.isnan(x)
  if np.any(nan):
    x = x.copy()
    x[nan] = from_bits(CANONICAL_NAN)
  return x


def round16(x32):
  """Round binary32 value(s) to FP16 (RNE, subnormals kept)."""
  return np.asarray(x32, dtype=F32).astype(F16)


# Overflow to inf and inf - inf = NaN are the specified IEEE results here,
# not conditions to warn about.
_IEEE = dict(over="ignore", invalid="ignore", under="ignore")


def add(a, b):
  with np.errstate(**_IEEE):
    return canonical(np.add(np.asarray(a, F16), np.asarray(b, F16)))


def sub(a, b):
  with np.errstate(**_IEEE):
    return canonical(np.subtract(np.asarray(a, F16), np.asarray(b, F16)))


def mul(a, b):
  with np.errstate(**_IEEE):
    return canonical(np.multiply(np.asarray(a, F16), np.asarray(b, F16)))


def order_key(x):
  """Integer key whose order is the comparator's order of FP16 values.

  -0 sorts below +0 (the comparator looks at sign and magnitude bits, not at
  the numeric value).  NaNs must be handled before comparing.
  """
  b = bits(x).astype(np.int32)
  return np.where(b & SIGN_BIT, -(b & 0x7FFF) - 1, b)


def maximum(a, b):
  """Comparator max: NaN if either is NaN, otherwise the larger by `order_key`."""
  a = np.asarray(a, F16)
  b = np.asarray(b, F16)
  out = np.where(order_key(b) > order_key(a), b, a)
  out = np.where(np.isnan(a) | np.isnan(b), from_bits(CANONICAL_NAN), out)
  return np.asarray(out, F16)


def fields(x):
  """Split FP16 value(s) into (sign, biased exponent, mantissa) integer arrays."""
  b = bits(x).astype(np.int32)
  return (b >> 15) & 1, (b >> MANT_BITS) & EXP_MASK, b & MANT_MASK


def normalise(exp, mant):
  """Unbiased exponent E and 10-bit fraction f with |x| = 2^E (1 + f/1024).

  Subnormals are normalised the way a leading-zero counter would; zero maps to
  E = -25 (below every subnormal) with f = 0 and must be handled by the caller.
  """
  exp = np.asarray(exp, np.int32)
  mant = np.asarray(mant, np.int32)
  sub_ = exp == 0
  # position of the leading one of a subnormal mantissa (0..9)
  lead = np.where(mant > 0, np.floor(np.log2(np.maximum(mant, 1))), -1).astype(np.int32)
  e_sub = lead - 24
  f_sub = np.where(mant > 0, (mant << (MANT_BITS - np.maximum(lead, 0))) & MANT_MASK, 0)
  big_e = np.where(sub_, np.where(mant > 0, e_sub, -25), exp - EXP_BIAS)
  frac = np.where(sub_, f_sub, mant)
  return big_e, frac
