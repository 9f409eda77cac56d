"""Simulation speed of an FP16 operator at each level.

Prints messages (= cycles, one message per cycle with no stalls) per second
for FL, CL, RTL in PyMTL3's Python simulator, and RTL as a Verilator model
(the first Verilator run includes its ~10 s build; the build is cached in the
current directory, so run this from a scratch folder).

  python sim/bench_fpu.py --op add --n 20000 [--levels fl,cl,rtl,verilog]
"""

import argparse
import os
import tempfile
import time

from pymtl_dfx.testing.fp16_ops import OPS, random_operands, run_fp16_op



def main():
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--op", choices=list( OPS ), default="add" )
  ap.add_argument( "--n", type=int, default=20000, help="random operands" )
  ap.add_argument( "--levels", default="fl,cl,rtl,verilog" )
  args = ap.parse_args()

  os.chdir( tempfile.mkdtemp( prefix="dfx-bench-" ) )
  x = random_operands( args.op, args.n, seed=1 )
  print( f"| level | {args.op} operands | cycles | seconds | cycles/s |" )
  print( "|---|---|---|---|---|" )
  for name in args.levels.split( "," ):
    level = "rtl" if name == "verilog" else name
    opts = { "test_verilog": "zeros" } if name == "verilog" else {}
    if name == "verilog":
      run_fp16_op( args.op, level, opts, tuple( v[:10] for v in x ) )   # build, untimed
    t0 = time.perf_counter()
    r = run_fp16_op( args.op, level, opts, x )
    dt = time.perf_counter() - t0
    print( f"| {name} | {args.n} | {r.cycles} | {dt:.2f} | {r.cycles / dt:,.0f} |" )


if __name__ == "__main__":
  main()
