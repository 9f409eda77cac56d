"""Decoding shared by the FP32 reference, the DFX-numerics forward and the
appliance's host.

A "model" here is anything with `config`, `pos`, `reset()` and
`step(token_id, logits=True)` returning the next-token logits (or None when
`logits=False`): `ReferenceModel` and `DFXForward` both are; the host's
`Host.step(token, want_logits)` is driven by the same loop (`decode_loop`).

A token is chosen from the logits by `greedy_token` (the default), or by a
`Sampler` (temperature and top-k, seeded), both callables logits -> id.
"""

import numpy as np

from .. import numerics


class NaNLogitsError(ArithmeticError):
  """The logits hold a NaN, so no token can be chosen."""


def check_step(cfg, token_id, pos):
  """Reject a token id outside the vocabulary or a position past the context."""
  if not 0 <= int(token_id) < cfg.vocab_size:
    raise ValueError(f"token id {token_id} out of range [0, {cfg.vocab_size})")
  if pos >= cfg.n_positions:
    raise ValueError(f"position {pos} is past the context of {cfg.n_positions} "
                     f"tokens (n_positions); call reset()")


def greedy_token(logits) -> int:
  """Index of the largest logit, first index on ties; NaN raises.

  FP16 logits are compared as the hardware comparator does
  (`numerics.order_key`: -0 below +0); float32 logits numerically.
  """
  logits = np.asarray(logits)
  nan = np.flatnonzero(np.isnan(logits))
  if nan.size:
    raise NaNLogitsError(f"cannot choose a token: {nan.size} of {logits.size} "
                         f"logits are NaN (first at indices {nan[:8].tolist()})")
  if logits.dtype == np.float16:
    return int(np.argmax(numerics.order_key(logits)))   # argmax: first of ties
  return int(np.argmax(logits))


class Sampler:
  """Seeded sampling: softmax(logits / temperature) over the top_k largest.

  `temperature` 0 is greedy (`greedy_token`, top_k unused); `top_k` None or
  0 keeps every logit.  The same seed gives the same tokens.  Call it with
  the logits of one step; NaN logits raise `NaNLogitsError`.
  """

  def __init__(self, temperature: float = 0.0, top_k: int = None, seed: int = 0):
    if not np.isfinite(temperature) or temperature < 0:
      raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
    if top_k is not None and top_k < 0:
      raise ValueError(f"top_k must be >= 0, got {top_k!r}")
    self.temperature = float(temperature)
    self.top_k = top_k or None
    self.rng = np.random.default_rng(seed)

  def __call__(self, logits) -> int:
    if self.temperature == 0:
      return greedy_token(logits)
    x = np.asarray(logits, np.float64)
    nan = np.flatnonzero(np.isnan(x))
    if nan.size:
      raise NaNLogitsError(f"cannot choose a token: {nan.size} of {x.size} "
                           f"logits are NaN (first at indices {nan[:8].tolist()})")
    keep = np.argsort(-x, kind="stable")[:self.top_k]   # largest first, first of ties
    z = x[keep] / self.temperature
    finite = np.isfinite(z)
    if not finite.all():          # +inf logits share the mass; -inf get none
      z = np.where(z == np.inf, 0.0, -np.inf) if (z == np.inf).any() else z
    p = np.exp(z - z.max())
    p /= p.sum()
    return int(keep[self.rng.choice(len(keep), p=p)])


def decode_loop(step, prompt_ids, n_new, choose=greedy_token, on_token=None, stop_token=None):
  """The generation loop: the prompt one token at a time (logits only at its
  last token), then up to `n_new` tokens, each `choose(logits)` and fed back
  except the last.  `step(token, want_logits)` runs one position.  Stops
  early after `stop_token` (which is returned).  Returns (tokens, last logits).
  """
  logits = None
  for i, tok in enumerate(prompt_ids):
    logits = step(int(tok), i == len(prompt_ids) - 1)
  out = []
  while len(out) < n_new:
    out.append(int(choose(logits)))
    if on_token:
      on_token(out[-1])
    if out[-1] == stop_token:
      break
    if len(out) < n_new:
      logits = step(out[-1], True)
  return out, logits


def context_problem(n_prompt, n_new, positions, has, new="n_new", prompt=None):
  """The one context-length rule: a generation of n_prompt prompt tokens
  and n_new new ones takes n_prompt + n_new positions (as many as the
  compiler plans for it, `max_tokens`), at most `positions`.  Returns None
  when it fits, else what is wrong and how to fix it: `has` says what holds
  the positions ("model 'tiny' has n_positions=128"); the hint names the
  caller's options: `new` gives n_new, `prompt` gives n_prompt as a count
  (None: a prompt of text or ids, to be shortened)."""
  P = positions
  if n_prompt + n_new <= P:
    return None
  head = (f"{n_prompt} prompt tokens + {n_new} new tokens = {n_prompt + n_new} positions, "
          f"but {has}")
  if n_prompt >= P:     # not even one new token fits: only the prompt can change
    return (f"{head}; the prompt alone fills them: use "
            + (f"{prompt} <= {P - 1}" if prompt else f"a prompt of at most {P - 1} tokens"))
  fixes = [f"{new} <= {P - n_prompt}"]
  if P - n_new >= 1:
    fixes.append(f"{prompt} <= {P - n_new}" if prompt else "a shorter prompt")
  return f"{head}; use {' or '.join(fixes)}"


def check_generation(prompt_ids, n_new, positions, has):
  """ValueError unless a generation of `prompt_ids` and `n_new` new tokens
  can run: at least one prompt token, n_new >= 0, `context_problem`."""
  if len(prompt_ids) == 0:
    raise ValueError("generation needs a prompt of at least one token")
  if n_new < 0:
    raise ValueError(f"n_new must be >= 0, got {n_new}")
  problem = context_problem(len(prompt_ids), n_new, positions, has)
  if problem:
    raise ValueError(problem)


def generate(model, prompt_ids, n_new, choose=greedy_token, stop_token=None) -> list:
  """Generation from position 0 (greedy unless `choose` is, e.g., a
  `Sampler`): returns the `n_new` new token ids (fewer if `stop_token`
  came).  The prompt goes in one token at a time (as DFX does); logits are
  asked for only at the last prompt token and during generation.
  """
  prompt_ids = [int(t) for t in prompt_ids]
  check_generation(prompt_ids, n_new, model.config.n_positions,
                   f"the model has n_positions={model.config.n_positions}")
  model.reset()
  if n_new == 0:
    return []
  return decode_loop(lambda t, want: model.step(t, logits=want), prompt_ids, n_new,
                     choose, stop_token=stop_token)[0]


def teacher_forced_logits(model, ids) -> np.ndarray:
  """Logits after each token of `ids` fed from position 0: [len(ids), vocab]."""
  model.reset()
  return np.stack([model.step(int(t)) for t in ids])
