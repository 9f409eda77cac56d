"""`dfx_kernel.sv`: the kernel's Verilog for a Vitis build.

One file: the wrapper `dfx_kernel` (the Vitis RTL kernel's top: `ap_clk`,
`ap_rst_n`, `interrupt` and every bus of `interface.buses(cfg)` as flat
ports) and, below it, `KernelRTL` translated by pymtl3 (`dfx_kernel_logic`
with every module under it).  The wrapper is written from the same bus
tables as the ports of `KernelRTL`, kernel.xml and the packaging; it only
renames the clock and turns the active-low `ap_rst_n` into pymtl3's
active-high reset through one register (Vitis drives ap_rst_n synchronously
to ap_clk; the register keeps the reset's fan-out off the pin).  Vivado
picks the language by the file's extension: the translation is
SystemVerilog, so the file is `.sv`.
"""

import os
import shutil
import tempfile

from .axi import widths
from .interface import TOP, buses
from .KernelRTL import INNER, KernelRTL


def top_ports( cfg ):
  """name -> (direction, bits) of dfx_kernel's ports, in declaration order."""
  ports = { "ap_clk": ( "input", 1 ), "ap_rst_n": ( "input", 1 ), "interrupt": ( "output", 1 ) }
  for b in buses( cfg ):
    for sig, ( bits, by_master ) in widths( b.table, addr_bits=b.addr_bits,
                                            data_bits=b.data_bits ).items():
      ports[ f"{b.name}_{sig}" ] = ( "output" if by_master == b.master else "input", bits )
  return ports


def wrapper_text( cfg ):
  ports = top_ports( cfg )
  decl = []
  for name, ( d, bits ) in ports.items():
    width = f"[{bits - 1}:0] " if bits > 1 else ""
    decl.append( f"  {d} wire {width}{name}" )
  conns = [ "    .clk( ap_clk )", "    .reset( reset )" ]
  conns += [ f"    .{n}( {n} )" for n in ports if n not in ( "ap_clk", "ap_rst_n" ) ]
  return ( "// dfx_kernel: the Vitis RTL kernel top (pymtl_dfx.kernel.verilog; generated)\n"
           "`timescale 1ns / 1ps\n"
           "`default_nettype none\n"
           f"module {TOP} (\n" + ",\n".join( decl ) + "\n);\n"
           "  // ap_rst_n is active low and synchronous to ap_clk\n"
           "  reg reset = 1'b1;\n"
           "  always @( posedge ap_clk ) reset <= ~ap_rst_n;\n\n"
           f"  {INNER} logic_ (\n" + ",\n".join( conns ) + "\n  );\n"
           "endmodule\n"
           "`default_nettype wire\n\n" )


def translate_logic( cfg, out_dir ):
  """KernelRTL translated by pymtl3 into out_dir; returns its text."""
  from ..hdl.rtlgen import write_translation
  from ..hdl import verilator5
  verilator5.apply()
  top = KernelRTL( cfg )
  top.elaborate()
  with open( write_translation( top, out_dir, f"{INNER}.v" ) ) as f:
    return f.read()


def write_kernel_sv( cfg, out_dir, lint=True ):
  """Write dfx_kernel.sv and filelist.f into the folder out_dir (which
  exists; the caller makes it whole or removes it) and lint the file with
  Verilator (`rtlgen.lint`); returns the record: top, files, lines, lint."""
  from ..hdl.rtlgen import VERILATORS, LintError, lint_record
  scratch = tempfile.mkdtemp( prefix="dfx-kernel-" )
  try:
    logic = translate_logic( cfg, scratch )
  finally:
    shutil.rmtree( scratch, ignore_errors=True )
  path = os.path.join( out_dir, f"{TOP}.sv" )
  text = wrapper_text( cfg ) + logic
  with open( path, "w" ) as f:
    f.write( text )
  with open( os.path.join( out_dir, "filelist.f" ), "w" ) as f:
    f.write( f"{TOP}.sv\n" )
  record = dict( top=TOP, files=[ f"{TOP}.sv" ], lines=text.count( "\n" ) )
  if lint:
    # both Verilators of the set-up (rtlgen.VERILATORS): "lint" is the first
    # that fails, else Debian's; "lints" has each one's record
    logs, record["lints"] = [], {}
    for v in VERILATORS:
      try:
        rec, log = lint_record( path, TOP, v )
      except LintError:
        continue                       # that Verilator is not installed
      record["lints"][v] = rec
      logs.append( f"== {v}: {rec.get( 'version', '' )}\n{log}" )
    if record["lints"]:
      failed = [ r for r in record["lints"].values() if r["errors"] or r["not_waived"] ]
      record["lint"] = ( failed or list( record["lints"].values() ) )[0]
    with open( os.path.join( out_dir, "lint.log" ), "w" ) as f:
      f.write( "\n".join( logs ) )
  return record
