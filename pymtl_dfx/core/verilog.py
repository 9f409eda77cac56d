"""The RTL core as Verilog for an FPGA build (`dfx verilog`).

`write_core_verilog(cfg, out_dir)` translates one `Core` with every unit at
RTL and its HBM/DDR channels as ports (`memories=False`: on the U280 the
AXI masters to the HBM and DDR IP sit there, see fpga/), lints it with
`verilator --lint-only -Wall` (`pymtl_dfx.hdl.rtlgen`'s waivers, each with its
reason) and writes, all or nothing:

  <top>.v        the whole core: one top module, every unit beneath it
  filelist.f     the sources in compile order (one file today)
  config.json    the DFXConfig it was built for (and the --profile it
                 started from, or null), the top's name and ports, the
                 pymtl_dfx version and the lint result
  lint.log       Verilator's warnings

The Verilator runs of the tests translate the same units with the same
pass (`core_modules` lists the modules both must share, and a test checks
that every unit module here is byte for byte the one the Verilator
appliance is built from).
"""

import json
import os
import re
import shutil

from ..config import DFXConfig


class VerilogError( ValueError ):
  pass


def fpga_core( cfg ):
  """The core an FPGA build takes: every unit RTL, memories outside, the
  ring position an input (`runtime_id`: one image for every card of a
  ring of cfg.cores)."""
  from .Core import Core
  return Core( cfg, None, cfg.cores, level="rtl", memories=False, runtime_id=True )


def top_ports( core ):
  """The written top's ports, as `rtlgen.translate` wraps `core`
  (`WidePortsRTL`): each plain port (dir, bits) - the status outputs idle,
  issued, retired and the input core_id - and each val/rdy stream (dir of
  its message, message bits, channels for a list, split into fields when
  wider than pymtl3's port limit); pymtl3 names a stream's signals
  NAME__msg, NAME__val, NAME__rdy (lists: arrays of them)."""
  from ..hdl.wide_ports import is_wide, plain_ports, stream_ports
  ports = {}
  for name, ( port, is_in ) in plain_ports( core ).items():
    first = port[0] if isinstance( port, list ) else port
    ports[ name ] = dict( dir="in" if is_in else "out", bits=first._dsl.Type.nbits )
  streams = {}
  for name, ( ifc, is_recv ) in stream_ports( core ).items():
    first = ifc[0] if isinstance( ifc, list ) else ifc
    Type = first.msg._dsl.Type
    streams[ name ] = dict( dir="in" if is_recv else "out", bits=Type.nbits,
                            channels=len( ifc ) if isinstance( ifc, list ) else None,
                            fields=is_wide( Type ) )
  return dict( plain=ports, streams=streams )


def modules( verilog_text ):
  """module name -> its text, for every module in a translated file.
  pymtl3 names a lambda's block after the hierarchy path of the first
  instance it translated (`_lambda__s_dut_cores_0__vpu_...`), which depends
  on the top, not on the module: those names are normalised."""
  found = re.findall( r"(^module\s+(\w+).*?^endmodule)", verilog_text, re.S | re.M )
  return { name: re.sub( r"lambda__s_\w+", "lambda", text ) for text, name in found }


def write_core_verilog( cfg: DFXConfig, out_dir, lint=True, profile=None ):
  """Write the core's Verilog into out_dir (created with its parents; must
  not exist or be empty, `outputs.check_dir`); returns the config.json
  record.  Everything is made in OUT.dfx-partial-HEX beside it and renamed
  at the end; on any exception (Ctrl-C, SIGTERM, a lint failure) that folder
  and the parents made for it are removed again.  A lint failure keeps
  Verilator's log (`rtlgen.keeping_refused_log`: OUT.lint.log) and names it."""
  from .. import __version__
  from ..atomic import atomic_dir
  from ..hdl.rtlgen import LintRefusal, keeping_refused_log, lint_failure, lint_record, translate
  with keeping_refused_log( out_dir, VerilogError ), atomic_dir( out_dir, "--out" ) as work:
    core = fpga_core( cfg )
    path, top = translate( core, work )
    record = dict( top=top, files=[ f"{top}.v" ], ports=top_ports( core ), config=cfg.to_dict(), profile=profile,
                   pymtl_dfx=__version__, lines=sum( 1 for _ in open( path ) ) )
    if lint:
      record["lint"], log = lint_record( path, top )
      with open( os.path.join( work, "lint.log" ), "w" ) as f:
        f.write( log )
      failure = lint_failure( record["lint"], log )
      if failure:
        raise LintRefusal( top, failure, log )
    for name in os.listdir( work ):     # translation leaves its own scratch files
      if name not in ( f"{top}.v", "lint.log" ):
        p = os.path.join( work, name )
        shutil.rmtree( p ) if os.path.isdir( p ) else os.remove( p )
    with open( os.path.join( work, "filelist.f" ), "w" ) as f:
      f.write( f"{top}.v\n" )
    with open( os.path.join( work, "config.json" ), "w" ) as f:
      json.dump( record, f, indent=2 )
      f.write( "\n" )
  return record
