"""FPGA resources of the RTL blocks: Yosys `synth_xilinx -family xcup`.

  python reports/resources.py [--out build/resources]

Translates each RTL operator with pymtl3's YosysTranslationPass, synthesises
it flattened for UltraScale+ with Yosys, and prints a markdown table of
DSP48E2, LUTs, flip-flops, carry cells, block and LUT RAMs and shift-register LUTs
(pipeline delay stages map to SRLs), plus what the MFU
(d x l multipliers and l adder trees of d-1 adders) would need at the
configured d and l, beside the paper's 3,072 DSPs.  Yosys is not Vivado: its
LUT counts are an upper bound (no cross-boundary optimisation, no retiming)
and it maps an FP16 adder to fabric, where DFX's Vivado floating-point IP
puts it on two DSPs.
"""

import argparse
import os
import re
import subprocess
import sys

from pymtl3.passes.backends.yosys import YosysTranslationPass

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.testing.fp16_ops import OPS

CELL_CLASSES = {
  "DSP": r"DSP48E2", "LUT": r"LUT\d", "FF": r"FD[A-Z]+", "CARRY": r"CARRY\d",
  "BRAM": r"RAMB\d+E2", "LUTRAM": r"RAM\d+[MSX]", "SRL": r"SRL\w+",
}


def synthesise( Model, out_dir, flatten=True, timeout=None, cells=False ):
  """Cell counts by class.  `flatten=False` synthesises each distinct module
  once and sums over the hierarchy (`stat -top`): what makes a 64-lane
  design take seconds rather than hours, at the price of no optimisation
  across module boundaries.  `timeout` (s): Yosys is stopped after it
  (subprocess.TimeoutExpired).  `cells=True`: (counts, {cell: n})."""
  m = Model()
  m.elaborate()
  m.set_metadata( YosysTranslationPass.enable, True )
  cwd = os.getcwd()
  os.chdir( out_dir )
  try:
    m.apply( YosysTranslationPass() )
    src = m.get_metadata( YosysTranslationPass.translated_filename )
    top = m.get_metadata( YosysTranslationPass.translated_top_module )
    flat = "-flatten " if flatten else ""
    script = f"read_verilog -sv {src}; synth_xilinx -family xcup {flat}-top {top}; stat -top {top}"
    log = subprocess.run( [ "yosys", "-p", script ], capture_output=True, text=True, check=True,
                          timeout=timeout ).stdout
  finally:
    os.chdir( cwd )
  stat = log[ log.rindex( "Printing statistics" ): ]
  if not flatten and "=== design hierarchy ===" in stat:    # absent for one module alone
    stat = stat[ stat.index( "=== design hierarchy ===" ): ]
  counts = dict.fromkeys( CELL_CLASSES, 0 )
  found = {}
  for cell, n in re.findall( r"^\s+(\S+)\s+(\d+)\s*$", stat, re.M ):
    found[ cell ] = found.get( cell, 0 ) + int( n )
    for cls, pattern in CELL_CLASSES.items():
      if re.fullmatch( pattern, cell ):
        counts[ cls ] += int( n )
  return ( counts, found ) if cells else counts


def main():
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--out", default="build/resources" )
  args = ap.parse_args()
  os.makedirs( args.out, exist_ok=True )
  cfg = DFXConfig()
  rows = {}
  print( "| block | latency | " + " | ".join( CELL_CLASSES ) + " |" )
  print( "|---|---|" + "---|" * len( CELL_CLASSES ) )
  for op, spec in OPS.items():
    counts = synthesise( spec["rtl"], args.out )
    rows[ op ] = counts
    print( f"| FP16 {op} | {spec['latency']} | " +
           " | ".join( str( counts[c] ) for c in CELL_CLASSES ) + " |", flush=True )
  n_mul = cfg.d * cfg.l
  n_add = ( cfg.d - 1 ) * cfg.l
  mfu = { c: n_mul * rows["mul"][c] + n_add * rows["add"][c] for c in CELL_CLASSES }
  print( f"\nMFU at d={cfg.d}, l={cfg.l} ({n_mul} multipliers + {n_add} tree adders), "
         f"from the per-operator figures: " +
         ", ".join( f"{c} {v:,}" for c, v in mfu.items() if v ) +
         ". The paper: 3,072 DSPs (1 per multiplier, 2 per adder on Xilinx FP IP)." )
  return 0


if __name__ == "__main__":
  sys.exit( main() )
