"""Translate an RTL top to Verilog and lint it with Verilator, as the FPGA
flow and `dfx verilog` take it.

`translate(component, out_dir)` wraps the component in `WidePortsRTL` (ports
wider than pymtl3's 1,023-bit limit become one port per field, as the
Verilator tests see them), gives it a module name Verilator 5 accepts and
writes one Verilog file.  `lint(path, top)` runs `verilator --lint-only
-Wall` and sorts the warnings into the classes below: a class in WAIVED is
accepted everywhere with its reason, a class in WAIVED_WHERE only on the
lines its pattern describes; anything else is a defect.
"""

import collections
import os
import re
import subprocess

from pymtl3.passes.backends.verilog import VerilogTranslationPass

from .testing import verilator5
from .testing.wide_ports import WidePortsRTL

# What pymtl3's translation produces by construction, not design defects.
# A class in WAIVED is accepted everywhere; a class in WAIVED_WHERE only on
# the lines its pattern describes.
WAIVED_WHERE = {
  "WIDTH": ( r"for \( int unsigned \w+ = 1'd[01];",
             "pymtl3 translates `for i in range(n)` into a 32-bit loop counter "
             "initialised and compared with narrow constants" ),
  "SYMRSVDWORD": ( r"\binterrupt\b",
                   "Vitis names an RTL kernel's interrupt pin `interrupt`, which Verilator "
                   "flags as a common C++ word" ),
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


def translate( component, out_dir ):
  """(path, module name) of `component`'s Verilog, written in out_dir."""
  top = WidePortsRTL( component )
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
  # run beside the file, so the log names it as it will be named in its
  # folder (a caller may lint in a scratch folder and move it afterwards)
  r = subprocess.run( [ "verilator", "--lint-only", "-Wall", "-Wno-fatal", "--top-module", top,
                        os.path.basename( path ) ],
                      capture_output=True, text=True, cwd=os.path.dirname( path ) or "." )
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


def waiver_reason( cls ):
  """Why a warning class is accepted, or None (a defect)."""
  return WAIVED.get( cls ) or WAIVED_WHERE.get( cls, ( None, None ) )[1]
