"""`dfx fpga`: the U280 kernel's folder for a Vitis build, all or nothing."""

import time

from . import common
from .common import dfx_config, para, positive
from ..printable import shown


def add_parser( add ):
  p = add( "fpga",
           help="write the U280 kernel's folder for a Vitis build (RTL, kernel.xml, Tcl, "
                "link configs, Makefile)",
           description=para( "Write dfx_kernel for the Alveo U280 for one DFXConfig: the "
                             "kernel's SystemVerilog, kernel.xml, package_kernel.tcl and "
                             "gen_xo.tcl, the hw and hw_emu link configs, a Makefile with "
                             "the exact vivado and v++ commands, the resource estimate and "
                             "its floorplan, config.json and a README. All or nothing: a "
                             "failure leaves no folder." ),
           epilog="examples:\n  dfx fpga --out build/u280\n"
                  "  dfx fpga --out build/u280_ring4 --cores 4\n"
                  "  dfx fpga --out build/u280_small --set d=8 --set l=4 --set hbm_channels=2" )
  p.add_argument( "--out", required=True, help="output directory (new or empty)" )
  p.add_argument( "--cores", type=positive, default=None,
                  help="cards on the ring the kernel is built for (default 1)" )
  common.add_set( p, "a DFXConfig field, e.g. --set d=32 (repeatable)" )
  common.add_json( p )
  p.set_defaults( out_kind="empty dir" )


def run( args ):
  import json
  from ..bounds import announce, verilog_cost
  from ..kernel.package import write_kernel_folder
  dfx = dfx_config( args )               # the U280's bounds too (`bounds`: usage errors)
  # the kernel's RTL is the core's translation and more: at least its cost
  seconds, mb = verilog_cost( dfx )
  announce( "dfx fpga", seconds, f"translating an MFU of d x l = {dfx.d * dfx.l} MACs, "
            f"~{mb / 1024:.1f} GB of memory; the kernel's lint comes on top", not args.json )
  t0 = time.perf_counter()
  if not args.json:
    print( f"writing dfx_kernel (d={dfx.d}, l={dfx.l}, a ring of {dfx.cores}) for the U280 "
           f"into {shown( args.out )} ...", flush=True )
  record = write_kernel_folder( dfx, args.out )
  record["seconds"] = round( time.perf_counter() - t0, 1 )
  if args.json:
    print( json.dumps( record, indent=2 ) )
    return
  fp = record["floorplan"]
  print( f"{shown( args.out )}: {', '.join( record['files'] )}; "
         f"{len( record['memory_masters'] )} memory masters, the core needs {fp['slrs']} "
         f"SLR(s) by the estimate (resources.md); build with `make -C {shown( args.out )} xo "
         f"xclbin`; {record['seconds']} s" )
