"""The kernel's FPGA resources at a DFXConfig (default: the paper's d=64, l=16).

  python reports/kernel_resources.py [--profile NAME] [--set key=value ...] [--synth] [--timeout S]
                                     [--out build/kernel_resources]

Prints `pymtl_dfx.kernel.resources.kernel_resources(cfg)` as markdown: the
core's estimate (SYNTHESISED unit rows x instances, the register file as
`resources.vrf_banking` maps it), the kernel's shims from the measured
`SHIMS_SYNTHESISED` table, totals, % of the U280 and the per-SLR
floorplan.

--synth synthesises every shim module the kernel has (one Yosys 0.23
`synth_xilinx -family xcup` run per module, no -flatten, `stat -top`, one
at a time, each stopped after --timeout seconds) at cfg, caches each result
in --out by the module's translated-source hash, and prints the measured
rows beside `SHIMS_SYNTHESISED`'s (a differing or missing one is what to
record there).  A module not importable yet is reported as pending.
"""

import argparse
import hashlib
import importlib
import json
import os
import subprocess
import sys
import time

from pymtl_dfx import profiles
from pymtl_dfx.kernel.resources import (SHIMS_SYNTHESISED, cells_to_resources, kernel_resources,
                                        markdown)
from pymtl_dfx.resources.estimate import RESOURCES

sys.path.insert( 0, os.path.dirname( __file__ ) )
from resources import synthesise  # noqa: E402


def constructors( cfg ):
  """module -> (what it is synthesised at, a function making it), as
  `KernelRTL` instantiates them."""
  def make( module, *args ):
    cls = getattr( importlib.import_module( f"pymtl_dfx.kernel.{module}" ), module )
    return lambda: cls( *args )

  def mem_master():
    from pymtl_dfx.units.dma.msgs import mk_dma_types
    return make( "MemAxiMasterRTL", mk_dma_types( cfg )["hbm"] )()

  at = f"d={cfg.d}: {cfg.mem_word_bits}-bit words"
  return {
    "MemAxiMasterRTL": ( at, mem_master ),
    "InstFetchRTL": ( "one instruction a beat", lambda: make( "InstFetchRTL" )() ),
    "ControlRegsRTL": ( at, lambda: make( "ControlRegsRTL", cfg )() ),
    "KernelStatusRTL": ( at, lambda: make( "KernelStatusRTL", cfg )() ),
    "RingTxRTL": ( f"router_words={cfg.router_words}", lambda: make( "RingTxRTL", cfg )() ),
    "RingRxRTL": ( f"router_words={cfg.router_words}", lambda: make( "RingRxRTL", cfg )() ),
  }


def synth_one( module, at, build, out, timeout ):
  """{resources, cells, seconds} from the cache or a Yosys run; or
  {error}."""
  try:
    model = build()
  except ImportError as e:
    return dict( error=f"not on this branch yet ({e})" )
  model.elaborate()
  # the cache key: the module's class source and its parameters' repr
  src = open( sys.modules[ type( model ).__module__ ].__file__ ).read()
  key = hashlib.sha256( ( src + at ).encode() ).hexdigest()[ :16 ]
  cache = os.path.join( out, f"{module}-{key}.json" )
  if os.path.exists( cache ):
    return json.load( open( cache ) )
  work = os.path.join( out, f"{module}-{key}" )
  os.makedirs( work, exist_ok=True )
  t0 = time.time()
  try:
    _, cells = synthesise( lambda: build(), work, flatten=False, timeout=timeout, cells=True )
  except subprocess.TimeoutExpired:
    return dict( error=f"Yosys did not finish in {timeout} s" )
  except subprocess.CalledProcessError as e:
    return dict( error=f"Yosys failed: {( e.stderr or e.stdout or '' ).strip()[ -300: ]}" )
  got = dict( resources=cells_to_resources( cells ), cells=cells, at=at,
              seconds=round( time.time() - t0 ) )
  with open( cache, "w" ) as f:
    json.dump( got, f, indent=1 )
  return got


def main( argv=None ):
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--profile", choices=profiles.names(), default=None,
                   help="a named set of DFXConfig values, applied before --set" )
  ap.add_argument( "--set", action="append", default=[], metavar="KEY=VALUE" )
  ap.add_argument( "--synth", action="store_true" )
  ap.add_argument( "--timeout", type=float, default=1800 )
  ap.add_argument( "--out", default="build/kernel_resources" )
  args = ap.parse_args( argv )
  cfg = profiles.config( args.profile ).with_overrides( args.set )
  if args.synth:
    os.makedirs( args.out, exist_ok=True )
    print( "| module | at | " + " | ".join( RESOURCES ) + " | in SHIMS_SYNTHESISED | seconds |" )
    print( "|---|---|" + "---:|" * len( RESOURCES ) + "---|---:|" )
    for module, ( at, build ) in constructors( cfg ).items():
      got = synth_one( module, at, build, os.path.abspath( args.out ), args.timeout )
      if "error" in got:
        print( f"| {module} | {at} | " + " | ".join( "-" for _ in RESOURCES ) +
               f" | pending: {got['error']} | |", flush=True )
        continue
      r = got["resources"]
      known = SHIMS_SYNTHESISED.get( module )
      same = known is not None and tuple( known[ :-1 ] ) == tuple( r[k] for k in RESOURCES )
      print( f"| {module} | {at} | " + " | ".join( f"{r[k]:,}" for k in RESOURCES ) +
             f" | {'recorded' if same else 'NOT RECORDED: ' + repr( known )} | {got['seconds']} |",
             flush=True )
    print()
  print( markdown( kernel_resources( cfg ) ), end="" )
  return 0


if __name__ == "__main__":
  sys.exit( main() )
