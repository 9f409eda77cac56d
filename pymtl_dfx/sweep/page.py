"""sweep.md: the figure, one table row per point (config, ms per step,
resources against the U280, fits or not, Pareto), and how the estimate of
the first point that compiled is built."""

from ..resources.estimate import RESOURCES, U280, U280_SOURCE


def _fits( p ):
  if p.get( "error" ) is not None:
    return f"failed: {p['error']}"
  if p["step"] is None:
    return f"does not fit: {p['reason']}"
  over = p["resources"]["over"]
  return "yes" if not over else "over the U280 in " + ", ".join( over )


def _pareto( p ):
  marks = [ axis for axis, key in ( ( "LUT", "pareto_lut" ), ( "DSP", "pareto_dsp" ) ) if p[ key ] ]
  return ", ".join( marks ) or ""


def write( sweep, figure ):
  """The page as a string; `sweep`: the sweep.json record; `figure`: the PNG's name."""
  pts, io = sweep["points"], sweep["io"]
  lines = [ f"# Design-space sweep: {sweep['model']}, {len( pts )} points", "",
            f"Latency: one generation step at context {sweep['context']} (the logits wanted, as "
            "for every generated token), CL-exact cycles from `pymtl_dfx.perf` at each point's "
            "clock_mhz" + ( f"; and a whole {io[0]}:{io[1]} generation ({sweep['samples']} steps "
                            "of each kind timed, the others interpolated)" if io else "" ) + ".",
            "",
            "Resources: one core per card, estimated from Yosys `synth_xilinx -family xcup` unit "
            "numbers (Yosys, not Vivado; the table `SYNTHESISED` in "
            "`pymtl_dfx/resources/estimate.py`), against the U280 "
            f"({', '.join( f'{U280[k]:,} {k}' for k in RESOURCES )}; {U280_SOURCE}).  Each "
            "estimate row says whether it is synthesised or extrapolated; what is left out is "
            "listed below.", "" ]
  every = ( [ f"profile `{sweep['profile']}`" ] if sweep.get( "profile" ) else [] ) + \
    [ f"`{s}`" for s in sweep["set"] ]
  if every:
    lines += [ "Every point: " + ", then ".join( every ) + ".", "" ]
  lines += [ f"![ms per step against LUTs and DSPs per card]({figure})", "",
             "Pareto: among the points within the U280 budget, no other point has no more "
             "latency and no more LUTs (or DSPs) and less of one of them.", "" ]
  head = [ "point", "cores", "clock MHz", "ms per step" ]
  if io:
    head += [ f"{io[0]}:{io[1]} ms", "tokens/s" ]
  head += [ f"{k} (% of U280)" for k in RESOURCES ] + [ "fits", "Pareto" ]
  lines += [ "| " + " | ".join( head ) + " |", "|" + "---|" * len( head ) ]
  for p in pts:
    cfg = p["config"]
    row = [ p["label"], str( cfg["cores"] ), str( cfg["clock_mhz"] ) ]
    row.append( f"{p['step']['ms']:.4f}" if p["step"] else "-" )
    if io:
      g = p["generation"]
      row += [ f"{g['ms']:.3f}", f"{g['tokens_per_s']:.1f}" ] if g else [ "-", "-" ]
    r = p["resources"]
    row += [ f"{r['totals'][k]:,} ({r['percent'][k]:.1f} %)" for k in RESOURCES ]
    row += [ _fits( p ), _pareto( p ) ]
    lines.append( "| " + " | ".join( row ) + " |" )
  first = next( ( p for p in pts if p["step"] is not None ), pts[0] if pts else None )
  if first:
    lines += [ "", f"## How the estimate is built ({first['label']})", "",
               "Every point's rows are in sweep.json.", "",
               "| row | " + " | ".join( RESOURCES ) + " | source | how |",
               "|---|" + "---|" * ( len( RESOURCES ) + 2 ) ]
    for r in first["resources"]["rows"]:
      lines.append( f"| {r['name']} | " + " | ".join( f"{r[k]:,}" for k in RESOURCES ) +
                    f" | {r['source']} | {r['how']} |" )
    lines += [ "", "Left out of every estimate:", "" ]
    lines += [ f"- {x}" for x in first["resources"]["left_out"] ]
  return "\n".join( lines ) + "\n"
