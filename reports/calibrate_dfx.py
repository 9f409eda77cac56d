"""Fits the `calibrated` profile's parameters (`pymtl_dfx.calibration.PARAMS`,
at most three, each one mechanism with a range stated beforehand) on the
DFX paper's GPT-2 345M 64:64 tokens/s on 1, 2 and 4 cards, and nothing else.

  python reports/calibrate_dfx.py [--jobs N] [--iterations K] [--tol PCT] [--write]

The model is the `paper` profile (every value sourced) with the parameters
on top.  A full-size step costs a CPU minute or less, so the fit takes few
evaluations: each parameter acts nearly linearly on a generation's
latency, so its slope on each card count is measured once from one prompt
step and one generated step (at positions 31 and 95, weighted by the
generation's 64 prompt and 63 generated steps), the 3 x 3 system is solved
for the latency of the paper's points, and the whole generations are timed
at the solution (the report's sampled estimate).  If a point is off by more
than --tol, the step is repeated with the same slopes (a chord iteration).
Each step is a bounded least-squares solve (`calibration.chord_fit`): a
parameter the solve takes out of its range is fixed at that edge and the
others re-solved, an integer parameter is rounded and the others re-solved
with it fixed.  A value at an edge is said so in the record: it is then
evidence that the mechanism is wrong.

With --write the result goes to pymtl_dfx/calibration.json (the profile
reads it); it records the values, the ranges, the slopes, the fitted
points' errors, the number of timed steps and the date.  A fit whose
ranges differ from the written one's must say why (--supersede WHY); the
written fit is then kept in the record's previous_fits, so a range moved
after a fit is never hidden.  The held-out
validation (the 1.5B latencies, the breakdown shares) is `dfx report`'s.
"""

import argparse
import datetime
import json
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path( __file__ ).resolve().parent.parent
sys.path.insert( 0, str( ROOT ) )

from pymtl_dfx import atomic, calibration  # noqa: E402
from pymtl_dfx.perf.sampled import StepCache, default_cache_dir, estimate, time_many  # noqa: E402
from pymtl_dfx.report import compute  # noqa: E402
from pymtl_dfx.report.plan import PAPER  # noqa: E402

BASE = "paper"
SLOPE_STEPS = ( ( 31, False ), ( 95, True ) )    # one prompt step, one generated step


class Fit:

  def __init__( s, jobs, cache ):
    s.jobs, s.cache, s.timed = jobs, cache, 0
    s.name, s.n_in, s.n_out = PAPER.scaling
    s.cards = PAPER.cards
    s.target_ms = np.array( [ s.n_out / PAPER.scaling_paper[c] * 1e3 for c in s.cards ] )

  def models( s, values ):
    sets = [ f"{k}={v}" for k, v in values.items() ]
    return [ compute.model( PAPER, s.name, c, sets, BASE ) for c in s.cards ]

  def latency_ms( s, values ):
    """The three generations' end-to-end ms at `values`."""
    out = []
    for m in s.models( values ):
      res = estimate( m, s.n_in, s.n_out, positions=PAPER.scaling_positions, cache=s.cache,
                      jobs=s.jobs, on_start=s.count )
      out.append( m.dfx.ms( res["cycles"] ) )
    return np.array( out )

  def count( s, tasks ):
    s.timed += len( tasks )

  def steps_ms( s, values ):
    """The slope steps' ms on each card count at `values` (timed together)."""
    ms = s.models( values )
    tasks = [ ( m, p % m.gpt.vocab_size, p, w ) for m in ms for p, w in SLOPE_STEPS ]
    recs = time_many( tasks, s.cache, s.jobs, on_start=s.count )
    k = len( SLOPE_STEPS )
    return np.array( [ [ ms[i].dfx.ms( r["cycles"] ) for r in recs[ i * k:( i + 1 ) * k ] ]
                       for i in range( len( ms ) ) ] )

  def slopes( s, values ):
    """d(generation ms) / d(parameter) per card count: from the slope
    steps, each weighted by the steps of its kind in the generation."""
    w = np.array( [ s.n_in - 1, s.n_out ] )       # steps without logits, with logits
    base = s.steps_ms( values ) @ w
    J = np.zeros( ( len( s.cards ), len( calibration.PARAMS ) ) )
    for j, p in enumerate( calibration.PARAMS ):
      moved = dict( values, **{ p.field: calibration.typed( p, values[ p.field ] + p.step ) } )
      J[ :, j ] = ( s.steps_ms( moved ) @ w - base ) / p.step
    return J


def fit( jobs, iterations, tol ):
  f = Fit( jobs, StepCache( default_cache_dir() ) )
  start = calibration.identity()
  base_ms = f.latency_ms( start )
  print( f"paper profile: {', '.join( f'{c} card(s) {m:.1f} ms' for c, m in zip( f.cards, base_ms ) )}"
         f"; the paper: {', '.join( f'{m:.1f}' for m in f.target_ms )} ms", flush=True )
  J = f.slopes( start )
  print( "slopes (ms of the generation per unit):", flush=True )
  for j, p in enumerate( calibration.PARAMS ):
    print( f"  {p.field}: " + ", ".join( f"{c} card(s) {J[i, j]:+.3f}" for i, c in enumerate( f.cards ) ),
           flush=True )
  values, ms, history = calibration.chord_fit(
    f.latency_ms, J, f.target_ms, start, iterations, tol,
    log=lambda line: print( line, flush=True ) )
  return f, base_ms, J, values, ms, history


def record( f, base_ms, J, values, ms, history ):
  tps = lambda m: f.n_out / ( m / 1e3 )
  return dict(
    date=datetime.date.today().isoformat(),
    command="python reports/calibrate_dfx.py --write",
    base_profile=BASE,
    fitted_on=[ f"345M {f.n_in}:{f.n_out} tokens/s, {c} card(s)" for c in f.cards ],
    values=values,
    params=[ dict( field=p.field, meaning=p.meaning, unit=p.unit, low=p.low, high=p.high,
                   why_range=p.why_range, value=values[ p.field ],
                   at_edge=values[ p.field ] in ( p.low, p.high ) ) for p in calibration.PARAMS ],
    slopes_ms_per_unit={ p.field: dict( zip( map( str, f.cards ), J[ :, j ].tolist() ) )
                         for j, p in enumerate( calibration.PARAMS ) },
    points=[ dict( cards=c, paper_tokens_per_s=PAPER.scaling_paper[c],
                   paper_profile_tokens_per_s=tps( b ), calibrated_tokens_per_s=tps( m ),
                   error_pct=100 * ( tps( m ) - PAPER.scaling_paper[c] ) / PAPER.scaling_paper[c] )
             for c, b, m in zip( f.cards, base_ms, ms ) ],
    iterations=history, steps_timed=f.timed )


def _ranges( rec ):
  """{field: (low, high)} of a written record, or of PARAMS (rec None)."""
  if rec is None:
    return { p.field: ( p.low, p.high ) for p in calibration.PARAMS }
  return { q["field"]: ( q["low"], q["high"] ) for q in rec["params"] }


def main( argv=None ):
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--jobs", type=int, default=2 )
  ap.add_argument( "--iterations", type=int, default=3 )
  ap.add_argument( "--tol", type=float, default=0.5, help="percent, on every fitted point" )
  ap.add_argument( "--write", action="store_true", help="write pymtl_dfx/calibration.json" )
  ap.add_argument( "--supersede", metavar="WHY",
                   help="the ranges differ from the written fit's: keep that fit in the new "
                        "record's previous_fits, with this reason" )
  args = ap.parse_args( argv )
  old = calibration.fitted()
  if old is not None and _ranges( old ) != _ranges( None ) and not args.supersede:
    ap.error( "the parameters' ranges differ from those of the written fit; say why with "
              "--supersede WHY (the old fit is kept in the record)" )
  f, base_ms, J, values, ms, history = fit( args.jobs, args.iterations, args.tol )
  rec = record( f, base_ms, J, values, ms, history )
  rec["previous_fits"] = list( old.get( "previous_fits", [] ) ) if old else []
  if old is not None and args.supersede:
    prev = { k: v for k, v in old.items() if k != "previous_fits" }
    rec["previous_fits"].append( dict( prev, superseded_because=args.supersede ) )
  for p in rec["params"]:
    print( f"{p['field']} = {p['value']} ({p['unit']}; range {p['low']}..{p['high']}"
           f"{'; AT THE EDGE of its range' if p['at_edge'] else ''})" )
  text = json.dumps( rec, indent=1 ) + "\n"
  if args.write:
    atomic.write_text( calibration.FITTED_FILE, text )
    print( f"wrote {calibration.FITTED_FILE}" )
  else:
    print( text )


if __name__ == "__main__":
  main()
