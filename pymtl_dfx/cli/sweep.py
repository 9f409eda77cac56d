"""`dfx sweep`: latency and FPGA resources over a grid of DFXConfig points.

  dfx sweep --model PRESET|DIR --grid key=v1,v2 [--grid ...] [--profile NAME] [--set key=value ...]
            [--context N] [--io I:O [--samples N]] [--jobs N | --dask ADDRESS]
            [--cache DIR | --no-cache] --out DIR [--json]

For every combination of the --grid values: one generation step at
--context (and a whole I:O generation with --io) timed by the performance
model through the step cache, the resource estimate per card
(`resources.estimate_resources`), whether it fits the U280, and the Pareto
front of latency against LUTs and against DSPs.  A point the compiler
cannot fit the model into is reported, not fatal.  A point whose timing
fails (an error, not a refusal by the compiler) is reported as failed with
its one-line error while the other points finish; the files are written,
then the command exits 1.  Writes sweep.md, sweep.json and pareto.png /
pareto.svg into --out (`sweep.build`).
"""

import json

from . import common
from .common import SAMPLES, UsageError, check_context, model_config, para, positive
from ..printable import shown


def add_parser( add ):
  p = add( "sweep",
           help="design-space sweep: latency and U280 resources over a grid of configs",
           description=para(
             "For every combination of the --grid values (any DFXConfig field): the "
             "latency of one generation step at --context (and of a whole I:O "
             "generation with --io) from the performance model, beside the FPGA "
             "resources of one core per card estimated from synthesised unit numbers "
             "(LUT, FF, DSP, BRAM36, URAM against the U280), and the Pareto front of "
             "latency against LUTs and DSPs.  A point the model does not fit is "
             "reported.  A point whose timing fails is reported as failed with its "
             "error, the other points finish and the files are written; the exit "
             "status is then 1.  Timed steps are cached: a rerun computes only new "
             "points.  Writes sweep.md, sweep.json and pareto.png / pareto.svg." ),
           epilog="examples:\n"
                  "  dfx sweep --model gpt2-medium --grid d=32,64 --grid l=8,16 "
                  "--grid cores=2,4 --out build/sweep\n"
                  "  dfx sweep --model tiny --grid psum_entries=64,1024 --io 8:8 "
                  "--dask tcp://127.0.0.1:8786 --out build/sweep" )
  p.add_argument( "--model", required=True, help="preset name or Hugging Face checkpoint directory" )
  p.add_argument( "--grid", action="append", required=True, metavar="KEY=V1,V2,...",
                  help="a DFXConfig field and its values, e.g. --grid d=32,64 (repeatable: the "
                       "sweep is every combination)" )
  common.add_set( p, "a DFXConfig field for every point, e.g. --set hbm_channels=16 (repeatable)" )
  p.add_argument( "--context", type=positive, default=64,
                  help="the timed generation step's context in tokens, its own included "
                       "(default: %(default)s)" )
  p.add_argument( "--io", default=None, metavar="I:O",
                  help="also estimate a whole generation of I prompt and O output tokens per point "
                       "(as dfx perf --in I --out O)" )
  p.add_argument( "--samples", type=positive, default=None,
                  help=f"with --io: steps of each kind timed exactly, the others interpolated "
                       f"(default: {SAMPLES})" )
  common.add_step_options( p, default_set=False )     # None when not given (see --dask)
  p.add_argument( "--dask", default=None, metavar="ADDRESS",
                  help="compute the points on the Dask cluster whose scheduler is at ADDRESS "
                       "instead of --jobs local processes (e.g. tcp://host:8786; needs pip "
                       "install 'pymtl_dfx[sweep]'; the cache should be a directory the workers "
                       "share)" )
  p.add_argument( "--out", required=True, help="output directory (made if missing)" )
  common.add_json( p, "print sweep.json's record and the files" )
  p.set_defaults( out_kind="dir" )


def _io( text ):
  a, colon, b = str( text ).partition( ":" )
  try:
    n_in, n_out = int( a ), int( b )
  except ValueError:
    n_in = n_out = 0
  if not colon or n_in < 1 or n_out < 1:
    raise UsageError( f"--io {text!r}: expected I:O, two positive token counts such as 32:8" )
  return n_in, n_out


def run( args ):
  from ..sweep.build import build
  from ..sweep.grid import GridError, parse_grid, points
  gpt = model_config( args.model )
  try:
    pts = points( parse_grid( args.grid ), args.set, args.profile )
  except GridError as e:
    raise UsageError( str( e ) ) from None
  io = _io( args.io ) if args.io else None
  if args.samples is not None and not io:
    raise UsageError( f"--samples {args.samples}: only a whole generation (--io I:O) is "
                      f"sampled; add --io or drop --samples" )
  samples = args.samples or SAMPLES
  if args.jobs is not None and args.dask is not None:
    raise UsageError( f"--jobs {args.jobs} and --dask {args.dask}: the points run on local "
                      f"processes or on the cluster; drop one of them" )
  jobs = args.jobs or common.default_jobs()
  if args.context > gpt.n_positions:
    raise UsageError( f"--context {args.context} is past model {gpt.name!r}'s "
                      f"n_positions={gpt.n_positions}" )
  if io:
    check_context( *io, gpt, new="O (--io I:O)", prompt="I (--io I:O)" )
  cache = common.step_cache( args ).dir
  cache_dir = None if cache is None else str( cache )
  from ..compiler.run_estimate import perf_tasks
  steps = 1 + ( 2 * samples if io else 0 )     # per point: the step, and --io's samples

  def on_start( models ):
    # a process per point (`run.run_all`), or one point's steps on `jobs`
    procs = jobs if len( models ) == 1 else min( jobs, len( models ) )
    perf_tasks( "dfx sweep", [ ( m, ) for m in models for _ in range( steps ) ], procs,
                not args.json )
  # Connected before anything is computed, even when every point is cached:
  # an unreachable address is refused, never silently unused.
  from ..sweep.run import dask_client
  client = dask_client( args.dask ) if args.dask is not None else None
  try:
    rec, paths = build( args.out, gpt, pts, args.context, io, samples, cache_dir, jobs,
                        client, args.set,
                        common.Progress( "dfx sweep", not args.json ).counter( "point" ),
                        on_start, profile=args.profile )
  finally:
    if client is not None:
      client.close()
  bad = [ p for p in rec["points"] if p["error"] is not None ]
  if args.json:
    print( json.dumps( dict( rec, files=paths ), indent=1 ) )
    args.json_reported = True    # the record says which points failed
  else:
    _print_points( rec, paths, io )
  if bad:
    raise SweepFailed( f"{len( bad )} of {len( rec['points'] )} points failed (the others are "
                       f"in {paths['json']}); {bad[0]['label']}: {bad[0]['error']}" )


class SweepFailed( ValueError ):
  """Some points' timing failed; the results of the others are written."""


def _print_points( rec, paths, io ):
  for p in rec["points"]:
    if p["error"] is not None:
      print( f"{p['label']}: failed: {p['error']}" )
      continue
    if p["step"] is None:
      print( f"{p['label']}: does not fit: {p['reason']}" )
      continue
    r = p["resources"]
    gen = ( f", {io[0]}:{io[1]} {p['generation']['ms']:.3f} ms" ) if io else ""
    print( f"{p['label']}: {p['step']['ms']:.4f} ms per step{gen}; "
           + ", ".join( f"{k} {r['percent'][k]:.0f} %" for k in ( "LUT", "DSP", "BRAM36" ) )
           + ( "" if r["within_budget"] else f" (over the U280 in {', '.join( r['over'] )})" )
           + ( " [Pareto]" if p["pareto_lut"] or p["pareto_dsp"] else "" ) )
  for k in ( "page", "json", "figure" ):
    print( f"{k}: {shown( paths[ k ] )}" )
