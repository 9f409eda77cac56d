"""A slow, independent implementation of DFXForward's documented order.

Written from the numerics docstrings with only numerics' single operations
(add, sub, mul, and the table functions exp, recip, rsqrt, inv_pow2, gelu):
the chunking, the adder trees, LayerNorm, softmax and the attention are
re-derived here, not called, so agreement with DFXForward checks both the
forward's order and numerics' vectorised reductions.

Attention, LayerNorm and softmax are plain per-element loops over FP16
scalars.  The weight products (Conv1D, LM head) loop over the reduction
index and the tree nodes too, but each single operation is applied to all
output columns at once (columns are independent, so this is the same
per-element computation); per-scalar calls there would make one token of
the tiny preset take seconds.
"""

import math

import numpy as np

from pymtl_dfx import numerics as nm

F16 = np.float16


def tree_sum(values, d):
  """Chunks of d (last padded with +0), balanced tree per chunk, ascending chunks.

  `values` are FP16 scalars, or equal-length FP16 vectors summed elementwise.
  """
  values = list(values)
  zero = np.zeros_like(values[0])
  n_chunks = max(1, -(-len(values) // d))
  values += [zero] * (n_chunks * d - len(values))
  acc = None
  for c in range(n_chunks):
    level = values[c * d:(c + 1) * d]
    while len(level) > 1:
      level = [nm.add(level[2 * i], level[2 * i + 1]) for i in range(len(level) // 2)]
    acc = level[0] if acc is None else nm.add(acc, level[0])
  return acc


def matvec(x, w, d):
  """x [K], w [K, N] -> [N]: product i of every column rounded, then tree_sum."""
  return np.asarray(tree_sum([nm.mul(x[i], w[i]) for i in range(len(x))], d), F16)


def conv1d(x, w, b, d):
  y = matvec(x, w, d)
  return np.array([nm.add(y[j], b[j]) for j in range(len(y))], F16)


def vmax(x):
  best = x[0]
  for v in x[1:]:
    if nm.order_key(v) > nm.order_key(best):
      best = v
  return best


def layernorm(x, gamma, beta, eps, d):
  n = len(x)
  inv_n = F16(1.0 / n)
  mean = nm.mul(tree_sum(x, d), inv_n)
  dev = [nm.sub(v, mean) for v in x]
  s = nm.inv_pow2(vmax([abs(v) for v in dev]))
  y = [nm.mul(v, s) for v in dev]
  var_s = nm.mul(tree_sum([nm.mul(v, v) for v in y], d), inv_n)
  eps_s = nm.mul(nm.mul(F16(eps), s), s)
  r = nm.rsqrt(nm.add(var_s, eps_s))
  return np.array([nm.add(nm.mul(nm.mul(y[i], r), gamma[i]), beta[i])
                   for i in range(n)], F16)


def softmax(s, d):
  m = vmax(list(s))
  e = [nm.exp(nm.sub(v, m)) for v in s]
  r = nm.recip(tree_sum(e, d))
  return np.array([nm.mul(v, r) for v in e], F16)


class SlowDFX:
  """Token-by-token GPT-2 in FP16 with Python-list K/V caches."""

  def __init__(self, weights, d):
    self.w = weights.to_fp16()
    self.cfg = weights.config
    self.d = d
    self.keys = [[] for _ in range(self.cfg.n_layer)]   # [layer][t] -> [E]
    self.vals = [[] for _ in range(self.cfg.n_layer)]

  def step(self, tok, trace):
    cfg, w, d = self.cfg, self.w, self.d
    e, nh, hd = cfg.n_embd, cfg.n_head, cfg.head_dim
    eps = cfg.layer_norm_epsilon
    scale = F16(1.0 / math.sqrt(hd))
    t = len(self.keys[0])
    x = np.array([nm.add(a, b) for a, b in zip(w["wte.weight"][tok], w["wpe.weight"][t])], F16)
    trace["embed"] = x
    for i in range(cfg.n_layer):
      p = lambda s: w.layer(i, s)
      h = layernorm(x, p("ln_1.weight"), p("ln_1.bias"), eps, d)
      qkv = conv1d(h, p("attn.c_attn.weight"), p("attn.c_attn.bias"), d)
      trace[f"h{i}.ln_1"], trace[f"h{i}.qkv"] = h, qkv
      self.keys[i].append(qkv[e:2 * e])
      self.vals[i].append(qkv[2 * e:])
      scores, probs, heads = [], [], []
      for hh in range(nh):
        cols = slice(hh * hd, (hh + 1) * hd)
        q = qkv[cols]
        s = [nm.mul(tree_sum([nm.mul(q[c], k[cols][c]) for c in range(hd)], d), scale)
             for k in self.keys[i]]
        pr = softmax(s, d)
        a = [tree_sum([nm.mul(pr[j], self.vals[i][j][cols][c]) for j in range(t + 1)], d)
             for c in range(hd)]
        scores.append(s); probs.append(pr); heads += a
      a = np.array(heads, F16)
      x = np.array([nm.add(u, v) for u, v in zip(
        x, conv1d(a, p("attn.c_proj.weight"), p("attn.c_proj.bias"), d))], F16)
      trace[f"h{i}.scores"] = np.array(scores, F16)
      trace[f"h{i}.probs"] = np.array(probs, F16)
      trace[f"h{i}.attn"] = a
      trace[f"h{i}.x_attn"] = x
      h = layernorm(x, p("ln_2.weight"), p("ln_2.bias"), eps, d)
      fc = conv1d(h, p("mlp.c_fc.weight"), p("mlp.c_fc.bias"), d)
      f = np.array([nm.gelu(v) for v in fc], F16)
      trace[f"h{i}.ln_2"], trace[f"h{i}.fc"], trace[f"h{i}.gelu"] = h, fc, f
      x = np.array([nm.add(u, v) for u, v in zip(
        x, conv1d(f, p("mlp.c_proj.weight"), p("mlp.c_proj.bias"), d))], F16)
      trace[f"h{i}.x_out"] = x
    hf = layernorm(x, w["ln_f.weight"], w["ln_f.bias"], eps, d)
    trace["ln_f"] = hf
    trace["logits"] = matvec(hf, w["wte.weight"].T, d)
    return trace["logits"]
