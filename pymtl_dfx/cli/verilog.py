"""`dfx verilog`: the RTL core as Verilog for an FPGA build, linted."""

import time

from . import common
from .common import dfx_config, para, positive
from ..printable import shown


def add_parser( add ):
  p = add( "verilog",
           help="write the RTL core as Verilog for an FPGA build",
           description=para( "Translate the core (every unit at RTL, HBM/DDR "
                             "channels as ports) to one Verilog file, lint it "
                             "with verilator --lint-only -Wall, and write it with "
                             "a file list and the config it was built for." ),
           epilog="example:\n  dfx verilog --out build/core_d32 --set d=32 --set l=8 "
                  "--set hbm_channels=4" )
  p.add_argument( "--out", required=True, help="output directory (new or empty)" )
  p.add_argument( "--cores", type=positive, default=None,
                  help="cores of the appliance the core is built for (default 1)" )
  common.add_set( p, "a DFXConfig field, e.g. --set d=32 (repeatable)" )
  p.add_argument( "--no-lint", dest="lint", action="store_false", help="skip the Verilator lint" )
  common.add_json( p )
  p.set_defaults( out_kind="empty dir" )


def run( args ):
  import json
  from ..core.verilog import write_core_verilog
  from ..bounds import announce, verilog_cost
  dfx = dfx_config( args )
  seconds, mb = verilog_cost( dfx )
  announce( "dfx verilog", seconds, f"translating an MFU of d x l = {dfx.d * dfx.l} MACs, ~{mb / 1024:.1f} GB "
            f"of memory{'; the lint comes on top' if args.lint else ''}", not args.json )
  t0 = time.perf_counter()
  if not args.json:
    print( f"translating the RTL core (d={dfx.d}, l={dfx.l}, {dfx.cores} core(s)) "
           f"{'and linting it ' if args.lint else ''}into {shown( args.out )} ...", flush=True )
  record = write_core_verilog( dfx, args.out, lint=args.lint, profile=args.profile )
  record["seconds"] = round( time.perf_counter() - t0, 1 )
  if args.json:
    print( json.dumps( { k: v for k, v in record.items() }, indent=2 ) )
    return
  lint = record.get( "lint" )
  print( f"{shown( args.out )}/{record['files'][0]}: top module {record['top']}, {record['lines']:,} lines; "
         + ( f"verilator --lint-only -Wall clean apart from waived classes "
             f"({', '.join( sorted( lint['waivers'] ) )}; reasons in config.json)"
             if lint else "not linted" )
         + f"; {record['seconds']} s" )
