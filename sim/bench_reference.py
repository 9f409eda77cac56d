#!/usr/bin/env python
"""Seconds per generated token of the DFX-numerics forward and the FP32 reference.

A benchmark, not a test.  Weights are random (seeded) with the preset's
shapes unless --checkpoint names a Hugging Face GPT-2 directory.  The prompt
goes in token by token (DFX's summarization); "per token" figures are
separate for prompt tokens (no LM head) and generated tokens (LM head +
greedy choice), because the LM head is a large share of a generated token.

  python sim/bench_reference.py --model gpt2-medium --prompt-len 8 --new-tokens 4
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from pymtl_dfx.config import GPT2_PRESETS, DFXConfig, gpt2_preset  # noqa: E402
from pymtl_dfx.gpt2 import (DFXForward, ReferenceModel, greedy_token,  # noqa: E402
                            load_checkpoint, random_weights)


def time_generation(model, prompt, n_new):
  """(seconds per prompt token, seconds per generated token, new ids)."""
  model.step(prompt[0])     # warm-up (BLAS threads, numerics' tables), untimed
  model.reset()
  t0 = time.perf_counter()
  for tok in prompt[:-1]:
    model.step(tok, logits=False)
  t1 = time.perf_counter()
  # the last prompt token produces the first new token's logits
  tok, new = prompt[-1], []
  for _ in range(n_new):
    tok = greedy_token(model.step(tok))
    new.append(tok)
  t2 = time.perf_counter()
  per_prompt = (t1 - t0) / max(len(prompt) - 1, 1)
  return per_prompt, (t2 - t1) / n_new, new


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--model", default="gpt2-medium", choices=sorted(GPT2_PRESETS))
  ap.add_argument("--checkpoint", help="Hugging Face GPT-2 directory (overrides --model)")
  ap.add_argument("--seed", type=int, default=0)
  ap.add_argument("--prompt-len", type=int, default=8)
  ap.add_argument("--new-tokens", type=int, default=4)
  ap.add_argument("--d", type=int, default=DFXConfig().d, help="tree width")
  ap.add_argument("--threads", type=int, nargs="+", default=[1],
                  help="thread counts to time the DFX forward with")
  args = ap.parse_args(argv)
  if args.prompt_len < 1 or args.new_tokens < 1:
    ap.error("--prompt-len and --new-tokens must be >= 1")

  t = time.perf_counter()
  if args.checkpoint:
    weights = load_checkpoint(args.checkpoint)
  else:
    weights = random_weights(gpt2_preset(args.model), args.seed)
  cfg = weights.config
  print(f"model {cfg.name}: {cfg.n_layer} layers, n_embd {cfg.n_embd}, "
        f"{cfg.n_params / 1e6:.0f} M parameters (weights ready in "
        f"{time.perf_counter() - t:.1f} s); prompt {args.prompt_len}, "
        f"{args.new_tokens} new tokens; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f}")
  prompt = [int(x) for x in
            np.random.default_rng(args.seed).integers(0, cfg.vocab_size, args.prompt_len)]

  rows = []
  ref = ReferenceModel(weights)
  rows.append(("FP32 reference", None) + time_generation(ref, prompt, args.new_tokens))
  for threads in args.threads:
    t = time.perf_counter()
    dfx = DFXForward(weights, DFXConfig(d=args.d), threads=threads)
    setup = time.perf_counter() - t
    rows.append((f"DFX numerics, d={args.d}, {threads} thread(s)", setup)
                + time_generation(dfx, prompt, args.new_tokens))
    del dfx

  print()
  print("| forward | set-up s | s / prompt token | s / generated token | new ids |")
  print("|---|---|---|---|---|")
  for name, setup, per_prompt, per_new, new in rows:
    setup_s = "-" if setup is None else f"{setup:.1f}"
    print(f"| {name} | {setup_s} | {per_prompt:.4g} | {per_new:.4g} | {new} |")


if __name__ == "__main__":
  main()
