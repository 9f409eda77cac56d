"""The report's files: times the steps the figures need (`plan.PAPER`, through
the step cache), then writes breakdown, roofline, scaling, xl_latency and
step_ms as PNG and SVG (with a design option on, design_breakdown too: the
breakdown beside the paper's design), summary.md (the figures and the table
against the paper) and results.json (`dfx report`)."""

import json
import os

from .. import atomic
from .. import profiles


def _jsonable( x ):
  if isinstance( x, dict ):
    return { str( k ): _jsonable( v ) for k, v in x.items() }
  if isinstance( x, ( list, tuple ) ):
    return [ _jsonable( v ) for v in x ]
  return x


def build( out_dir, plan=None, cache=None, jobs=1, overrides=(), on_done=None, on_start=None,
           profile=None ):
  """Computes and writes the report for profile `profile` (None: the
  default config) with `overrides` on top; returns {what: path}."""
  from . import compute, figures, summary, validation
  from .plan import PAPER
  from ..outputs import check_dir
  plan = plan or PAPER
  check_dir( out_dir, "--out" )           # before the minutes of timing, not after
  compute.fill( cache, plan, jobs, overrides, on_done, on_start=on_start, profile=profile )
  validation.fill( cache, plan, jobs, on_done, on_start )
  res = compute.results( cache, plan, overrides, profile )
  res["validation"] = validation.table( cache, plan )
  clock = profiles.config( profile ).with_overrides( list( overrides ) ).clock_mhz
  # the folder once there is something to write, and none if nothing was
  with atomic.made_dir( out_dir ):
    pngs = {}
    if res["breakdown"]:
      pngs["breakdown"] = figures.breakdown( res, out_dir, clock )
      if res["paper_design"]:
        pngs["design_breakdown"] = figures.design_breakdown( res, out_dir, clock )
      pngs["roofline"] = figures.roofline( res, out_dir )
    if res["scaling"]:
      pngs["scaling"] = figures.scaling( res, out_dir )
    if res["xl"]:
      pngs["xl_latency"] = figures.xl_latency( res, out_dir )
      pngs["step_ms"] = figures.step_ms( res, out_dir )
    paths = { k: os.path.join( out_dir, v ) for k, v in pngs.items() }
    paths["summary"] = os.path.join( out_dir, "summary.md" )
    atomic.write_text( paths["summary"], summary.write( res, pngs, clock ) )
    paths["results"] = os.path.join( out_dir, "results.json" )
    atomic.write_text( paths["results"], json.dumps( _jsonable( res ), indent=1 ) + "\n" )
  return paths
