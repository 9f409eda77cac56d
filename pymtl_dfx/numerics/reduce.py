"""Reductions and matrix-vector products in the order the hardware does them.

The order of FP16 additions is part of the specification:

1. The input dimension is cut into chunks of `d` elements (the MFU's tree-MAC
   width), the last chunk padded with +0.
2. Within a chunk, the d products (each rounded to FP16) are summed by a
   balanced binary tree: level by level, element 2i is added to element 2i+1
   (each addition rounded to FP16).  This is the MFU lane's adder tree.
3. Chunk sums are accumulated in ascending chunk order, starting from chunk 0:
   acc = c0; acc = acc + c1; ... (the partial-sum buffer).  The DMA's tile
   traversal (zigzag or raster) changes which column tile is visited next,
   never this order.
4. Conv1D adds the bias to the finished accumulation: y = acc + b.

Vector reductions (VPU reduce-sum) use the same chunked-tree order with the
same width.  Reduce-max is exact, so its order only matters for NaN (any NaN
gives the canonical NaN).

The interleaved variant of reduce-sum (`reduce_sum(x, d, partials=P)`, P > 1
a power of two; `DFXConfig.reduce_partials`) replaces step 3 for the VPU's
accumulator with P partial sums, so a chunk need not wait for the previous
chunk's addition:

3'. Partial j starts as the identity -0 (exact: -0 + x == x for every FP16
    x).  Chunk i, in ascending order, is added into partial i mod P:
    p[i mod P] = p[i mod P] + c_i.  A partial that receives no chunk (fewer
    than P chunks) stays -0.
3''. The P partials are combined by a balanced pairwise tree, level by
    level: p[2j] + p[2j+1] (P/2 sums), then those pairwise, ..., to one
    value.  The hardware skips the additions of a -0 partial (exact), which
    changes no bit.

With partials=1 this is step 3 exactly (the same bits as before the variant
existed).  Reduce-max keeps its meaning under the variant (max is exact);
only its timing changes.

The row-split variant of Conv1D (`row_split_conv1d(x, w, b, row_cuts, d)`;
`DFXConfig.proj_row_split` on more than one core) replaces steps 1-4's one
accumulation over all K rows: the rows are cut into consecutive segments
[r_k, r_k+1) (one per core, in core order), and

4a. each segment's partial is a whole `matvec` of its own rows (steps 1-3,
    its chunks counted from the segment's first row): p_k =
    matvec(x[r_k:r_k+1], w[r_k:r_k+1], d), a full-width [N] vector;
4b. the partials are added in core order, left to right (a fixed
    association, the same on every core): acc = p_0; acc = acc + p_1; ...;
    acc = acc + p_(c-1);
4c. the bias is added once, last: y = acc + b.

Padding rows (an uneven split pads every segment to one length) are
ordinary rows here: the caller passes x with the values the core holds
there and w with +0 rows, and they enter that core's matvec like any row
(where a whole chunk of them follows the real rows it adds +0 to the
accumulation, which turns a -0 into +0, as the matrix unit does).  With one
segment this is `conv1d` exactly.

Internally values are carried in binary32 arrays that always hold FP16
values (every operation rounds back to FP16), which is bit-identical to
numpy float16 arithmetic and much faster.
"""

import numpy as np

from ..lib.arith import ceil_div
from . import fp16
from .fp16 import CANONICAL_NAN, F16, F32, canonical, from_bits, order_key


_F16_MIN_NORMAL = 0x38800000     # binary32 bits of 2^-14
_F16_OVERFLOW = 0x477FF000       # 65520: from here RNE gives inf
_F32_INF = 0x7F800000


def _r(a32):
  """Round a binary32 array to FP16 precision (RNE), staying in binary32.

  Bit-identical to `a32.astype(float16).astype(float32)` (tested on every
  range), about twice as fast: normal results round the 13 dropped mantissa
  bits to nearest even in the integer domain; the rare subnormal results use
  the 0.75 trick (binary32 spacing of [0.5, 1) is 2^-24, FP16's subnormal
  step); overflow, inf and NaN are patched afterwards.
  """
  b = a32.view(np.uint32)
  out = ((b + (0xFFF + ((b >> 13) & 1))) & 0xFFFFE000).view(F32)
  mag = b & 0x7FFFFFFF
  small = mag < _F16_MIN_NORMAL
  if small.any():
    with np.errstate(invalid="ignore"):
      out = np.where(small, np.copysign((a32 + F32(0.75)) - F32(0.75), a32), out)
  big = mag >= _F16_OVERFLOW
  if big.any():
    out = np.where(big, np.where(mag > _F32_INF, a32, np.copysign(F32(np.inf), a32)), out)
  return out


def _tree_sum32(chunks32, axis):
  """Balanced adder tree over `axis` (a power-of-two length) of binary32 FP16 values."""
  a = np.moveaxis(chunks32, axis, 0)
  while a.shape[0] > 1:
    a = _r(a[0::2] + a[1::2])
  return a[0]


def _chunked(x32, d, axis=0, pad_value=0.0):
  """Pad `axis` to a multiple of d and split it into [chunks, d, ...]."""
  x32 = np.moveaxis(x32, axis, 0)
  n = x32.shape[0]
  n_chunks = max(1, ceil_div(n, d))
  pad = n_chunks * d - n
  if pad:
    x32 = np.concatenate(
      [x32, np.full((pad,) + x32.shape[1:], pad_value, F32)], axis=0)
  return x32.reshape((n_chunks, d) + x32.shape[1:])


def _accumulate32(chunk_sums32):
  """Ascending sequential accumulation over axis 0."""
  acc = chunk_sums32[0]
  for c in chunk_sums32[1:]:
    acc = _r(acc + c)
  return acc


def _interleave32(chunk_sums32, partials):
  """Steps 3' and 3'': P interleaved partials (-0 where unused), then their
  pairwise tree."""
  n = chunk_sums32.shape[0]
  rounds = ceil_div(n, partials)
  pad = np.full((rounds * partials - n,) + chunk_sums32.shape[1:], -0.0, F32)
  grid = np.concatenate([chunk_sums32, pad]).reshape((rounds, partials) + chunk_sums32.shape[1:])
  acc = _r(F32(-0.0) + grid[0])            # each partial starts from -0
  for row in grid[1:]:
    acc = _r(acc + row)
  return _tree_sum32(acc, axis=0)


def check_partials(partials):
  """`partials` must be a power of two (1: one running value)."""
  if not (isinstance(partials, int) and not isinstance(partials, bool) and partials > 0
          and partials & (partials - 1) == 0):
    raise ValueError(f"reduce_sum: partials={partials!r} must be a power of two")


def reduce_sum(x, d, partials=1):
  """Sum of a vector in the VPU's order: chunked tree, then ascending chunks
  (partials=1) or P interleaved partials and their pairwise tree (module
  docstring, steps 3' and 3'')."""
  check_partials(partials)
  x32 = np.asarray(x, F16).astype(F32)
  with np.errstate(over="ignore", invalid="ignore"):     # inf/NaN are IEEE results
    sums = _tree_sum32(_chunked(x32, d), axis=1)
    acc = _accumulate32(sums) if partials == 1 else _interleave32(sums, partials)
  return canonical(acc.astype(F16))


def reduce_max(x):
  """Maximum of a vector by the comparator's order; any NaN gives NaN."""
  x = np.asarray(x, F16)
  if np.isnan(x).any():
    return from_bits(CANONICAL_NAN)
  return x[np.argmax(order_key(x))]


class PreparedMatrix:
  """A weight matrix widened and chunked once for repeated `matvec` calls.

  Simulators multiply the same weights every token; widening them to the
  binary32 carrier and padding them into d-chunks is then done once.  The
  arithmetic is `matvec`'s, unchanged.
  """

  def __init__(self, w, d, col_block=4096):
    w = np.asarray(w, F16)
    if w.ndim != 2:
      raise ValueError(f"matvec: w{w.shape} must be a [K, N] matrix")
    self.shape, self.d = w.shape, d
    self.blocks = [(j0, _chunked(w[:, j0:j0 + col_block].astype(F32), d))
                   for j0 in range(0, w.shape[1], col_block)]


def matvec(x, w, d, col_block=4096):
  """y[j] = sum_i x[i] * w[i, j] in the MFU's order (module docstring).

  x: [K] FP16, w: [K, N] FP16 (Hugging Face Conv1D orientation) or a
  `PreparedMatrix` of it. Returns [N].
  """
  x = np.asarray(x, F16)
  if not isinstance(w, PreparedMatrix):
    w = np.asarray(w, F16)
    if x.ndim != 1 or w.ndim != 2 or w.shape[0] != x.shape[0]:
      raise ValueError(f"matvec: shapes x{x.shape} and w{w.shape} do not match "
                       f"(need x[K] and w[K, N])")
    w = PreparedMatrix(w, d, col_block)
  if x.ndim != 1 or w.shape[0] != x.shape[0] or w.d != d:
    raise ValueError(f"matvec: x{x.shape} does not match the prepared w{w.shape} "
                     f"(d={w.d}, asked d={d})")
  x32 = _chunked(x.astype(F32), d)                       # [C, d]
  out = np.empty(w.shape[1], F16)
  with np.errstate(over="ignore", invalid="ignore"):     # inf/NaN are IEEE results
    for j0, w32 in w.blocks:                             # w32: [C, d, n]
      prod = _r(x32[:, :, None] * w32)
      out[j0:j0 + w32.shape[2]] = _accumulate32(_tree_sum32(prod, axis=1)).astype(F16)
  return canonical(out)


def conv1d(x, w, b, d):
  """Hugging Face Conv1D on one token: matvec, then the bias added once."""
  y = matvec(x, w, d)
  return canonical(np.add(y, np.asarray(b, F16)))


def row_split_conv1d(x, w, b, row_cuts, d):
  """Conv1D with its rows split into segments [row_cuts[k], row_cuts[k+1]):
  each segment's matvec, the partials added in segment order, then the bias
  (module docstring, steps 4a-4c).  row_cuts: 0 = r_0 < r_1 < ... = K."""
  x, w = np.asarray(x, F16), np.asarray(w, F16)
  cuts = [int(r) for r in row_cuts]
  if (x.ndim != 1 or len(cuts) < 2 or cuts[0] != 0 or cuts[-1] != x.shape[0]
      or any(lo >= hi for lo, hi in zip(cuts[:-1], cuts[1:]))):
    raise ValueError(f"row_split_conv1d: row_cuts={cuts} must rise from 0 to the "
                     f"{x.shape[0] if x.ndim == 1 else x.shape} rows of x")
  acc = None
  for lo, hi in zip(cuts[:-1], cuts[1:]):
    p = matvec(x[lo:hi], w[lo:hi], d)
    acc = p if acc is None else fp16.add(acc, p)
  return fp16.add(acc, b)
