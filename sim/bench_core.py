"""Simulation speed of the appliance built from the stream units.

  python sim/bench_core.py [--cores 1 4] [--levels cl,verilog] [--steps 2]
                           [--d 32|8] [--build-dir build/bench_core] [--max-tokens 4]

Runs the small GPT-2 of tests/core/test_core_e2e.py (`testing.core_mixing`:
2 layers, 64 wide, 2 heads, 128-token vocabulary; d=32, l=8 or the narrow
d=8, l=4; the test's memory depths, compiled for `--max-tokens` positions:
4, as the test, so the Verilator model is the test's: one build, shared
through ccache) for
`--steps` token steps per level and core count and prints simulated cycles per wall-clock second and per second of this
process's CPU time (the fairer figure on a shared machine); the build
(translation, Verilator and g++, or nothing when cached) and the image
load are timed apart.  "verilog" is the whole appliance as one Verilator
model; pymtl3 writes its outputs into the build folder.  A cached model is reused by
name and Verilog hash only: after changing DFX_VL_OPT or DFX_VL_FLAGS
(pymtl_dfx.hdl.verilator5) use a fresh folder.
"""

import argparse
import os
import pathlib
import sys
import time

sys.path.insert( 0, str( pathlib.Path( __file__ ).resolve().parent.parent ) )

from pymtl_dfx.appliance.host import Host                 # noqa: E402
from pymtl_dfx.compiler.build import compile_model         # noqa: E402
from pymtl_dfx.gpt2 import random_weights                  # noqa: E402
from pymtl_dfx.testing.core_mixing import GPT, SMALL, dfx_config   # noqa: E402


def main():
  ap = argparse.ArgumentParser( description=__doc__, formatter_class=argparse.RawTextHelpFormatter )
  ap.add_argument( "--cores", type=int, nargs="+", default=[ 1, 4 ] )
  ap.add_argument( "--levels", default="cl,verilog" )
  ap.add_argument( "--steps", type=int, default=2 )
  ap.add_argument( "--build-dir", default="build/bench_core" )
  ap.add_argument( "--max-tokens", type=int, default=4 )
  ap.add_argument( "--d", type=int, choices=sorted( SMALL ), default=32 )
  args = ap.parse_args()
  os.makedirs( args.build_dir, exist_ok=True )
  os.chdir( args.build_dir )
  w = random_weights( GPT, 7 ).to_fp16()
  print( f"d={args.d}" )
  print( "| level | cores | build s | load s | load cycles | step cycles | run s | cycles/s "
         "| cycles/CPU s |" )
  print( "|---|---|---|---|---|---|---|---|---|" )
  for cores in args.cores:
    cm = compile_model( w, dfx_config( cores, args.d ), cores,
                        max_tokens=max( args.steps, args.max_tokens ) )
    for level in args.levels.split( "," ):
      t0 = time.perf_counter()
      host = Host( cm, level, **SMALL[ args.d ][1] )
      t1, c1 = time.perf_counter(), time.process_time()
      for k in range( args.steps ):
        host.step( 3 + k, want_logits=False )
      t2, c2 = time.perf_counter(), time.process_time()
      cyc = sum( host.step_cycles )
      build = getattr( host, "build_seconds", 0.0 )
      print( f"| {level} | {cores} | {build:.1f} | {t1 - t0 - build:.1f} | {host.load_cycles} | "
             f"{'+'.join( str( c ) for c in host.step_cycles )} | {t2 - t1:.1f} | "
             f"{cyc / ( t2 - t1 ):,.0f} | {cyc / ( c2 - c1 ):,.0f} |", flush=True )


if __name__ == "__main__":
  main()
