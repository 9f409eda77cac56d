"""`dfx sweep`: latency and FPGA resources over a grid of DFXConfig points.

  dfx sweep --model PRESET|DIR --grid key=v1,v2 [--grid ...] [--set key=value ...]
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
pareto.svg into --out.
"""

import json
import os
import sys
import textwrap
import time

from .. import atomic
from ..printable import shown


def add_parser( sub, common, positive ):
  p = sub.add_parser( "sweep", parents=[ common ],
                      help="design-space sweep: latency and U280 resources over a grid of configs",
                      description=textwrap.fill(
                        "For every combination of the --grid values (any DFXConfig field): the "
                        "latency of one generation step at --context (and of a whole I:O "
                        "generation with --io) from the performance model, beside the FPGA "
                        "resources of one core per card estimated from synthesised unit numbers "
                        "(LUT, FF, DSP, BRAM36, URAM against the U280), and the Pareto front of "
                        "latency against LUTs and DSPs.  A point the model does not fit is "
                        "reported.  A point whose timing fails is reported as failed with its "
                        "error, the other points finish and the files are written; the exit "
                        "status is then 1.  Timed steps are cached: a rerun computes only new "
                        "points.  Writes sweep.md, sweep.json and pareto.png / pareto.svg.", 79 ),
                      epilog="examples:\n"
                             "  dfx sweep --model gpt2-medium --grid d=32,64 --grid l=8,16 "
                             "--grid cores=2,4 --out build/sweep\n"
                             "  dfx sweep --model tiny --grid psum_entries=64,1024 --io 8:8 "
                             "--dask tcp://127.0.0.1:8786 --out build/sweep" )
  p.add_argument( "--model", required=True, help="preset name or Hugging Face checkpoint directory" )
  p.add_argument( "--grid", action="append", required=True, metavar="KEY=V1,V2,...",
                  help="a DFXConfig field and its values, e.g. --grid d=32,64 (repeatable: the "
                       "sweep is every combination)" )
  p.add_argument( "--set", action="append", default=[], metavar="KEY=VALUE",
                  help="a DFXConfig field for every point, e.g. --set hbm_channels=16 (repeatable)" )
  p.add_argument( "--context", type=positive, default=64,
                  help="the timed generation step's context in tokens, its own included "
                       "(default: %(default)s)" )
  p.add_argument( "--io", default=None, metavar="I:O",
                  help="also estimate a whole generation of I prompt and O output tokens per point "
                       "(as dfx perf --in I --out O)" )
  from ..perf.cli import SAMPLES, add_step_options
  p.add_argument( "--samples", type=positive, default=None,
                  help=f"with --io: steps of each kind timed exactly, the others interpolated "
                       f"(default: {SAMPLES})" )
  add_step_options( p, positive, jobs_default=None )     # None: not given (see --dask)
  p.add_argument( "--dask", default=None, metavar="ADDRESS",
                  help="compute the points on the Dask cluster whose scheduler is at ADDRESS "
                       "instead of --jobs local processes (e.g. tcp://host:8786; needs pip "
                       "install 'pymtl_dfx[sweep]'; the cache should be a directory the workers "
                       "share)" )
  p.add_argument( "--out", required=True, help="output directory (made if missing)" )
  p.add_argument( "--json", action="store_true", help="print sweep.json's record and the files" )
  p.set_defaults( fn=cmd_sweep )


def _progress( enabled ):
  """on_done(k, n) after each point: a line on stderr, on a terminal only."""
  t0 = time.perf_counter()

  def on_done( k, n ):
    dt = time.perf_counter() - t0
    if enabled and dt > 1.0 and sys.stderr.isatty():
      print( f"dfx sweep: point {k}/{n} ({dt:.1f} s)", end="\n" if k == n else "\r",
             file=sys.stderr, flush=True )
  return on_done


def sweep( gpt, points, context, io=None, samples=4, cache_dir=None, jobs=1, dask=None,
           on_done=None, on_start=None ):
  """The sweep.json record's points: each `grid.Point` planned (or "does
  not fit"), its latency and its resource estimate, and the Pareto flags."""
  from .. import perf
  from ..compiler.limits import CompileError
  from .pareto import pareto
  from .resources import estimate_resources
  from .run import run_all
  max_tokens = max( context, sum( io ) if io else 0 )
  models, recs = [], []
  for pt in points:
    rec = dict( label=pt.label, grid=pt.grid, config=pt.dfx.to_dict(), reason=None, error=None,
                step=None, generation=None, resources=estimate_resources( pt.dfx ),
                pareto_lut=False, pareto_dsp=False )
    try:
      models.append( perf.planned( gpt, pt.dfx, pt.dfx.cores, max_tokens ) )
    except CompileError as e:
      models.append( None )
      rec["reason"] = " ".join( str( e ).split() )
    recs.append( rec )
  for rec, lat in zip( recs, run_all( models, context, io, samples, cache_dir, jobs, dask,
                                      on_done, on_start ) ):
    if lat is not None:
      rec.update( lat )
  ok = [ r for r in recs if r["step"] is not None and r["resources"]["within_budget"] ]
  for res, flag in ( ( "LUT", "pareto_lut" ), ( "DSP", "pareto_dsp" ) ):
    for i in pareto( ok, lambda r: r["resources"]["totals"][ res ], lambda r: r["step"]["ms"] ):
      ok[i][ flag ] = True
  return recs


def build( out_dir, gpt, points, context, io=None, samples=4, cache_dir=None, jobs=1, dask=None,
           sets=(), on_done=None, on_start=None ):
  """Runs the sweep and writes sweep.md, sweep.json, pareto.png and
  pareto.svg into out_dir; returns (the sweep.json record, {what: path})."""
  from . import figure, page
  from .resources import SYNTHESISED, U280, U280_SOURCE
  from ..outputs import check_dir
  check_dir( out_dir, "--out" )           # before the sweep, not after it
  t0 = time.perf_counter()
  recs = sweep( gpt, points, context, io, samples, cache_dir, jobs, dask, on_done, on_start )
  os.makedirs( out_dir, exist_ok=True )
  out = dict( model=gpt.name, context=context, io=list( io ) if io else None,
              samples=samples if io else None, set=list( sets ),
              grid=_grid_values( points ),
              budget=U280, budget_source=U280_SOURCE,
              synthesised={ k: dict( DSP=v[0], LUT=v[1], FF=v[2], by=v[3] )
                            for k, v in SYNTHESISED.items() },
              points=recs, seconds=round( time.perf_counter() - t0, 3 ) )
  png = figure.draw( recs, out_dir, title=f"{gpt.name}: one generation step at context {context}" )
  paths = dict( figure=os.path.join( out_dir, png ),
                figure_svg=os.path.join( out_dir, png[ :-4 ] + ".svg" ),
                page=os.path.join( out_dir, "sweep.md" ), json=os.path.join( out_dir, "sweep.json" ) )
  atomic.write_text( paths["page"], page.write( out, png ) )
  atomic.write_text( paths["json"], json.dumps( out, indent=1 ) + "\n" )
  return out, paths


def _grid_values( points ):
  """{key: its values in the sweep, in grid order}."""
  grid = {}
  for p in points:
    for k, v in p.grid.items():
      if v not in grid.setdefault( k, [] ):
        grid[k].append( v )
  return grid


def _io( text ):
  from ..cli import UsageError
  a, colon, b = str( text ).partition( ":" )
  try:
    n_in, n_out = int( a ), int( b )
  except ValueError:
    n_in = n_out = 0
  if not colon or n_in < 1 or n_out < 1:
    raise UsageError( f"--io {text!r}: expected I:O, two positive token counts such as 32:8" )
  return n_in, n_out


def cmd_sweep( args ):
  from ..cli import UsageError, _model_config, check_context
  from ..perf.cli import DEFAULT_JOBS, SAMPLES, step_cache
  from .grid import GridError, parse_grid, points
  gpt = _model_config( args.model )
  try:
    pts = points( parse_grid( args.grid ), args.set )
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
  jobs = args.jobs or DEFAULT_JOBS
  if args.context > gpt.n_positions:
    raise UsageError( f"--context {args.context} is past model {gpt.name!r}'s "
                      f"n_positions={gpt.n_positions}" )
  if io:
    check_context( *io, gpt, new="O (--io I:O)", prompt="I (--io I:O)" )
  cache = step_cache( args ).dir
  cache_dir = None if cache is None else str( cache )
  from ..bounds import perf_tasks
  steps = 1 + ( 2 * samples if io else 0 )     # per point: the step, and --io's samples
  on_start = lambda models: perf_tasks( "dfx sweep", [ ( m, ) for m in models for _ in range( steps ) ],  # noqa: E731
                                        jobs, not args.json )
  # Connected before anything is computed, even when every point is cached:
  # an unreachable address is refused, never silently unused.
  from .run import dask_client
  client = dask_client( args.dask ) if args.dask is not None else None
  try:
    rec, paths = build( args.out, gpt, pts, args.context, io, samples, cache_dir, jobs,
                        client, args.set, _progress( not args.json ), on_start )
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
