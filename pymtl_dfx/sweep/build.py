"""A sweep's records and files: for every grid point its plan (or why the
model does not fit), its latency (`run`) and its resource estimate
(`resources`), the Pareto flags, and sweep.md, sweep.json and pareto.png /
pareto.svg (`dfx sweep`)."""

import json
import os
import time

from .. import atomic


def sweep( gpt, points, context, io=None, samples=4, cache_dir=None, jobs=1, dask=None,
           on_done=None, on_start=None ):
  """The sweep.json record's points: each `grid.Point` planned (or "does
  not fit"), its latency and its resource estimate, and the Pareto flags.
  The points are laid out only once the ones not in the cache are
  estimated (on_start): the estimate comes first (`run.run_all`)."""
  from .. import perf
  from .pareto import pareto
  from ..resources.estimate import estimate_resources
  from .run import run_all
  max_tokens = max( context, sum( io ) if io else 0 )
  models = [ perf.unplanned( gpt, pt.dfx, pt.dfx.cores, max_tokens ) for pt in points ]
  plan = lambda m: perf.planned( m.gpt, m.dfx, m.cores, max_tokens )  # noqa: E731
  lats = run_all( models, context, io, samples, cache_dir, jobs, dask, on_done, on_start, plan )
  recs = [ dict( dict( label=pt.label, grid=pt.grid, config=pt.dfx.to_dict(), reason=None,
                       error=None, step=None, generation=None,
                       resources=estimate_resources( pt.dfx ), pareto_lut=False,
                       pareto_dsp=False ), **lat ) for pt, lat in zip( points, lats ) ]
  ok = [ r for r in recs if r["step"] is not None and r["resources"]["within_budget"] ]
  for res, flag in ( ( "LUT", "pareto_lut" ), ( "DSP", "pareto_dsp" ) ):
    for i in pareto( ok, lambda r: r["resources"]["totals"][ res ], lambda r: r["step"]["ms"] ):
      ok[i][ flag ] = True
  return recs


def build( out_dir, gpt, points, context, io=None, samples=4, cache_dir=None, jobs=1, dask=None,
           sets=(), on_done=None, on_start=None, profile=None ):
  """Runs the sweep and writes sweep.md, sweep.json, pareto.png and
  pareto.svg into out_dir; returns (the sweep.json record, {what: path})."""
  from . import figure, page
  from ..resources.estimate import SYNTHESISED, U280, U280_SOURCE
  from ..outputs import check_dir
  check_dir( out_dir, "--out" )           # before the sweep, not after it
  t0 = time.perf_counter()
  recs = sweep( gpt, points, context, io, samples, cache_dir, jobs, dask, on_done, on_start )
  out = dict( model=gpt.name, context=context, io=list( io ) if io else None,
              samples=samples if io else None, profile=profile, set=list( sets ),
              grid=_grid_values( points ),
              budget=U280, budget_source=U280_SOURCE,
              synthesised={ k: dict( DSP=v[0], LUT=v[1], FF=v[2], by=v[3] )
                            for k, v in SYNTHESISED.items() },
              points=recs, seconds=round( time.perf_counter() - t0, 3 ) )
  # no empty folder if the run stops before its first file is written
  with atomic.made_dir( out_dir ):
    png = figure.draw( recs, out_dir,
                       title=f"{gpt.name}: one generation step at context {context}" )
    paths = dict( figure=os.path.join( out_dir, png ),
                  figure_svg=os.path.join( out_dir, png[ :-4 ] + ".svg" ),
                  page=os.path.join( out_dir, "sweep.md" ),
                  json=os.path.join( out_dir, "sweep.json" ) )
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
