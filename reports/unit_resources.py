"""FPGA resources of the MPU and VPU at d=64, l=16: Yosys `synth_xilinx -family xcup`.

  python reports/unit_resources.py [--out build/resources]

What is synthesised (module by module: `synth_xilinx` without -flatten,
totals from `stat -top`; a flattened 64-lane design did not finish in 25
minutes): one MFU lane at d=4 and at d=64 (d multipliers and a d-1 adder
tree, as `MFULaneRTL`), and every FP16 operator of `testing.fp16_ops`.

What is computed from those rows (marked "estimate"): the MPU as l lanes of
d plus, per output column, the accumulator adder and the post-op adder,
multiplier and GELU, plus an l-input max tree; the VPU as d lanes of
add, mul, exp, recip, rsqrt and inv_pow2 plus a d-input adder tree and max
tree, the accumulator's adder and comparator.  Control, pipeline registers
and the partial-sum buffer are not in the estimates.

The engines themselves do not go through pymtl3 3.1's YosysTranslationPass:
it declares the array behind a bitstruct's list field on a submodule's
output port and never assigns it (e.g. StallPipeRTL's `send__msg__s`), so
Yosys stops on an output tied to x; the Verilog translation that Verilator
builds is correct but uses unpacked-array ports, which Yosys 0.23 cannot read.
"""

import argparse
import os
import sys
import time

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.testing.fp16_ops import OPS

sys.path.insert( 0, os.path.dirname( __file__ ) )
from resources import CELL_CLASSES, synthesise  # noqa: E402

PAPER_MFU_DSP = 3072


def row( name, counts, note="" ):
  return f"| {name} | " + " | ".join( f"{counts[c]:,}" for c in CELL_CLASSES ) + f" | {note} |"


def combine( parts ):
  """sum of n x counts over (n, counts) pairs"""
  return { c: sum( n * counts[c] for n, counts in parts ) for c in CELL_CLASSES }


def main():
  from pymtl_dfx.units.mpu.MFULaneRTL import MFULaneRTL
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--out", default="build/resources" )
  args = ap.parse_args()
  os.makedirs( args.out, exist_ok=True )
  cfg = DFXConfig()
  d, l = cfg.d, cfg.l
  print( "| block | " + " | ".join( CELL_CLASSES ) + " | |" )
  print( "|---|" + "---|" * len( CELL_CLASSES ) + "---|" )
  got = {}
  blocks = { f"MFU lane, d={n}": ( lambda n=n: MFULaneRTL( n ) ) for n in ( 4, d ) }
  blocks.update( { f"FP16 {op}": spec["rtl"] for op, spec in OPS.items() } )
  for name, make in blocks.items():
    t0 = time.time()
    got[ name ] = synthesise( make, args.out, flatten=False )
    print( row( name, got[ name ], f"synthesised ({time.time() - t0:.0f} s)" ), flush=True )
  op = { k[ 5: ]: v for k, v in got.items() if k.startswith( "FP16 " ) }
  mpu = combine( [ ( l, got[ f"MFU lane, d={d}" ] ), ( 2 * l, op["add"] ), ( l, op["mul"] ),
                   ( l, op["gelu"] ), ( l - 1, op["max"] ) ] )
  vpu = combine( [ ( d, op["add"] ), ( d, op["mul"] ), ( d, op["exp"] ), ( d, op["recip"] ),
                   ( d, op["rsqrt"] ), ( d, op["invpow2"] ), ( d, op["add"] ), ( d, op["max"] ) ] )
  print( row( f"MPU, d={d}, l={l}", mpu,
              f"estimate: {l} lanes + {l} x (2 add, mul, GELU) + max tree; "
              f"the paper's MFU: {PAPER_MFU_DSP:,} DSP" ) )
  print( row( f"VPU, d={d}", vpu,
              f"estimate: {d} x (add, mul, exp, recip, rsqrt, inv_pow2) + {d - 1}-adder and "
              f"{d - 1}-comparator trees + accumulator" ) )
  return 0


if __name__ == "__main__":
  sys.exit( main() )
