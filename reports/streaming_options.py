"""The design options past DFX (`config.DESIGN_FIELDS`), each alone and
cumulatively, on one GPT-2 345M generation step on 4 cards, against the
paper's design (the default configuration) and the HBM roofline.

  python reports/streaming_options.py [--jobs N] [--cards C] [--pos P] [--preset NAME]

The step is the report's breakdown step (context 96, with the logits).  An
option alone is the default with only that field at the `streaming`
profile's value (and the options it needs, `config.DESIGN_NEEDS`); the cumulative rows add the options in `DESIGN_FIELDS`
order up to the profile `streaming`, then `streaming-wide`'s wide MPU and
deep weight FIFO, then its read-ahead and its DMA queue (the whole
`streaming-wide`).  The roofline is the step's
weights (`report.compute.weight_bytes`) over the cards' HBM bandwidth; its
share is roofline / step.  Steps come from the performance model (CL-exact)
through the step cache.  The tables go to stdout and
build/reports/streaming_options.md; the roofline figure (each op class's
cycles against the cycles its HBM bytes take at the full bandwidth, the
default and the profile) to build/reports/streaming_roofline.png / .svg.
"""

import argparse
import pathlib
import sys

ROOT = pathlib.Path( __file__ ).resolve().parent.parent
sys.path.insert( 0, str( ROOT ) )

from pymtl_dfx import profiles  # noqa: E402
from pymtl_dfx.atomic import write_text  # noqa: E402
from pymtl_dfx.config import DESIGN_FIELDS, DESIGN_NEEDS  # noqa: E402
from pymtl_dfx.perf.sampled import StepCache, default_cache_dir, time_many  # noqa: E402
from pymtl_dfx.report import compute, figures  # noqa: E402
from pymtl_dfx.report.plan import PAPER  # noqa: E402

PROFILE, WIDE = "streaming", "streaming-wide"


def _sets( d ):
  return [ f"{k}={v}" for k, v in d.items() ]


def rows():
  """(name, group, --set list): the default, each option alone, then the
  options added one by one (the last is the profile `streaming`); then the
  wide MPU and its deeper weight FIFO (`streaming-wide`'s other values)
  alone and on `streaming`, without and with the read-ahead (the last row
  is `streaming-wide`)."""
  on, wide = profiles.values( PROFILE ), profiles.values( WIDE )
  options = [ k for k in DESIGN_FIELDS if k in on ]
  out = [ ( "default (the paper's design)", "-", [] ) ]
  for k in options:       # with the options it needs (`config.DESIGN_NEEDS`)
    alone = { **DESIGN_NEEDS.get( k, {} ), k: on[ k ] }
    out.append( ( ", ".join( _sets( alone ) ), "alone", _sets( alone ) ) )
  extra = { k: v for k, v in wide.items() if k not in on }
  ahead = { k: v for k, v in extra.items() if k in DESIGN_FIELDS }
  mpu = { k: v for k, v in extra.items() if k not in DESIGN_FIELDS }
  out.append( ( ", ".join( _sets( extra ) ), "alone", _sets( extra ) ) )
  for i in range( 2, len( options ) + 1 ):
    out.append( ( "+ " + options[ i - 1 ], "cumulative",
                  [ f"{k}={on[ k ]}" for k in options[ :i ] ] ) )
  out[-1] = ( f"{out[-1][0]}: profile `{PROFILE}`", out[-1][1], out[-1][2] )
  out.append( ( "+ " + ", ".join( _sets( mpu ) ), "cumulative", _sets( { **on, **mpu } ) ) )
  keys = list( ahead )
  for i, k in enumerate( keys ):      # the read-ahead, then the DMA queue
    label = f"+ {k}={ahead[ k ]}" + ( f": profile `{WIDE}`" if i == len( keys ) - 1 else "" )
    out.append( ( label, "cumulative",
                  _sets( { **on, **mpu, **{ j: ahead[ j ] for j in keys[ :i + 1 ] } } ) ) )
  return out


def main( argv=None ):
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--jobs", type=int, default=2 )
  ap.add_argument( "--cards", type=int, default=4 )
  ap.add_argument( "--pos", type=int, default=PAPER.breakdown_pos )
  ap.add_argument( "--preset", default="gpt2-medium" )
  args = ap.parse_args( argv )
  table = rows()
  ms = [ compute.model( PAPER, args.preset, args.cards, s ) for _, _, s in table ]
  recs = time_many( [ ( m, args.pos % m.gpt.vocab_size, args.pos, True ) for m in ms ],
                    StepCache( default_cache_dir() ), args.jobs )
  roof_ms = compute.weight_bytes( ms[0].gpt ) / args.cards / ( ms[0].dfx.hbm_gbps * 1e9 ) * 1e3
  base = recs[0]["cycles"]
  lines = [ f"{args.preset}, {args.cards} cards, one step at context {args.pos + 1} with the "
            f"logits; HBM roofline {roof_ms:.3f} ms", "",
            "| design | options | cycles | ms | against the default | roofline share |",
            "|---|---|---|---|---|---|" ]
  for ( name, group, _ ), m, r in zip( table, ms, recs ):
    c = r["cycles"]
    lines.append( f"| {name} | {group} | {c:,} | {m.dfx.ms( c ):.3f} | {c - base:+,} "
                  f"({100 * ( c - base ) / base:+.1f} %) | {100 * roof_ms / m.dfx.ms( c ):.1f} % |" )
  # the default, `streaming` and `streaming-wide`
  picks = [ 0, next( i for i, r in enumerate( table ) if r[0].endswith( f"`{PROFILE}`" ) ),
            len( table ) - 1 ]
  names = [ "default", PROFILE, WIDE ]
  cls = [ recs[i]["classes"] for i in picks ]
  classes = sorted( set().union( *cls ), key=lambda k: -cls[0].get( k, 0 ) )
  roof = compute.class_roofline( ms[0], args.pos )
  lines += [ "", "Cycles by op class, the default against the two profiles, and the cycles "
             "the class's HBM bytes take at the full bandwidth (the busiest card; the read-ahead "
             "charges a weight read's wait to its matrix):", "",
             "| op class | " + " | ".join( names ) + " | HBM roofline | share, "
             f"`{WIDE}` |", "|---|---|---|---|---|---|" ]
  for k in classes:
    v = [ c.get( k, 0 ) for c in cls ]
    rf = roof.get( k, 0 )
    share = f"{100 * rf / v[-1]:.0f} %" if v[-1] and rf else "-"
    lines.append( f"| {k} | " + " | ".join( f"{x:,}" for x in v ) + f" | {rf:,.0f} | {share} |" )
  text = "\n".join( lines ) + "\n"
  print( text, end="" )
  out = ROOT / "build" / "reports"
  out.mkdir( parents=True, exist_ok=True )
  write_text( str( out / "streaming_options.md" ), text )
  png = figures.class_roofline( [ ( "default (the paper's design)", cls[0] ),
                                  ( f"profile `{PROFILE}`", cls[1] ), ( f"profile `{WIDE}`", cls[2] ) ],
                                roof, str( out ),
                                "streaming_roofline",
                                f"{args.preset}, {args.cards} cards, context {args.pos + 1}" )
  print( f"figure: {out / png}" )


if __name__ == "__main__":
  main()
