"""The report's figures (matplotlib, PNG and SVG) from `compute.results`."""

import os

import matplotlib

matplotlib.use( "Agg" )
import matplotlib.pyplot as plt   # noqa: E402
import matplotlib.ticker          # noqa: E402,F401

from .. import atomic                          # noqa: E402
from ..compiler.stats import CYCLE_CLASSES   # noqa: E402
from ..config import cycles_to_ms            # noqa: E402

COLORS = dict( zip( CYCLE_CLASSES, plt.get_cmap( "tab10" ).colors ) )
SIZE_MARKERS = { 32: "o", 64: "s", 128: "^" }


def save( fig, out_dir, name ):
  """Writes NAME.png and NAME.svg (each whole or not at all); returns the
  PNG's file name."""
  for ext in ( "png", "svg" ):
    with atomic.atomic_path( os.path.join( out_dir, f"{name}.{ext}" ) ) as tmp:
      fig.savefig( tmp, format=ext, dpi=130, bbox_inches="tight" )
  plt.close( fig )
  return f"{name}.png"


def breakdown( res, out_dir, clock_mhz ):
  """(a) ms of one generation step per op class, stacked, per model size
  and card count."""
  rows = list( res["breakdown"].values() )
  fig, ax = plt.subplots( figsize=( 9, 4.8 ) )
  labels = [ f"{r['size']}\n{r['cards']} card{'s' if r['cards'] > 1 else ''}" for r in rows ]
  bottom = [ 0.0 ] * len( rows )
  for cls in CYCLE_CLASSES:
    ms = [ cycles_to_ms( r["classes"].get( cls, 0 ), clock_mhz ) for r in rows ]
    if any( ms ):
      ax.bar( labels, ms, bottom=bottom, label=cls, color=COLORS[ cls ] )
      bottom = [ b + v for b, v in zip( bottom, ms ) ]
  for x, r in enumerate( rows ):
    ax.text( x, bottom[x], f"{r['ms']:.3g}", ha="center", va="bottom", fontsize=8 )
  ax.set_ylabel( "ms per generation step" )
  ax.set_title( f"Where a generation step's time goes (context {res['labels']['context']} "
                "tokens, modelled)" )
  ax.legend( title="op class", fontsize=8, loc="upper left", bbox_to_anchor=( 1.01, 1 ) )
  ax.grid( axis="y", alpha=0.3 )
  return save( fig, out_dir, "breakdown" )


def scaling( res, out_dir ):
  """(b) tokens/s of GPT-2 345M at 64:64 on 1, 2 and 4 cards, with the paper's."""
  rows = sorted( res["scaling"].items() )
  cards = [ c for c, _ in rows ]
  fig, ax = plt.subplots( figsize=( 6, 4.2 ) )
  ax.plot( cards, [ r["tokens_per_s"] for _, r in rows ], "o-", label="modelled" )
  ax.plot( cards, [ r["paper_tokens_per_s"] for _, r in rows ], "s--", label="DFX paper" )
  for c, r in rows:
    ax.annotate( f"{r['tokens_per_s']:.0f}", ( c, r["tokens_per_s"] ), textcoords="offset points",
                 xytext=( 6, -4 ), fontsize=8 )
  ax.set_xticks( cards )
  ax.set_xlabel( "cards (U280 FPGAs on the ring)" )
  ax.set_ylabel( "tokens/s (output tokens / end-to-end latency)" )
  ax.set_title( f"{res['labels']['scaling']} (input:output tokens)" )
  ax.set_ylim( bottom=0 )
  ax.legend()
  ax.grid( alpha=0.3 )
  return save( fig, out_dir, "scaling" )


def xl_latency( res, out_dir ):
  """(c) end-to-end latency of GPT-2 1.5B on 4 cards against output
  tokens, one curve per input length, with the paper's nine points."""
  fig, ax = plt.subplots( figsize=( 7, 4.6 ) )
  pts = list( res["xl"].values() )
  for n_in in sorted( { p["n_in"] for p in pts } ):
    mine = sorted( ( p for p in pts if p["n_in"] == n_in ), key=lambda p: p["n_out"] )
    line, = ax.plot( [ p["n_out"] for p in mine ], [ p["ms"] for p in mine ], "-",
                     marker=SIZE_MARKERS.get( n_in, "o" ), markersize=3,
                     label=f"modelled, {n_in} input tokens" )
    paper = [ p for p in mine if p["paper_ms"] is not None ]
    if paper:
      ax.plot( [ p["n_out"] for p in paper ], [ p["paper_ms"] for p in paper ], linestyle="none",
               marker=SIZE_MARKERS.get( n_in, "o" ), markersize=8, markerfacecolor="none",
               color=line.get_color(), label=f"DFX paper, {n_in} input tokens" )
  ax.set_xscale( "log", base=2 )
  outs = sorted( { p["n_out"] for p in pts } )
  ax.set_xticks( outs, [ str( o ) for o in outs ] )
  ax.xaxis.set_minor_locator( matplotlib.ticker.NullLocator() )
  ax.set_xlabel( "output tokens" )
  ax.set_ylabel( "end-to-end latency (ms)" )
  ax.set_title( f"{res['labels']['xl']} on {res['labels']['xl_cards']} cards" )
  ax.legend( fontsize=7 )
  ax.grid( alpha=0.3, which="both" )
  return save( fig, out_dir, "xl_latency" )


def step_ms( res, out_dir ):
  """(d) ms per step against context length, at the timed steps."""
  fig, ax = plt.subplots( figsize=( 7, 4.4 ) )
  L = res["labels"]
  series = [ ( f"{L['xl']}, {L['xl_cards']} cards", res["xl_steps"] ) ]
  series += [ ( f"{L['scaling'].split()[0]}, {c} card{'s' if c > 1 else ''}", r["steps"] )
              for c, r in sorted( res["scaling"].items() ) ]
  for label, steps in series:
    for want, style in ( ( True, "o-" ), ( False, "x:" ) ):
      mine = sorted( ( s for s in steps if s["logits"] == want ), key=lambda s: s["pos"] )
      if mine:
        ax.plot( [ s["pos"] + 1 for s in mine ], [ s["ms"] for s in mine ], style,
                 label=f"{label}, {'with' if want else 'no'} logits" )
  ax.set_xlabel( "context length (tokens, including the step's)" )
  ax.set_ylabel( "ms per step" )
  ax.set_title( "One token step against context (timed steps)" )
  ax.set_ylim( bottom=0 )
  ax.legend( fontsize=7 )
  ax.grid( alpha=0.3 )
  return save( fig, out_dir, "step_ms" )


def _stack( ax, xs, rows, width, clock_mhz, hatch=None, labelled=True ):
  """Bars of rows' ms per op class, stacked, at xs; returns their tops."""
  bottom = [ 0.0 ] * len( rows )
  for cls in CYCLE_CLASSES:
    ms = [ cycles_to_ms( r["classes"].get( cls, 0 ), clock_mhz ) for r in rows ]
    if any( ms ):
      ax.bar( xs, ms, width, bottom=bottom, color=COLORS[ cls ], hatch=hatch,
              edgecolor="white" if hatch else None, label=cls if labelled else None )
      bottom = [ b + v for b, v in zip( bottom, ms ) ]
  return bottom


def design_breakdown( res, out_dir, clock_mhz ):
  """(a) beside the paper's design: per model size and card count, the
  step of the paper's design (hatched, left) and of this design (right),
  stacked by op class, with the HBM roofline of the step's weights."""
  keys = [ k for k in res["breakdown"] if k in res["paper_design"] ]
  mine = [ res["breakdown"][ k ] for k in keys ]
  base = [ res["paper_design"][ k ] for k in keys ]
  fig, ax = plt.subplots( figsize=( 10, 4.8 ) )
  w = 0.38
  xs = range( len( keys ) )
  tops_b = _stack( ax, [ x - w / 2 for x in xs ], base, w, clock_mhz, hatch="//", labelled=False )
  tops_m = _stack( ax, [ x + w / 2 for x in xs ], mine, w, clock_mhz )
  for x, r, b, tb, tm in zip( xs, mine, base, tops_b, tops_m ):
    ax.text( x - w / 2, tb, f"{b['ms']:.3g}", ha="center", va="bottom", fontsize=7 )
    ax.text( x + w / 2, tm, f"{r['ms']:.3g}", ha="center", va="bottom", fontsize=7 )
    ax.hlines( r["roofline_ms"], x - w, x + w, colors="k", linestyles=":",
               label="HBM roofline of the weights" if x == 0 else None )
  ax.set_xticks( list( xs ), [ f"{r['size']}\n{r['cards']} card{'s' if r['cards'] > 1 else ''}"
                               for r in mine ] )
  ax.set_ylabel( "ms per generation step" )
  what = f"profile `{res['profile']}`" if res.get( "profile" ) else "this design"
  ax.set_title( f"The paper's design (hatched, left) against {what} (right), context "
                f"{res['labels']['context']} tokens, modelled" )
  ax.legend( title="op class", fontsize=8, loc="upper left", bbox_to_anchor=( 1.01, 1 ) )
  ax.grid( axis="y", alpha=0.3 )
  return save( fig, out_dir, "design_breakdown" )


def class_roofline( series, roof, out_dir, name, what ):
  """Bars of each op class's cycles per series ([(label, {class: cycles})])
  beside the cycles its HBM bytes take at the full bandwidth (`roof`)."""
  names = [ k for k in CYCLE_CLASSES if any( c.get( k, 0 ) for _, c in series ) ]
  fig, ax = plt.subplots( figsize=( 9, 4.4 ) )
  w = 0.8 / ( len( series ) + 1 )
  xs = range( len( names ) )
  for i, ( label, classes ) in enumerate( series ):
    ax.bar( [ x + i * w for x in xs ], [ classes.get( k, 0 ) for k in names ], w, label=label )
  ax.bar( [ x + len( series ) * w for x in xs ], [ roof.get( k, 0 ) for k in names ], w,
          label="HBM roofline of its bytes", color="0.6", hatch="//" )
  ax.set_xticks( [ x + w * len( series ) / 2 for x in xs ], names )
  ax.set_ylabel( "cycles per generation step" )
  ax.set_title( f"Each op class against the roofline of its HBM bytes ({what}, modelled)" )
  ax.legend( fontsize=8 )
  ax.grid( axis="y", alpha=0.3 )
  return save( fig, out_dir, name )


def roofline_key( res ):
  """The breakdown entry the roofline figure shows: the first model size
  on the most cards."""
  rows = res["breakdown"]
  first = next( iter( rows.values() ) )["size"]
  return max( ( k for k in res["class_roofline"] if rows[ k ]["size"] == first ),
              key=lambda k: rows[ k ]["cards"] )


def roofline( res, out_dir ):
  """The op classes of the breakdown step of the first model size on the
  most cards against their bytes' roofline, this design and (when a
  design option is on) the paper's."""
  key = roofline_key( res )
  series = []
  if key in res.get( "paper_design", {} ):
    series.append( ( "the paper's design", res["paper_design"][ key ]["classes"] ) )
  series.append( ( f"profile `{res['profile']}`" if res.get( "profile" ) else "this design",
                   res["breakdown"][ key ]["classes"] ) )
  return class_roofline( series, res["class_roofline"][ key ], out_dir, "roofline",
                         f"{key}, context {res['labels']['context']}" )
