#!/usr/bin/env python
"""How far DFX numerics are from FP32 GPT-2: a markdown table.

For each model (a preset with random seeded weights) and seed, a random
prompt is fed token by token, then the FP32 reference generates N tokens
greedily.  The DFX-numerics forward is fed the same sequence (teacher
forcing) and, at every generation step, we compare its logits and its
greedy choice with FP32's:

  max |diff|      largest |logit_dfx - logit_fp32| over all steps and tokens
  err / (u S)     the same error in units of u * sum_i |hf_i||wte_vi|
                  (u = 2^-11; tests/gpt2 bounds it by 2 (1 + log2 d + chunks - 1))
  teacher-forced  fraction of steps where both pick the same token
  free-running    tokens DFX generates on its own before it first differs
                  from FP32: equal to the first teacher-forced disagreement,
                  since up to there DFX's own inputs are FP32's sequence

  python reports/numerics_vs_fp32.py --models tiny gpt2-medium:8 --seeds 0 1

--set KEY=VALUE (repeatable) runs the numerics of another DFXConfig, e.g.
--set reduce_partials=16 for the VPU's interleaved reduction order.
--cores N (default 1) is the core count the numerics are those of: the
column splits of DFX do not change a bit, the row split of
--set proj_row_split=1 does (its partials are summed over N cores).

"name:N" runs N generated tokens for that model instead of --tokens.
The model "tiny-english" is the shipped checkpoint (its own weights; the
seed then picks only the prompt).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from pymtl_dfx.config import DFXConfig, gpt2_preset  # noqa: E402
from pymtl_dfx.gpt2 import (DFXForward, ReferenceModel, generate,  # noqa: E402
                            greedy_token, load_checkpoint, random_weights)
from pymtl_dfx.models import TINY_ENGLISH  # noqa: E402

U = 2.0 ** -11


def compare(weights, seed, prompt_len, n_new, dfx_config, threads):
  cfg = weights.config
  rng = np.random.default_rng(seed + 1000)
  prompt = [int(t) for t in rng.integers(0, cfg.vocab_size, prompt_len)]
  ref = ReferenceModel(weights)
  new32 = generate(ref, prompt, n_new)
  seq = prompt + new32[:-1]
  first_gen = prompt_len - 1              # step whose logits choose new32[0]
  dfx = DFXForward(weights, dfx_config, threads=threads)
  ref.reset()
  wte_abs = np.abs(weights["wte.weight"])
  max_diff = max_ratio = max_logit = 0.0
  agree = []
  for t, tok in enumerate(seq):
    want = t >= first_gen
    trace = {}
    l16 = dfx.step(tok, logits=want, trace=trace)
    l32 = ref.step(tok, logits=want)
    if not want:
      continue
    err = np.abs(l16.astype(np.float64) - l32)
    scale = U * (np.abs(trace["ln_f"].astype(np.float32)) @ wte_abs.T)
    max_diff = max(max_diff, float(err.max()))
    max_ratio = max(max_ratio, float((err / scale).max()))
    max_logit = max(max_logit, float(np.abs(l32).max()))
    agree.append(greedy_token(l16) == new32[t - first_gen])
  free = agree.index(False) if False in agree else len(agree)
  return dict(max_logit=max_logit, max_diff=max_diff, ratio=max_ratio,
              agree=sum(agree), steps=len(agree), free=free)


def main(argv=None):
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--models", nargs="+", default=["tiny", "gpt2-medium:8"],
                  help="presets, optionally name:N for N generated tokens")
  ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
  ap.add_argument("--tokens", type=int, default=32)
  ap.add_argument("--prompt-len", type=int, default=4)
  ap.add_argument("--d", type=int, default=DFXConfig().d)
  ap.add_argument("--threads", type=int, default=1)
  ap.add_argument("--cores", type=int, default=1,
                  help="the core count whose numerics run (with proj_row_split)")
  ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                  help="a DFXConfig field for the DFX numerics (repeatable)")
  args = ap.parse_args(argv)
  dfx_config = DFXConfig(d=args.d, cores=args.cores).with_overrides(args.set)

  sets = f", {', '.join(args.set)}" if args.set else ""
  cores = f", {args.cores} cores" if args.cores != 1 else ""
  print(f"DFX numerics (d={args.d}{cores}{sets}) vs FP32, random GPT-2 weights "
        "(tiny-english: the shipped checkpoint's), prompt "
        f"{args.prompt_len} random tokens, greedy")
  print()
  print("| model | seed | steps | max abs FP32 logit | max abs diff | err / (u S) "
        "| teacher-forced top-1 | free-running identical prefix | s |")
  print("|---|---|---|---|---|---|---|---|---|")
  for spec in args.models:
    name, _, n = spec.partition(":")
    n_new = int(n) if n else args.tokens
    shipped = load_checkpoint(TINY_ENGLISH) if name == "tiny-english" else None
    for seed in args.seeds:
      t = time.perf_counter()
      weights = shipped or random_weights(gpt2_preset(name), seed)
      r = compare(weights, seed, args.prompt_len, n_new, dfx_config, args.threads)
      print(f"| {name} | {seed} | {r['steps']} | {r['max_logit']:.3f} | "
            f"{r['max_diff']:.2e} | {r['ratio']:.1f} | "
            f"{r['agree']}/{r['steps']} ({r['agree'] / r['steps']:.0%}) | "
            f"{r['free']}/{r['steps']} | {time.perf_counter() - t:.0f} |", flush=True)


if __name__ == "__main__":
  main()
