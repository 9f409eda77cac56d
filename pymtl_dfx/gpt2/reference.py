"""FP32 reference forward of GPT-2 (numpy float32, as PyTorch computes it).

This is the yardstick the DFX numerics are measured against (a tolerance,
never bit-exact).  It follows Hugging Face's GPT2LMHeadModel: pre-LayerNorm
blocks, fused QKV Conv1D, scores scaled by 1/sqrt(head_dim), causal softmax,
GELU in its tanh form (`gelu_new`), final LayerNorm, LM head tied to wte (or its own matrix when the config unties it).
The attention is n_head x head_dim = `attn_dim` wide, which a DFX variant's
config may set apart from the residual's n_embd (`GPT2Config.head_dim`).

Two paths that share the block arithmetic but not the attention code:
`step()` decodes one token with a K/V cache (what DFX does); `forward()`
recomputes a whole prefix with a causal mask and no cache, so that each can
check the other.
"""

import math

import numpy as np

from .. import numerics
from .decoding import check_step

F32 = np.float32


def layernorm32(x, gamma, beta, eps):
  """LayerNorm over the last axis: biased variance, eps inside the sqrt."""
  mean = x.mean(axis=-1, keepdims=True, dtype=F32)
  dev = x - mean
  var = (dev * dev).mean(axis=-1, keepdims=True, dtype=F32)
  return (dev / np.sqrt(var + F32(eps)) * gamma + beta).astype(F32)


def gelu32(x):
  # float64 inside, one rounding to float32: more accurate than PyTorch's
  # float32 evaluation, by less than a float32 ulp.
  return numerics.gelu_new(x).astype(F32)


def softmax32(s, axis=-1):
  e = np.exp(s - s.max(axis=axis, keepdims=True))
  return (e / e.sum(axis=axis, keepdims=True)).astype(F32)


class ReferenceModel:
  """GPT-2 in float32.  `step(token_id)` returns the next-token logits [vocab]."""

  def __init__(self, weights):
    self.config = cfg = weights.config
    w = weights if weights.dtype == np.float32 else weights.to_fp32()
    self.wte = w["wte.weight"]
    self.wpe = w["wpe.weight"]
    self.lm_head = w.lm_head          # wte, or its own matrix when untied
    self.layers = [{s: w.layer(i, s) for s in
                    ("ln_1.weight", "ln_1.bias", "attn.c_attn.weight",
                     "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
                     "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                     "mlp.c_proj.weight", "mlp.c_proj.bias")}
                   for i in range(cfg.n_layer)]
    self.ln_f = (w["ln_f.weight"], w["ln_f.bias"])
    self.scale = F32(1.0 / math.sqrt(cfg.head_dim))
    self.reset()

  def reset(self):
    """Forget the context: the next step is position 0."""
    cfg = self.config
    self.pos = 0
    # [layer][head, position, head_dim]; np.empty leaves unused rows unpaged
    shape = (cfg.n_head, cfg.n_positions, cfg.head_dim)
    self.k_cache = [np.empty(shape, F32) for _ in range(cfg.n_layer)]
    self.v_cache = [np.empty(shape, F32) for _ in range(cfg.n_layer)]

  def _ln(self, x, p, which):
    return layernorm32(x, p[which + ".weight"], p[which + ".bias"],
                       self.config.layer_norm_epsilon)

  def _mlp(self, x, p):
    h = self._ln(x, p, "ln_2")
    f = gelu32(h @ p["mlp.c_fc.weight"] + p["mlp.c_fc.bias"])
    return x + (f @ p["mlp.c_proj.weight"] + p["mlp.c_proj.bias"])

  def _logits(self, x):
    return layernorm32(x, *self.ln_f, self.config.layer_norm_epsilon) @ self.lm_head.T

  def step(self, token_id, logits=True):
    cfg = self.config
    check_step(cfg, token_id, self.pos)
    t = self.pos
    nh, hd = cfg.n_head, cfg.head_dim
    x = self.wte[token_id] + self.wpe[t]
    for i, p in enumerate(self.layers):
      h = self._ln(x, p, "ln_1")
      q, k, v = np.split(h @ p["attn.c_attn.weight"] + p["attn.c_attn.bias"], 3)
      self.k_cache[i][:, t] = k.reshape(nh, hd)
      self.v_cache[i][:, t] = v.reshape(nh, hd)
      keys = self.k_cache[i][:, :t + 1]                            # [H, T, hd]
      vals = self.v_cache[i][:, :t + 1]
      scores = np.einsum("hd,htd->ht", q.reshape(nh, hd), keys) * self.scale
      a = np.einsum("ht,htd->hd", softmax32(scores), vals).reshape(-1)
      x = x + (a @ p["attn.c_proj.weight"] + p["attn.c_proj.bias"])
      x = self._mlp(x, p)
    self.pos += 1
    return self._logits(x) if logits else None

  def forward(self, ids):
    """Logits [len(ids), vocab] for the prefix `ids` from position 0, no cache."""
    cfg = self.config
    ids = np.asarray(ids, np.int64)
    n = len(ids)
    for t, tok in enumerate(ids):
      check_step(cfg, tok, t)
    nh, hd = cfg.n_head, cfg.head_dim
    x = self.wte[ids] + self.wpe[:n]                               # [T, E]
    causal = np.tril(np.ones((n, n), bool))
    for p in self.layers:
      h = self._ln(x, p, "ln_1")
      qkv = h @ p["attn.c_attn.weight"] + p["attn.c_attn.bias"]
      q, k, v = (m.reshape(n, nh, hd).transpose(1, 0, 2) for m in np.split(qkv, 3, axis=1))
      scores = np.where(causal, q @ k.transpose(0, 2, 1) * self.scale, -np.inf)
      a = (softmax32(scores) @ v).transpose(1, 0, 2).reshape(n, -1)  # [T, attn_dim]
      x = x + (a @ p["attn.c_proj.weight"] + p["attn.c_proj.bias"])
      x = self._mlp(x, p)
    return self._logits(x)
