"""`dfx perf`: the cycles of a generation on the modelled appliance, from
`pymtl_dfx.perf` (CL's cycles exactly, without data).

  dfx perf --model PRESET|DIR --cores N --in I --out O [--profile NAME] [--set key=value ...]
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
import time

from . import common
from .common import SAMPLES, check_context, dfx_config, model_config, para, positive


def add_parser( add ):
  p = add( "perf",
           help="cycles and latency of a generation (CL-exact, no data)",
           description=para( "Cycles, latency and tokens/s of a generation of --in "
                             "prompt and --out output tokens, CL-exact without data.",
                             f"GPT-2 presets: {common.presets_text()}." ),
           epilog="example:\n  dfx perf --model gpt2 --cores 4 --in 32 --out 8 --json\n\n"
                  + common.profile_descriptions() )
  p.add_argument( "--model", required=True, help="preset name or Hugging Face checkpoint directory" )
  p.add_argument( "--cores", type=positive, default=None, help="FPGAs on the ring (default 1)" )
  p.add_argument( "--in", dest="n_in", type=positive, required=True, help="prompt tokens" )
  p.add_argument( "--out", dest="n_out", type=positive, required=True, help="output tokens" )
  common.add_set( p, "a DFXConfig field, e.g. --set hbm_channels=16 (repeatable)",
                  described_here=True )
  # One or the other: --samples has no default here (None: SAMPLES), so
  # that an explicit --samples with --exact is refused, not ignored.
  g = p.add_mutually_exclusive_group()
  g.add_argument( "--samples", type=positive, default=None,
                  help=f"steps of each kind (prompt, with logits) timed exactly; the others are "
                       f"interpolated (default: {SAMPLES})" )
  g.add_argument( "--exact", action="store_true", help="time every step exactly" )
  common.add_step_options( p )
  common.add_json( p, "print one JSON object" )


def run( args ):
  from ..perf.summary import generation
  gpt = model_config( args.model )
  dfx = dfx_config( args )
  check_context( args.n_in, args.n_out, gpt, new="--out", prompt="--in" )
  t0 = time.perf_counter()
  rec = generation( gpt, dfx, args.n_in, args.n_out,
                    None if args.exact else args.samples or SAMPLES,
                    cache=common.step_cache( args ), jobs=args.jobs,
                    on_done=common.Progress( "dfx perf", not args.json ).counter( "timed step" ),
                    on_start=common.announce_steps( "dfx perf", args.jobs, not args.json ) )
  rec.update( model=gpt.name, cores=dfx.cores, n_in=args.n_in, n_out=args.n_out,
              profile=args.profile, set=args.set, seconds=round( time.perf_counter() - t0, 3 ) )
  if args.json:
    print( json.dumps( rec, indent=2 ) )
    return
  shares = ", ".join( f"{k} {100 * v / rec['cycles']:.1f} %"
                      for k, v in rec["breakdown"]["per_op_class"].items() if v )
  profile = f" (profile {args.profile})" if args.profile else ""
  print( f"{gpt.name} on {dfx.cores} core(s){profile}, {args.n_in}:{args.n_out}: {rec['cycles']:,} cycles, "
         f"{rec['ms']:.3f} ms at {dfx.clock_mhz} MHz, {rec['tokens_per_s']:.2f} tokens/s; {shares}" )
  n = len( rec["interpolated_steps"] )
  if n:
    print( f"{len( rec['timed_steps'] )} of {n + len( rec['timed_steps'] )} steps timed exactly, "
           f"{n} interpolated between them (--exact: every step)" )
