"""Translate every unit's RTL to Verilog and lint it with Verilator.

  python sim/lint_units.py [--d 64 --l 16 --psum 1024] [--units mpu vpu ...]

Runs `verilator --lint-only -Wall` on pymtl3's translation of each unit
(wrapped by `WidePortsRTL`, as the Verilator tests and the FPGA kernel see
it) and prints the warnings by class.  A warning class listed in WAIVED is
reported but accepted (`pymtl_dfx.hdl.rtlgen`), each with the reason; any other warning makes the
script exit 1.
"""

import argparse
import os
import sys

from pymtl_dfx.atomic import write_text
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.hdl.rtlgen import lint, translate, waiver_reason

MEMORY_DEPTH = 64


def designs( cfg ):
  """Every unit's RTL top at `cfg`, by name (the memory is the test memory
  of the DMA's tests, `MEMORY_DEPTH` rows per channel)."""
  from pymtl_dfx.units.control.ControlUnitRTL import ControlUnitRTL
  from pymtl_dfx.units.dma.DMARTL import DMARTL
  from pymtl_dfx.units.memory.MemoryRTL import MemoryRTL
  from pymtl_dfx.units.memory.msgs import memory_spec
  from pymtl_dfx.units.mpu.MPURTL import MPURTL
  from pymtl_dfx.units.regfile.RegisterFileManagerRTL import RegisterFileManagerRTL
  from pymtl_dfx.units.router.RouterRTL import RouterRTL
  from pymtl_dfx.units.vpu.VPURTL import VPURTL
  return {
    "mpu": lambda: MPURTL( cfg ),
    "vpu": lambda: VPURTL( cfg.d, cfg ),
    "control": lambda: ControlUnitRTL( cfg ),
    "router": lambda: RouterRTL( cfg, 0, 4 ),
    "hbm": lambda: MemoryRTL( memory_spec( cfg, "hbm" ), MEMORY_DEPTH ),
    "ddr": lambda: MemoryRTL( memory_spec( cfg, "ddr" ), MEMORY_DEPTH ),
    "dma": lambda: DMARTL( cfg ),
    "rfm": lambda: RegisterFileManagerRTL( cfg ),
  }


def main():
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--d", type=int, default=64 )
  ap.add_argument( "--l", type=int, default=16 )
  ap.add_argument( "--psum", type=int, default=1024 )
  ap.add_argument( "--units", nargs="+", default=[ "mpu", "vpu", "control", "router",
                                                   "hbm", "ddr", "dma", "rfm" ] )
  ap.add_argument( "--vreg", type=int, default=None,
                   help="register file entries (default: DFXConfig's)" )
  ap.add_argument( "--out", default="build/lint" )
  args = ap.parse_args()
  cfg = DFXConfig( d=args.d, l=args.l, psum_entries=args.psum,
                   **( { "vreg_entries": args.vreg } if args.vreg else {} ) )
  os.makedirs( args.out, exist_ok=True )
  bad = False
  for unit in args.units:
    path, top = translate( designs( cfg )[ unit ](), args.out )
    classes, errors, text = lint( path, top )
    lines = sum( 1 for _ in open( path ) )
    print( f"## {unit} (d={cfg.d}, l={cfg.l}, psum={cfg.psum_entries}): {path}, {lines} lines" )
    for e in errors:
      print( f"  ERROR {e}" )
      bad = True
    for cls, n in sorted( classes.items() ):
      why = waiver_reason( cls )
      print( f"  {cls:16s} {n:6d}  " + ( f"waived: {why}" if why else "NOT WAIVED" ) )
      bad |= why is None
    if not classes and not errors:
      print( "  clean" )
    write_text( os.path.join( args.out, f"{unit}_lint.log" ), text )
  sys.exit( 1 if bad else 0 )


if __name__ == "__main__":
  main()
