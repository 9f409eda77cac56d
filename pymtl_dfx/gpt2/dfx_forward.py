"""GPT-2 in "DFX numerics": exactly the FP16 values the hardware computes.

Every FP16 operation is a `pymtl_dfx.numerics` call; this module only
decides which operations run, on which operands, in which order.  That order
is the contract the compiler and the hardware follow:

Weights are rounded once to FP16 (`GPT2Weights.to_fp16`).  Tokens go in one
at a time, prompt (summarization) included; at position t:

    x = add(wte[tok], wpe[t])
    for each layer (p = that layer's parameters):
      h   = layernorm(x, p.ln_1.weight, p.ln_1.bias, eps, d)
      qkv = conv1d(h, p.attn.c_attn.weight, p.attn.c_attn.bias, d)   # [3A]
      q, k, v = qkv[0:A], qkv[A:2A], qkv[2A:3A]; head i owns columns
                [i*hd, (i+1)*hd) of each (A = attn_dim = n_head * hd;
                hd = E / n_head unless the config gives head_dim)
      for each head i:
        K_i[t] = k_i, V_i[t] = v_i         # FP16 cache rows; T = t + 1 rows
        s_i = mul(matvec(q_i, K_i^T, d), scale)   # K_i^T: [hd, T]
        p_i = softmax(s_i, d)                     # over T
        a_i = matvec(p_i, V_i, d)                 # V_i: [T, hd]
      a = concat(a_0 .. a_{H-1})                  # [A]
      x = add(x, conv1d(a, p.attn.c_proj.weight, p.attn.c_proj.bias, d))
      h = layernorm(x, p.ln_2.weight, p.ln_2.bias, eps, d)
      f = gelu(conv1d(h, p.mlp.c_fc.weight, p.mlp.c_fc.bias, d))      # [4E]
      x = add(x, conv1d(f, p.mlp.c_proj.weight, p.mlp.c_proj.bias, d))
    hf = layernorm(x, ln_f.weight, ln_f.bias, eps, d)
    logits = matvec(hf, wte^T, d)        # LM head tied to wte (or lm_head.weight^T); no bias

scale = FP16(1/sqrt(hd)) is a compiler immediate (0.125 for hd = 64), eps is
`layer_norm_epsilon` as `numerics.layernorm` takes it, d = DFXConfig.d; the
reductions inside layernorm and softmax add chunk sums in the order of
`DFXConfig.reduce_partials` (`numerics.reduce_sum`).  With
`DFXConfig.proj_row_split` on cores > 1 the two c_proj products are
`numerics.row_split_conv1d` over the compiler's row segments (each core's
heads, each core's c_fc columns; padded as the cores hold them) instead of
conv1d: the FP16 sum in core order of each core's matvec, then the bias.  With
`DFXConfig.ln_fold`, ln_1 and c_attn are one folded product instead
(`numerics.fold_layernorm` once, then per token
qkv = fold_correct(matvec(x, W', d), x, c, b', eps, d)); the trace then has
"h{i}.c_attn_z" (the matrix's output on the un-normalised x) where it has
"h{i}.ln_1" otherwise.  With `DFXConfig.ln2_fold`, ln_2 and c_fc are folded
the same way and GELU follows the correction
(f = gelu(fold_correct(matvec(x, W'), x, c, b', eps, d))); the trace has
"h{i}.c_fc_z" where it has "h{i}.ln_2" otherwise.  No
causal mask is needed: the cache holds only positions <= t.  The LM head runs
only when logits are asked for (the hardware skips it for prompt tokens other
than the last).

Speed: the per-head loop is kept (softmax and matvec are 1-D in numerics;
attention is a few percent of a token).  The big matrix products can be cut
into column blocks that run on threads: every output column is computed by
the same numerics call on the same operands, so the bits do not change, and
numpy releases the GIL inside those calls.
"""

import math
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numpy as np

from .. import numerics
from ..config import DFXConfig
from .decoding import check_step

F16 = np.float16

# Below this many weights a matrix product is not worth splitting over threads.
_MIN_SPLIT_ELEMS = 1 << 18


@lru_cache(maxsize=None)
def _pool(threads):
  return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="dfx-matvec")


def _ignore(name, value):
  pass


class _Linear:
  """One FP16 weight matrix [K, N] (+ optional bias), pre-split into column blocks.
  row_cuts: the product is `numerics.row_split_conv1d` over these row
  segments (each column block's columns alike), not `conv1d`."""

  def __init__(self, w, b, d, threads, row_cuts=None):
    self.d = d
    self.row_cuts = row_cuts
    n = w.shape[1]
    parts = threads if threads > 1 and w.size >= _MIN_SPLIT_ELEMS else 1
    cuts = np.linspace(0, n, parts + 1).astype(int)
    # contiguous copies: each thread reads its own block of memory
    self.blocks = [(np.ascontiguousarray(w[:, a:z], F16),
                    None if b is None else np.ascontiguousarray(b[a:z], F16))
                   for a, z in zip(cuts[:-1], cuts[1:])]
    self.pool = _pool(parts) if parts > 1 else None

  def _one(self, block, x):
    w, b = block
    if b is None:
      return numerics.matvec(x, w, self.d)
    if self.row_cuts is not None:
      return numerics.row_split_conv1d(x, w, b, self.row_cuts, self.d)
    return numerics.conv1d(x, w, b, self.d)

  def __call__(self, x):
    if self.pool is None:
      return self._one(self.blocks[0], x)
    return np.concatenate(list(self.pool.map(lambda blk: self._one(blk, x),
                                             self.blocks)))


def _row_split(gpt, dfx):
  """The compiler's `Partition` when proj_row_split splits the c_proj
  matrices by rows (on more than one core), else None."""
  if not dfx.proj_row_split or dfx.cores == 1:
    return None
  from ..compiler.partition import Partition    # pymtl3's units: only when needed
  return Partition(gpt, dfx, dfx.cores)


class DFXForward:
  """GPT-2 in DFX numerics.  `step(token_id)` returns FP16 logits [vocab].

  weights: `GPT2Weights` (float32 are rounded to FP16 here, once).
  dfx:     hardware parameters; `d` (tree width), `reduce_partials` and
           `proj_row_split` with `cores` affect the numbers.
  threads: column blocks of the large products run on this many threads;
           results are identical for any value.
  """

  def __init__(self, weights, dfx: DFXConfig = None, threads: int = 1):
    self.dfx = dfx or DFXConfig()
    self.config = cfg = weights.config
    d = self.dfx.d
    w16 = weights if weights.dtype == F16 else weights.to_fp16()
    self.wte = w16["wte.weight"]
    self.wpe = w16["wpe.weight"]
    self.eps = cfg.layer_norm_epsilon
    self.scale = F16(1.0 / math.sqrt(cfg.head_dim))

    def lin(i, name, rows=None):
      w = w16.layer(i, name + ".weight")
      if rows is None:
        return _Linear(w, w16.layer(i, name + ".bias"), d, threads)
      # proj_row_split: the rows zero-padded to the cores' segments
      pad = np.zeros((rows.padded,) + w.shape[1:], F16)
      pad[:w.shape[0]] = w
      return _Linear(pad, w16.layer(i, name + ".bias"), d, threads,
                     row_cuts=range(0, rows.padded + 1, rows.seg))
    # proj_row_split on more than one core: the compiler's split (its
    # segments of the attention output and of c_fc's columns), else None
    self.row_split = _row_split(cfg, self.dfx)
    o_rows, m_rows = (self.row_split.attn, self.row_split.fc) if self.row_split else (None, None)
    self.layers = []
    def folded(i, ln, name, on):
      """(LayerNorm's parameters, the matrix, its fold's (c, b') or None)."""
      gb = (w16.layer(i, ln + ".weight"), w16.layer(i, ln + ".bias"))
      if not on:
        return gb, lin(i, name), None
      wf, c, bf = numerics.fold_layernorm(*gb, w16.layer(i, name + ".weight"),
                                          w16.layer(i, name + ".bias"))
      return gb, _Linear(wf, None, d, threads), (c, bf)
    for i in range(cfg.n_layer):
      ln_1, c_attn, fold_1 = folded(i, "ln_1", "attn.c_attn", self.dfx.ln_fold)
      ln_2, c_fc, fold_2 = folded(i, "ln_2", "mlp.c_fc", self.dfx.ln2_fold)
      self.layers.append(dict(
        ln_1=ln_1, ln_1_fold=fold_1,
        c_attn=c_attn, attn_proj=lin(i, "attn.c_proj", o_rows),
        ln_2=ln_2, ln_2_fold=fold_2,
        c_fc=c_fc, mlp_proj=lin(i, "mlp.c_proj", m_rows)))
    self.ln_f = (w16["ln_f.weight"], w16["ln_f.bias"])
    # wte^T (or the untied lm_head.weight^T): [E, vocab]
    self.lm_head = _Linear(w16.lm_head.T, None, d, threads)
    self.reset()

  def reset(self):
    """Empty the K/V cache: the next step is position 0."""
    cfg = self.config
    self.pos = 0
    # [layer][head, position, head_dim] in FP16, as DFX keeps them in HBM
    shape = (cfg.n_head, cfg.n_positions, cfg.head_dim)
    self.k_cache = [np.zeros(shape, F16) for _ in range(cfg.n_layer)]
    self.v_cache = [np.zeros(shape, F16) for _ in range(cfg.n_layer)]

  def _attention(self, i, qkv, trace):
    cfg = self.config
    nh, hd, a, t = cfg.n_head, cfg.head_dim, cfg.attn_dim, self.pos
    d = self.dfx.d
    q = qkv[:a].reshape(nh, hd)
    self.k_cache[i][:, t] = qkv[a:2 * a].reshape(nh, hd)
    self.v_cache[i][:, t] = qkv[2 * a:].reshape(nh, hd)
    keys = self.k_cache[i][:, :t + 1]                 # [H, T, hd]
    vals = self.v_cache[i][:, :t + 1]
    raw = np.stack([numerics.matvec(q[h], keys[h].T, d) for h in range(nh)])
    scores = numerics.mul(raw, self.scale)            # elementwise: all heads at once
    probs = np.stack([numerics.softmax(scores[h], d, self.dfx.reduce_partials) for h in range(nh)])
    heads = [numerics.matvec(probs[h], vals[h], d) for h in range(nh)]
    if trace is not None:
      trace[f"h{i}.scores"] = scores
      trace[f"h{i}.probs"] = probs
    return np.concatenate(heads)

  def _padded_attn(self, a):
    """The attention output as the cores hold their segments with
    proj_row_split: padding heads (all-zero weights) at the end, whose
    output is +0 (for a non-finite ln_1 output every real head's is NaN,
    and so is every output of the row-split product: the padding's value
    cannot matter)."""
    out = np.zeros(self.row_split.attn.padded, F16)
    out[:a.size] = a
    return out

  def _padded_fc(self, f, pad):
    """gelu(c_fc) as the cores hold their segments with proj_row_split: the
    padding columns' value `pad` after the real ones."""
    return np.concatenate([f, np.full(self.row_split.fc.pad, pad, F16)])

  def _fc(self, p, x, h, rec, i):
    """gelu(c_fc) of the layer after its residual x (h: ln_2's output when
    ln_2 is not folded), and the value of a padding column (all-zero
    weights, bias and, folded, column sum), computed as the cores do."""
    d, eps, rp = self.dfx.d, self.eps, self.dfx.reduce_partials
    zero_w, zero = np.zeros((x.size, 1), F16), np.zeros(1, F16)
    if p["ln_2_fold"] is None:
      fc = p["c_fc"](h)
      pad = numerics.conv1d(h, zero_w, zero, d)
    else:
      z = p["c_fc"](x)
      fc = numerics.fold_correct(z, x, *p["ln_2_fold"], eps, d, rp)
      pad = numerics.fold_correct(numerics.matvec(x, zero_w, d), x, zero, zero, eps, d, rp)
      rec(f"h{i}.c_fc_z", z)
    return fc, numerics.gelu(fc), numerics.gelu(pad)[0]

  def step(self, token_id, logits=True, trace=None):
    """Process the token at the next position; return logits if asked.

    trace: optional dict that receives every intermediate vector under
    names such as "h0.qkv", "h0.scores" [H, T], "h0.attn", "ln_f", for
    unit tests and for checking other models of the hardware step by step.
    """
    cfg = self.config
    check_step(cfg, token_id, self.pos)
    d, eps, rp = self.dfx.d, self.eps, self.dfx.reduce_partials
    rec = trace.__setitem__ if trace is not None else _ignore
    x = numerics.add(self.wte[token_id], self.wpe[self.pos])
    rec("embed", x)
    for i, p in enumerate(self.layers):
      if p["ln_1_fold"] is None:
        h = numerics.layernorm(x, *p["ln_1"], eps, d, rp)
        qkv = p["c_attn"](h)
        rec(f"h{i}.ln_1", h)
      else:
        z = p["c_attn"](x)
        qkv = numerics.fold_correct(z, x, *p["ln_1_fold"], eps, d, rp)
        rec(f"h{i}.c_attn_z", z)
      a = self._attention(i, qkv, trace)
      o = p["attn_proj"](self._padded_attn(a) if self.row_split else a)
      x = numerics.add(x, o)
      rec(f"h{i}.qkv", qkv); rec(f"h{i}.attn", a)
      rec(f"h{i}.attn_proj", o); rec(f"h{i}.x_attn", x)
      h = None if p["ln_2_fold"] else numerics.layernorm(x, *p["ln_2"], eps, d, rp)
      fc, f, pad = self._fc(p, x, h, rec, i)
      m = p["mlp_proj"](self._padded_fc(f, pad) if self.row_split else f)
      x = numerics.add(x, m)
      if h is not None:
        rec(f"h{i}.ln_2", h)
      rec(f"h{i}.fc", fc); rec(f"h{i}.gelu", f)
      rec(f"h{i}.mlp", m)
      rec(f"h{i}.x_out", x)
    self.pos += 1
    if not logits:
      return None
    hf = numerics.layernorm(x, *self.ln_f, eps, d, rp)
    out = self.lm_head(hf)
    rec("ln_f", hf); rec("logits", out)
    return out
