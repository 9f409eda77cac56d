"""Each sourced mechanism of DFX as built (the `paper` profile) alone, on one
GPT-2 345M generation step on 4 cards, against the default configuration;
then the calibration's fitted parameters alone and the `calibrated` profile.

  python reports/dfx_mechanisms.py [--jobs N] [--cards C] [--pos P]

The step is the report's breakdown step (context 96, with the logits).  A
mechanism alone is the default with only that mechanism's `paper` values
(`--set`), so the rows show what each one does to the step by itself; the
last row is the whole profile.  Steps come from the performance model
(CL-exact) through the step cache.  The table goes to stdout and
build/reports/dfx_mechanisms.md.
"""

import argparse
import pathlib
import sys

ROOT = pathlib.Path( __file__ ).resolve().parent.parent
sys.path.insert( 0, str( ROOT ) )

from pymtl_dfx import profiles  # noqa: E402
from pymtl_dfx.atomic import write_text  # noqa: E402
from pymtl_dfx.perf.sampled import StepCache, default_cache_dir, time_many  # noqa: E402
from pymtl_dfx.report import compute  # noqa: E402
from pymtl_dfx.report.plan import PAPER  # noqa: E402

PRESET = "gpt2-medium"


def mechanisms():
  """(name, --set list): each group of the `paper` profile's values that
  is one mechanism, alone."""
  own = profiles.get( "paper" ).values
  link = profiles.values( "aurora-ring" )
  sets = lambda d: [ f"{k}={v}" for k, v in d.items() ]
  return [
    ( "default (UDP ring, 450 MHz memory interface, idle HBM latency, host per step)", [] ),
    ( "Aurora 64B/66B ring", sets( link ) ),
    ( "memory interface at 410 MHz", sets( { "hbm_axi_mhz": own["hbm_axi_mhz"] } ) ),
    ( "HBM refresh (tRFC 260 ns every 3.9 us)",
      sets( { k: own[k] for k in ( "hbm_refresh_ns", "hbm_refresh_interval_ns" ) } ) ),
    ( "loaded HBM latency (289 ns)", sets( { "hbm_latency_ns": own["hbm_latency_ns"] } ) ),
    ( "no host transfer per step", sets( { "host_step_us": own["host_step_us"] } ) ),
    ( "all of them: profile `paper`", sets( profiles.values( "paper" ) ) ),
  ] + ( [
    ( f"the calibration's parameters alone ({', '.join( sets( cal ) )})", sets( cal ) ),
    ( "profile `calibrated`", sets( profiles.values( "calibrated" ) ) ),
  ] if ( cal := _calibration() ) else [] )


def _calibration():
  """The fitted parameters that differ from their defaults, {} without a fit."""
  from pymtl_dfx.calibration import fitted, identity
  rec = fitted()
  return { k: v for k, v in rec["values"].items() if v != identity()[ k ] } if rec else {}


def main( argv=None ):
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--jobs", type=int, default=2 )
  ap.add_argument( "--cards", type=int, default=4 )
  ap.add_argument( "--pos", type=int, default=PAPER.breakdown_pos )
  args = ap.parse_args( argv )
  rows = mechanisms()
  ms = [ compute.model( PAPER, PRESET, args.cards, s ) for _, s in rows ]
  recs = time_many( [ ( m, args.pos % m.gpt.vocab_size, args.pos, True ) for m in ms ],
                    StepCache( default_cache_dir() ), args.jobs )
  base = recs[0]["cycles"]
  lines = [ f"GPT-2 345M, {args.cards} cards, one step at context {args.pos + 1} with the logits",
            "", "| mechanism | cycles | ms | against the default | sync | host |",
            "|---|---|---|---|---|---|" ]
  for ( name, _ ), m, r in zip( rows, ms, recs ):
    c = r["cycles"]
    lines.append( f"| {name} | {c:,} | {m.dfx.ms( c ):.3f} | {c - base:+,} ({100 * ( c - base ) / base:+.1f} %) "
                  f"| {r['classes'].get( 'sync', 0 ):,} | {r['classes'].get( 'host', 0 ):,} |" )
  text = "\n".join( lines ) + "\n"
  print( text, end="" )
  out = ROOT / "build" / "reports"
  out.mkdir( parents=True, exist_ok=True )
  write_text( str( out / "dfx_mechanisms.md" ), text )


if __name__ == "__main__":
  main()
