"""Greedy decoding shared by the FP32 reference and the DFX-numerics forward.

A "model" here is anything with `config`, `pos`, `reset()` and
`step(token_id, logits=True)` returning the next-token logits (or None when
`logits=False`): `ReferenceModel` and `DFXForward` both are.
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


def _check_prompt(model, prompt_ids, n_new):
  if len(prompt_ids) == 0:
    raise ValueError("generate needs a prompt of at least one token")
  if n_new < 0:
    raise ValueError(f"n_new must be >= 0, got {n_new}")
  # the last generated token is returned, never fed back
  needed = len(prompt_ids) + max(n_new - 1, 0)
  if needed > model.config.n_positions:
    raise ValueError(f"prompt of {len(prompt_ids)} + {n_new} new tokens needs "
                     f"{needed} positions, the model has {model.config.n_positions}")


def generate(model, prompt_ids, n_new) -> list:
  """Greedy generation from position 0: returns the `n_new` new token ids.

  The prompt goes in one token at a time (as DFX does); logits are asked
  for only at the last prompt token and during generation.
  """
  prompt_ids = [int(t) for t in prompt_ids]
  _check_prompt(model, prompt_ids, n_new)
  model.reset()
  if n_new == 0:
    return []
  for i, tok in enumerate(prompt_ids):
    logits = model.step(tok, logits=(i == len(prompt_ids) - 1))
  out = [greedy_token(logits)]
  while len(out) < n_new:
    out.append(greedy_token(model.step(out[-1])))
  return out


def teacher_forced_logits(model, ids) -> np.ndarray:
  """Logits after each token of `ids` fed from position 0: [len(ids), vocab]."""
  model.reset()
  return np.stack([model.step(int(t)) for t in ids])
