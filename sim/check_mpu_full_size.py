"""The full-size MPU engine (d=64, l=16) in Verilator, on full tiles.

  python sim/check_mpu_full_size.py [--d 64 --l 16 --psum 2] [--kinds all]

Translates the RTL (through `WidePortsRTL`, as the tests do), builds it with
Verilator, and streams one full d x l tile of each instruction kind (or the
kinds named) through it, checking every output bit against `numerics` and
the output cycle against `mpu_tile_latency`.  Prints the build and run
times.  Too slow for CI (the build alone takes minutes); the pytest suite
runs the same checks at d=4 and d=8 and this shape at FL and CL.
"""

import argparse
import os
import time

import numpy as np

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.testing.mpu import KINDS, random_matrix_inst, run_program


def main():
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--d", type=int, default=64 )
  ap.add_argument( "--l", type=int, default=16 )
  ap.add_argument( "--psum", type=int, default=2 )
  ap.add_argument( "--out", default="build/full_size" )
  args = ap.parse_args()
  cfg = DFXConfig( d=args.d, l=args.l, psum_entries=args.psum )
  os.makedirs( args.out, exist_ok=True )
  os.chdir( args.out )
  rng = np.random.default_rng( 0 )
  insts = [ random_matrix_inst( rng, cfg, op, post, cfg.d, cfg.l ) for op, post in KINDS ]
  t0 = time.time()
  r = run_program( "rtl", { "test_verilog": "zeros" }, cfg, insts )
  took = time.time() - t0
  print( f"MPU d={cfg.d} l={cfg.l}: {len( insts )} one-tile instructions "
         f"({', '.join( f'{op.mnemonic}/{post.mnemonic}' for op, post in KINDS )}) "
         f"bit-exact in Verilator" )
  print( f"  output cycles {r.arrivals['out']}" )
  print( f"  first output at cycle {r.arrivals['out'][0]} = mpu_tile_latency "
         f"({cfg.mpu_tile_latency}) + 3: {r.arrivals['out'][0] == cfg.mpu_tile_latency + 3}" )
  print( f"  translate + build + run: {took:.0f} s" )


if __name__ == "__main__":
  main()
