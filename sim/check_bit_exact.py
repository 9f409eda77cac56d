"""Appliance vs DFX-numerics reference: tokens and final logits, bit for bit.

  python sim/check_bit_exact.py --model tiny --seeds 0 1 2 --prompt-lens 1 5 17 --cores 1 2 4

For every (seed, prompt length) the reference runs once; the FL appliance
runs on each core count with the same random weights and prompt.  Prints a
markdown table; exits 1 if any case differs.
"""

import argparse
import sys
import time

import numpy as np

from pymtl_dfx import numerics as N
from pymtl_dfx.appliance.host import Host
from pymtl_dfx.compiler.build import compile_model
from pymtl_dfx.config import DFXConfig, gpt2_preset
from pymtl_dfx.gpt2 import DFXForward, generate, random_weights


def main():
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--model", default="tiny" )
  ap.add_argument( "--seeds", type=int, nargs="+", default=[ 0, 1, 2 ] )
  ap.add_argument( "--prompt-lens", type=int, nargs="+", default=[ 1, 5, 17 ] )
  ap.add_argument( "--cores", type=int, nargs="+", default=[ 1, 2, 4 ] )
  ap.add_argument( "--new-tokens", type=int, default=4 )
  ap.add_argument( "--level", default="func" )
  args = ap.parse_args()

  cfg = gpt2_preset( args.model )
  print( f"| model | seed | prompt | cores | tokens identical | final logits identical | s |" )
  print( "|---|---|---|---|---|---|---|" )
  failed = 0
  for seed in args.seeds:
    w = random_weights( cfg, seed ).to_fp16()
    for plen in args.prompt_lens:
      prompt = [ int( t ) for t in np.random.default_rng( 1000 + seed ).integers(
        0, cfg.vocab_size, plen ) ]
      ref = DFXForward( w, DFXConfig() )
      want = generate( ref, prompt, args.new_tokens )
      ref_logits = ref.step( want[-1], logits=True )
      for cores in args.cores:
        t = time.perf_counter()
        host = Host( compile_model( w, DFXConfig( cores=cores ), cores,
                                    max_tokens=plen + args.new_tokens + 1 ), args.level )
        got = host.generate( prompt, args.new_tokens )
        logits = host.step( got[-1], want_logits=True )
        same_tok = got == want
        same_log = bool( np.array_equal( N.bits( logits ), N.bits( ref_logits ) ) )
        failed += not ( same_tok and same_log )
        print( f"| {args.model} | {seed} | {plen} | {cores} | {same_tok} | {same_log} | "
               f"{time.perf_counter() - t:.1f} |", flush=True )
  print( f"\n{failed} case(s) differ" )
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit( main() )
