"""Translate every unit's RTL to Verilog and lint it with Verilator.

  python sim/lint_units.py [--d 64 --l 16 --psum 1024] [--units mpu vpu ...]

Runs `verilator --lint-only -Wall` on pymtl3's translation of each unit
(wrapped by `WidePortsRTL`, as the Verilator tests and the FPGA kernel see
it) and prints the warnings by class.  A warning class listed in WAIVED is
reported but accepted, each with the reason; any other warning makes the
script exit 1.
"""

import argparse
import collections
import os
import re
import subprocess
import sys

from pymtl3.passes.backends.verilog import VerilogTranslationPass

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.testing import verilator5
from pymtl_dfx.testing.wide_ports import WidePortsRTL

# What pymtl3's translation produces by construction, not design defects.
# A class in WAIVED is accepted everywhere; a class in WAIVED_WHERE only on
# the lines its pattern describes.
WAIVED_WHERE = {
  "WIDTH": ( r"for \( int unsigned \w+ = 1'd[01];",
             "pymtl3 translates `for i in range(n)` into a 32-bit loop counter "
             "initialised and compared with narrow constants" ),
  "UNUSEDPARAM": ( r"__const__",
                   "pymtl3 declares a localparam for every Python constant a block "
                   "uses and then writes some of them as literals" ),
}
WAIVED = {
  "UNUSEDSIGNAL": "pymtl3 emits every port of every library instance (e.g. the "
                  "unused read ports of stdlib registers, the exposed pipeline "
                  "stages, clk/reset of combinational blocks) and every field of a "
                  "bitstruct even where one field is read",
  "UNUSED": "the same, under Verilator 5's older name",
  "DECLFILENAME": "pymtl3 puts every module of a design in one file",
  "UNDRIVEN": "pymtl3 declares the outputs of bitstruct fields it never "
              "drives (see the report's list for the exact signals)",
  "PINCONNECTEMPTY": "unused library outputs left open",
}


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


def translate( make, out_dir ):
  top = WidePortsRTL( make() )
  top.elaborate()
  name = verilator5.name_without_double_underscores( top )
  top.set_metadata( VerilogTranslationPass.enable, True )
  top.set_metadata( VerilogTranslationPass.explicit_file_name, f"{name}.v" )
  cwd = os.getcwd()
  os.chdir( out_dir )
  try:
    top.apply( VerilogTranslationPass() )
  finally:
    os.chdir( cwd )
  return os.path.join( out_dir, f"{name}.v" ), name


def lint( path, top ):
  """Warning counts by class ("WIDTH" or "WIDTH (not waived)"), errors, log."""
  r = subprocess.run( [ "verilator", "--lint-only", "-Wall", "-Wno-fatal", "--top-module", top, path ],
                      capture_output=True, text=True )
  source = open( path ).read().split( "\n" )
  classes = collections.Counter()
  for cls, line, msg in re.findall( r"%Warning-([A-Z0-9]+): [^:]+:(\d+):\d+: (.*)", r.stderr ):
    if cls in WAIVED_WHERE:
      pattern = WAIVED_WHERE[ cls ][0]
      if not ( re.search( pattern, source[ int( line ) - 1 ] ) or re.search( pattern, msg ) ):
        cls += " (not waived)"
    classes[ cls ] += 1
  errors = re.findall( r"%Error.*", r.stderr )
  return classes, errors, r.stderr


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
    path, top = translate( designs( cfg )[ unit ], args.out )
    classes, errors, text = lint( path, top )
    lines = sum( 1 for _ in open( path ) )
    print( f"## {unit} (d={cfg.d}, l={cfg.l}, psum={cfg.psum_entries}): {path}, {lines} lines" )
    for e in errors:
      print( f"  ERROR {e}" )
      bad = True
    for cls, n in sorted( classes.items() ):
      why = WAIVED.get( cls ) or WAIVED_WHERE.get( cls, ( None, None ) )[1]
      print( f"  {cls:16s} {n:6d}  " + ( f"waived: {why}" if why else "NOT WAIVED" ) )
      bad |= why is None
    if not classes and not errors:
      print( "  clean" )
    with open( os.path.join( args.out, f"{unit}_lint.log" ), "w" ) as f:
      f.write( text )
  sys.exit( 1 if bad else 0 )


if __name__ == "__main__":
  main()
