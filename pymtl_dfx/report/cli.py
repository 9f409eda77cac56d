"""`dfx report --out DIR`: the paper's figures from the performance model.

  dfx report --out DIR [--jobs N] [--cache DIR | --no-cache] [--set key=value ...] [--json]

Times the steps the figures need (`plan.PAPER`; about 30 full-size steps,
tens of CPU minutes the first time, seconds from the cache), then writes
breakdown, scaling, xl_latency and step_ms as PNG and SVG, summary.md
(the figures and the table against the paper) and results.json.
"""

import json
import os

from .. import atomic
from ..printable import shown
from ..config import DFXConfig
from ..perf.cli import add_step_options


def add_parser( sub, common, positive ):
  p = sub.add_parser( "report", parents=[ common ],
                      help="the paper's figures from the performance model (matplotlib)",
                      description="Per-operation breakdown per model size and card count, "
                                  "345M scalability, 1.5B latency against output tokens and "
                                  "ms per step against context, as PNG and SVG, with summary.md "
                                  "(the figures and a table against the paper) and "
                                  "results.json.  About 30 full-size steps are timed the first "
                                  "time (tens of CPU minutes on --jobs processes); a rerun reads "
                                  "them from the cache.",
                      epilog="example:\n  dfx report --out build/report --jobs 2" )
  p.add_argument( "--out", required=True, help="output directory (made if missing)" )
  add_step_options( p, positive )
  p.add_argument( "--set", action="append", default=[], metavar="KEY=VALUE",
                  help="a DFXConfig field for every figure, e.g. --set hbm_latency_ns=200 "
                       "(not cores: the figures choose the card counts)" )
  p.add_argument( "--json", action="store_true", help="print the written files as JSON" )
  p.set_defaults( fn=cmd_report )


def _jsonable( x ):
  if isinstance( x, dict ):
    return { str( k ): _jsonable( v ) for k, v in x.items() }
  if isinstance( x, ( list, tuple ) ):
    return [ _jsonable( v ) for v in x ]
  return x


def build( out_dir, plan=None, cache=None, jobs=1, overrides=(), on_done=None, on_start=None ):
  """Computes and writes the report; returns {what: path}."""
  from . import compute, figures, summary
  from .plan import PAPER
  from ..outputs import check_dir
  plan = plan or PAPER
  check_dir( out_dir, "--out" )           # before the minutes of timing, not after
  os.makedirs( out_dir, exist_ok=True )
  compute.fill( cache, plan, jobs, overrides, on_done, on_start=on_start )
  res = compute.results( cache, plan, overrides )
  clock = DFXConfig().with_overrides( list( overrides ) ).clock_mhz if overrides else \
    DFXConfig().clock_mhz
  pngs = {}
  if res["breakdown"]:
    pngs["breakdown"] = figures.breakdown( res, out_dir, clock )
  if res["scaling"]:
    pngs["scaling"] = figures.scaling( res, out_dir )
  if res["xl"]:
    pngs["xl_latency"] = figures.xl_latency( res, out_dir )
    pngs["step_ms"] = figures.step_ms( res, out_dir )
  paths = { k: os.path.join( out_dir, v ) for k, v in pngs.items() }
  paths["summary"] = os.path.join( out_dir, "summary.md" )
  atomic.write_text( paths["summary"], summary.write( res, pngs, clock ) )
  paths["results"] = os.path.join( out_dir, "results.json" )
  atomic.write_text( paths["results"], json.dumps( _jsonable( res ), indent=1 ) + "\n" )
  return paths


def cmd_report( args ):
  from ..cli import UsageError
  from ..config import ConfigError
  from ..perf.cli import announce_steps, progress, step_cache
  if any( a.partition( "=" )[0].strip() == "cores" for a in args.set ):
    raise UsageError( "--set cores is not allowed: the figures choose the card counts" )
  from ..bounds import check_dfx
  try:
    check_dfx( DFXConfig().with_overrides( args.set ) )
  except ConfigError as e:
    raise UsageError( str( e ) ) from None
  cache = step_cache( args )
  paths = build( args.out, cache=cache, jobs=args.jobs, overrides=args.set,
                 on_done=progress( "dfx report", not args.json ),
                 on_start=announce_steps( "dfx report", args.jobs, not args.json ) )
  if args.json:
    print( json.dumps( paths, indent=2 ) )
  else:
    for k, v in paths.items():
      print( f"{k}: {shown( v )}" )
