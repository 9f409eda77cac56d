"""The shipped English GPT-2 on the stream-unit appliance, against the
tokens its training run recorded under DFX numerics (expected.json).

  python sim/check_shipped_model.py [--levels fl,cl] [--cores 1 4]
                                    [--cases 0,1,2] [--new-tokens 8]

For each level, core count and recorded prompt: compiles the model for the
default DFXConfig on that many cores, generates greedily on the host at
that level and prints one line: identical or not (the first differing
position), the simulated cycles (timed levels) and the wall and CPU
seconds.  Exits 1 if any run differs.  A CL run of the 4-core appliance
takes tens of minutes per prompt on this project's machine (docs/core.md).
"""

import argparse
import json
import os
import pathlib
import sys
import time

sys.path.insert( 0, str( pathlib.Path( __file__ ).resolve().parent.parent ) )

from pymtl_dfx.levels import TIMED_LEVELS, host_for        # noqa: E402
from pymtl_dfx.compiler.build import compile_model          # noqa: E402
from pymtl_dfx.config import DFXConfig                      # noqa: E402
from pymtl_dfx.gpt2 import load_checkpoint                  # noqa: E402
from pymtl_dfx.models import TINY_ENGLISH                   # noqa: E402


def run( weights, case, level, cores, n_new ):
  prompt = case["prompt_ids"]
  want = case["dfx_numerics"][ :n_new ]
  t0, c0 = time.perf_counter(), time.process_time()
  host = host_for( compile_model( weights, DFXConfig( cores=cores ), cores,
                                  max_tokens=len( prompt ) + n_new ), level )
  got = host.generate( prompt, n_new )
  wall, cpu = time.perf_counter() - t0, time.process_time() - c0
  diff = next( ( k for k, ( a, b ) in enumerate( zip( got, want ) ) if a != b ), None )
  cycles = host.results()["cycles"] if level in TIMED_LEVELS else None
  verdict = "identical" if diff is None and len( got ) == len( want ) else \
    f"DIFFERS from token {diff}: {got} vs {want}"
  print( f"{level:4} {cores} card(s) {case['prompt']!r:22} {n_new} tokens: {verdict}; "
         + ( f"{cycles:,} cycles; " if cycles is not None else "" )
         + f"{wall:.0f} s wall, {cpu:.0f} s CPU", flush=True )
  return diff is None


def main():
  ap = argparse.ArgumentParser( description=__doc__, formatter_class=argparse.RawTextHelpFormatter )
  ap.add_argument( "--levels", default="fl,cl" )
  ap.add_argument( "--cores", type=int, nargs="+", default=[ 1, 4 ] )
  ap.add_argument( "--cases", default="0,1,2", help="indices into expected.json's cases" )
  ap.add_argument( "--new-tokens", type=int, default=8 )
  a = ap.parse_args()
  with open( os.path.join( TINY_ENGLISH, "expected.json" ) ) as f:
    cases = json.load( f )["cases"]
  weights = load_checkpoint( TINY_ENGLISH ).to_fp16()
  ok = True
  for level in a.levels.split( "," ):
    for cores in a.cores:
      for i in a.cases.split( "," ):
        ok &= run( weights, cases[ int( i ) ], level, cores, a.new_tokens )
  sys.exit( 0 if ok else 1 )


if __name__ == "__main__":
  main()
