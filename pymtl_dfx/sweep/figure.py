"""The sweep's figure: ms per step against LUTs and against DSPs per card,
the Pareto points joined, the points over the U280 budget crossed."""

import os

import matplotlib

matplotlib.use( "Agg" )
import matplotlib.pyplot as plt   # noqa: E402
import matplotlib.ticker          # noqa: E402

from ..atomic import atomic_path  # noqa: E402
from ..resources.estimate import U280       # noqa: E402

AXES = ( ( "LUT", "pareto_lut" ), ( "DSP", "pareto_dsp" ) )


def _thousands( x, _pos ):
  return f"{x / 1e3:,.0f}k" if x >= 1e4 else f"{x:,.0f}"


def draw( points, out_dir, name="pareto", title=None ):
  """Writes NAME.png and NAME.svg (each whole, through a temporary file);
  returns the PNG's file name.  `points`: the sweep's records."""
  fig, axes = plt.subplots( 1, 2, figsize=( 12, 4.8 ) )
  ok = [ p for p in points if p["step"] is not None ]
  for ax, ( res, flag ) in zip( axes, AXES ):
    inside = [ p for p in ok if p["resources"]["within_budget"] ]
    over = [ p for p in ok if not p["resources"]["within_budget"] ]
    front = sorted( ( p for p in inside if p[ flag ] ), key=lambda p: p["resources"]["totals"][ res ] )
    rest = [ p for p in inside if not p[ flag ] ]
    xs = lambda ps: [ p["resources"]["totals"][ res ] for p in ps ]   # noqa: E731
    ys = lambda ps: [ p["step"]["ms"] for p in ps ]                   # noqa: E731
    if front:
      ax.step( xs( front ), ys( front ), "-", where="post", color="C0", alpha=0.5 )
      ax.plot( xs( front ), ys( front ), "o", color="C0", label="Pareto (within the U280)" )
    if rest:
      ax.plot( xs( rest ), ys( rest ), "o", markerfacecolor="none", color="0.4",
               label="within the U280" )
    if over:
      ax.plot( xs( over ), ys( over ), "x", color="C3", markersize=8,
               label="over the U280 budget" )
    at = {}   # points drawn on the same spot share one label
    for p in ok:
      at.setdefault( ( p["resources"]["totals"][ res ], p["step"]["ms"] ), [] ).append( p["label"] )
    for xy, labels in at.items():
      ax.annotate( "\n".join( labels ), xy, textcoords="offset points", xytext=( 4, 3 ),
                   fontsize=6 )
    ax.axvline( U280[ res ], linestyle="--", color="C3", alpha=0.6 )
    ax.text( U280[ res ], 0, f"U280: {U280[ res ]:,} ", color="C3", fontsize=7,
             va="bottom", ha="right", rotation=90 )
    ax.set_xlabel( f"{res} per card (estimate from Yosys unit numbers)" )
    ax.set_ylabel( "ms per generation step" )
    ax.xaxis.set_major_formatter( matplotlib.ticker.FuncFormatter( _thousands ) )
    ax.set_xlim( left=0 )
    ax.set_ylim( bottom=0, top=1.15 * max( [ p["step"]["ms"] for p in ok ] or [ 1 ] ) )
    ax.grid( alpha=0.3 )
    if ax.get_legend_handles_labels()[0]:
      ax.legend( fontsize=7, loc="lower left" )
  if title:
    fig.suptitle( title, fontsize=10 )
  for ext in ( "png", "svg" ):
    with atomic_path( os.path.join( out_dir, f"{name}.{ext}" ) ) as tmp:
      fig.savefig( tmp, format=ext, dpi=130, bbox_inches="tight" )
  plt.close( fig )
  return f"{name}.png"
