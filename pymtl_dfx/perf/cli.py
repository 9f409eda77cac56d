"""`dfx perf`: the cycles of a generation on the modelled appliance, from
`pymtl_dfx.perf` (CL's cycles exactly, without data).

  dfx perf --model PRESET|DIR --cores N --in I --out O [--set key=value ...]
           [--samples N | --exact] [--jobs N] [--cache DIR | --no-cache] [--json]

I prompt tokens (the summarization stage: I steps, the logits after the
last), then O output tokens (O - 1 more steps, the generation stage), as
`dfx generate` runs them.  A step's cycles do not depend on the token ids
except through the embedding row's DDR alignment; the token of position k
is k mod the vocabulary.  By default `--samples` steps of each kind are
timed exactly and the others interpolated (`perf.sampled`); `--exact`
times every step.
"""

import json
import os
import sys
import time

# Steps of each kind that --samples times exactly unless told otherwise.
SAMPLES = 4
# Local processes timing steps unless --jobs says otherwise.
DEFAULT_JOBS = os.cpu_count() or 1


def add_parser( sub, common, positive, model_config, dfx_config ):
  p = sub.add_parser( "perf", parents=[ common ],
                      help="cycles and latency of a generation (CL-exact, no data)",
                      epilog="example: dfx perf --model gpt2 --cores 4 --in 32 --out 8 --json" )
  p.add_argument( "--model", required=True, help="preset name or Hugging Face checkpoint directory" )
  p.add_argument( "--cores", type=positive, default=None, help="FPGAs on the ring (default 1)" )
  p.add_argument( "--in", dest="n_in", type=positive, required=True, help="prompt tokens" )
  p.add_argument( "--out", dest="n_out", type=positive, required=True, help="output tokens" )
  p.add_argument( "--set", action="append", default=[], metavar="KEY=VALUE",
                  help="a DFXConfig field, e.g. --set hbm_channels=16 (repeatable)" )
  # One or the other: --samples has no default here (None: SAMPLES), so
  # that an explicit --samples with --exact is refused, not ignored.
  g = p.add_mutually_exclusive_group()
  g.add_argument( "--samples", type=positive, default=None,
                  help=f"steps of each kind (prompt, with logits) timed exactly; the others are "
                       f"interpolated (default: {SAMPLES})" )
  g.add_argument( "--exact", action="store_true", help="time every step exactly" )
  add_step_options( p, positive )
  p.add_argument( "--json", action="store_true", help="print one JSON object" )
  p.set_defaults( fn=lambda args: cmd_perf( args, model_config, dfx_config ) )


def add_step_options( p, positive, jobs_default=DEFAULT_JOBS ):
  """--jobs, --cache, --no-cache: how timed steps are computed and kept
  (every command that times steps).  --cache and --no-cache exclude each
  other.  `jobs_default=None` lets a command tell an explicit --jobs from
  none (argparse's exclusive groups cannot: `--jobs 2` is the default on
  2 CPUs); it then uses `DEFAULT_JOBS` itself."""
  p.add_argument( "--jobs", type=positive, default=jobs_default,
                  help=f"local processes timing steps, one per CPU (default: {DEFAULT_JOBS})" )
  g = p.add_mutually_exclusive_group()
  g.add_argument( "--cache", default=None, metavar="DIR",
                  help="where timed steps are kept (default: $DFX_PERF_CACHE or "
                       "~/.cache/pymtl_dfx/perf)" )
  g.add_argument( "--no-cache", action="store_true", help="keep no timed steps" )


def cache_dir( args ):
  """The step cache's directory the step options ask for (None: no cache);
  an empty --cache is kept so that the output check refuses it."""
  from .sampled import default_cache_dir
  if args.no_cache:
    return None
  return args.cache if args.cache is not None else str( default_cache_dir() )


def step_cache( args ):
  """The StepCache the step options ask for."""
  from .sampled import StepCache
  return StepCache( cache_dir( args ) )


def progress( what, enabled=True ):
  """A progress line on stderr for runs slower than a second, on a terminal
  only (and not with --json: `enabled`): on_done(k, n) after each timed step."""
  t0 = time.perf_counter()

  def on_done( k, n ):
    dt = time.perf_counter() - t0
    if enabled and dt > 1.0 and sys.stderr.isatty():
      end = "\n" if k == n else "\r"
      print( f"{what}: timed step {k}/{n} ({dt:.1f} s)", end=end, file=sys.stderr, flush=True )
  return on_done


def announce_steps( prog, jobs, enabled ):
  """on_start(tasks) for `sampled.time_many`: the estimate of timing them
  (`bounds.perf_tasks`) on stderr when it is minutes or more."""
  from ..bounds import perf_tasks
  return lambda tasks: perf_tasks( prog, tasks, jobs, enabled )


def report( res, dfx, n_in, n_out ):
  """The JSON record: cycles, ms, tokens/s (output tokens over end-to-end
  latency, the paper's definition), ms per step per stage, breakdown."""
  ms = dfx.ms
  steps = { "summarization": n_in, "generation": n_out - 1 }
  total_ms = ms( res["cycles"] )
  return dict(
    cycles=res["cycles"], ms=total_ms,
    tokens_per_s=n_out / ( total_ms / 1e3 ) if total_ms else None,
    ms_per_step={ k: ( ms( v ) / steps[k] if steps[k] else None )
                  for k, v in res["stage_cycles"].items() },
    breakdown=dict( per_op_class=res["class_cycles"], per_stage=res["stage_cycles"],
                    per_step=res["step_cycles"], unit_busy=res["unit_busy"],
                    unit_stalls=res["unit_stalls"] ),
    timed_steps=res["timed_steps"], interpolated_steps=res["interpolated_steps"] )


def cmd_perf( args, model_config, dfx_config ):
  from . import planned
  from .sampled import estimate
  from ..cli import check_context
  gpt = model_config( args.model )
  dfx = dfx_config( args )
  check_context( args.n_in, args.n_out, gpt, new="--out", prompt="--in" )
  model = planned( gpt, dfx, dfx.cores, max_tokens=args.n_in + args.n_out )
  cache = step_cache( args )
  t0 = time.perf_counter()
  res = estimate( model, args.n_in, args.n_out, None if args.exact else args.samples or SAMPLES,
                  cache=cache, jobs=args.jobs, on_done=progress( "dfx perf", not args.json ),
                  on_start=announce_steps( "dfx perf", args.jobs, not args.json ) )
  rec = report( res, dfx, args.n_in, args.n_out )
  rec.update( model=gpt.name, cores=dfx.cores, n_in=args.n_in, n_out=args.n_out,
              seconds=round( time.perf_counter() - t0, 3 ) )
  if args.json:
    print( json.dumps( rec, indent=2 ) )
    return
  shares = ", ".join( f"{k} {100 * v / res['cycles']:.1f} %"
                      for k, v in res["class_cycles"].items() if v )
  print( f"{gpt.name} on {dfx.cores} core(s), {args.n_in}:{args.n_out}: {res['cycles']:,} cycles, "
         f"{rec['ms']:.3f} ms at {dfx.clock_mhz} MHz, {rec['tokens_per_s']:.2f} tokens/s; {shares}" )
  n = len( res["interpolated_steps"] )
  if n:
    print( f"{len( res['timed_steps'] )} of {n + len( res['timed_steps'] )} steps timed exactly, "
           f"{n} interpolated between them (--exact: every step)" )
