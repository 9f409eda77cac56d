"""FPGA resources of the MPU and VPU: Yosys `synth_xilinx -family xcup`.

  python reports/unit_resources.py [--out build/resources]

Synthesises (flattened, as `reports/resources.py` does for the operators):

- one MFU lane at d=64 (64 multipliers and a 63-adder tree);
- the whole MPU engine at d=4, l=16 with the default 1,024-entry partial-sum
  buffer (control, accumulators, post-ops, buffer, l lanes of 4);
- the whole VPU engine at d=4 and d=8;

and extrapolates to the paper's d=64, l=16:

- MPU(64, 16) = MPU(4, 16) + 16 x (lane(64) - lane(4)): only the lanes grow with d;
- VPU(64) = VPU(8) + 56 x (VPU(8) - VPU(4)) / 4: linear in the lanes.

Prints a markdown table; the paper's MFU uses 3,072 DSPs.
"""

import argparse
import os
import sys
import time

from pymtl_dfx.config import DFXConfig

sys.path.insert( 0, os.path.dirname( __file__ ) )
from resources import CELL_CLASSES, synthesise  # noqa: E402


def blocks():
  from pymtl_dfx.units.mpu.MFULaneRTL import MFULaneRTL
  from pymtl_dfx.units.mpu.MPUEngineRTL import MPUEngineRTL
  from pymtl_dfx.units.vpu.VPUEngineRTL import VPUEngineRTL
  small = DFXConfig( d=4, l=16 )
  return {
    "MFU lane, d=4": lambda: MFULaneRTL( 4 ),
    "MFU lane, d=64": lambda: MFULaneRTL( 64 ),
    "MPU engine, d=4, l=16": lambda: MPUEngineRTL( small ),
    "VPU engine, d=4": lambda: VPUEngineRTL( 4, DFXConfig( d=4 ) ),
    "VPU engine, d=8": lambda: VPUEngineRTL( 8, DFXConfig( d=8 ) ),
  }


def row( name, counts, note="" ):
  return f"| {name} | " + " | ".join( f"{counts[c]:,}" for c in CELL_CLASSES ) + f" | {note} |"


def main():
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--out", default="build/resources" )
  args = ap.parse_args()
  os.makedirs( args.out, exist_ok=True )
  print( "| block | " + " | ".join( CELL_CLASSES ) + " | |" )
  print( "|---|" + "---|" * len( CELL_CLASSES ) + "---|" )
  got = {}
  for name, make in blocks().items():
    t0 = time.time()
    got[ name ] = synthesise( make, args.out )
    print( row( name, got[ name ], f"synthesised ({time.time() - t0:.0f} s)" ), flush=True )
  lane4, lane64 = got["MFU lane, d=4"], got["MFU lane, d=64"]
  mpu = { c: got["MPU engine, d=4, l=16"][c] + 16 * ( lane64[c] - lane4[c] ) for c in CELL_CLASSES }
  v4, v8 = got["VPU engine, d=4"], got["VPU engine, d=8"]
  vpu = { c: v8[c] + ( 64 - 8 ) * ( v8[c] - v4[c] ) // 4 for c in CELL_CLASSES }
  print( row( "MPU engine, d=64, l=16", mpu, "extrapolated; paper's MFU: 3,072 DSP" ) )
  print( row( "VPU engine, d=64", vpu, "extrapolated" ) )
  return 0


if __name__ == "__main__":
  sys.exit( main() )
