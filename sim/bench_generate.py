"""Seconds per generated token: the FL appliance vs the DFX-numerics reference.

  python sim/bench_generate.py --model gpt2-medium --cores 4 --prompt-len 8 --new-tokens 8

Random weights (seeded); both must produce the same tokens, and the script
says so.  Compile time is reported separately.
"""

import argparse
import time

import numpy as np

from pymtl_dfx.appliance.host import Host
from pymtl_dfx.compiler.build import compile_model
from pymtl_dfx.config import DFXConfig, gpt2_preset
from pymtl_dfx.gpt2 import DFXForward, generate, random_weights


def main():
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--model", default="gpt2-medium" )
  ap.add_argument( "--cores", type=int, default=4 )
  ap.add_argument( "--prompt-len", type=int, default=8 )
  ap.add_argument( "--new-tokens", type=int, default=8 )
  ap.add_argument( "--seed", type=int, default=0 )
  ap.add_argument( "--skip-reference", action="store_true" )
  args = ap.parse_args()

  cfg = gpt2_preset( args.model )
  dfx = DFXConfig( cores=args.cores )
  t = time.perf_counter()
  w = random_weights( cfg, args.seed ).to_fp16()
  print( f"weights: {time.perf_counter() - t:.1f} s" )
  prompt = [ int( x ) for x in np.random.default_rng( args.seed ).integers(
    0, cfg.vocab_size, args.prompt_len ) ]
  max_tokens = args.prompt_len + args.new_tokens
  t = time.perf_counter()
  cm = compile_model( w, dfx, args.cores, max_tokens=max_tokens )
  print( f"compile ({args.cores} cores): {time.perf_counter() - t:.1f} s" )
  host = Host( cm, "func" )
  t = time.perf_counter()
  got = host.generate( prompt, args.new_tokens )
  total = time.perf_counter() - t
  gen = host.step_seconds[ args.prompt_len: ]
  print( f"FL appliance: {total:.1f} s for {args.prompt_len}+{args.new_tokens} tokens; "
         f"{np.mean( gen ):.2f} s per generated token; {host.cycles} FL cycles" )
  if not args.skip_reference:
    ref = DFXForward( w, dfx )
    t = time.perf_counter()
    want = generate( ref, prompt, args.new_tokens )
    rt = time.perf_counter() - t
    steps = args.prompt_len + args.new_tokens - 1
    print( f"DFX-numerics reference: {rt:.1f} s; {rt / steps:.2f} s per step" )
    print( f"tokens identical: {got == want}  ({got})" )


if __name__ == "__main__":
  main()
