"""`dfx report --out DIR`: the paper's figures from the performance model.

  dfx report --out DIR [--jobs N] [--cache DIR | --no-cache] [--profile NAME]
             [--set key=value ...] [--json]

Times the steps the figures need (`plan.PAPER`; about 30 full-size steps,
tens of CPU minutes the first time, seconds from the cache), then writes
breakdown, scaling, xl_latency and step_ms as PNG and SVG, summary.md
(the figures and the table against the paper) and results.json
(`report.build`).
"""

import json

from . import common
from .common import UsageError
from ..printable import shown


def add_parser( add ):
  p = add( "report",
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
  common.add_step_options( p )
  common.add_set( p, "a DFXConfig field for every figure, e.g. --set hbm_latency_ns=200 "
                     "(not cores: the figures choose the card counts)" )
  common.add_json( p, "print the written files as JSON" )
  p.set_defaults( out_kind="dir" )


def run( args ):
  from ..config import ConfigError
  from ..report.build import build
  if any( a.partition( "=" )[0].strip() == "cores" for a in args.set ):
    raise UsageError( "--set cores is not allowed: the figures choose the card counts" )
  try:
    dfx = common.base_config( args ).with_overrides( args.set )
  except ConfigError as e:
    raise UsageError( str( e ) ) from None
  common.checked_config( dfx )
  paths = build( args.out, cache=common.step_cache( args ), jobs=args.jobs, overrides=args.set,
                 profile=args.profile,
                 on_done=common.Progress( "dfx report", not args.json ).counter( "timed step" ),
                 on_start=common.announce_steps( "dfx report", args.jobs, not args.json ) )
  if args.json:
    print( json.dumps( paths, indent=2 ) )
  else:
    for k, v in paths.items():
      print( f"{k}: {shown( v )}" )
