"""The report's Markdown page: the figures, and the table of modelled
against published figures with the error of each."""

from ..compiler.stats import CYCLE_CLASSES
from ..config import cycles_to_ms


def _err( model, ref ):
  return f"{100 * ( model - ref ) / ref:+.1f} %"


def _shares( classes, top=3 ):
  total = sum( classes.values() ) or 1
  big = sorted( ( ( v, k ) for k, v in classes.items() if v ), reverse=True )[ :top ]
  return ", ".join( f"{k} {100 * v / total:.0f} %" for v, k in big )


def comparison_rows( res ):
  """(figure, modelled, paper, error, where the modelled time goes) rows."""
  rows, L = [], res["labels"]
  for cards, r in sorted( res["scaling"].items() ):
    if r["paper_tokens_per_s"]:
      rows.append( ( f"{L['scaling']}, {cards} card(s), tokens/s", f"{r['tokens_per_s']:.1f}",
                     f"{r['paper_tokens_per_s']:.2f}",
                     _err( r["tokens_per_s"], r["paper_tokens_per_s"] ), _shares( r["classes"] ) ) )
  for p in sorted( res["xl"].values(), key=lambda p: ( p["n_in"], p["n_out"] ) ):
    if p["paper_ms"]:
      rows.append( ( f"{L['xl']} {p['n_in']}:{p['n_out']}, {L['xl_cards']} cards, latency ms", f"{p['ms']:.0f}",
                     f"{p['paper_ms']}", _err( p["ms"], p["paper_ms"] ), _shares( p["classes"] ) ) )
  ref = L["xl_sync_paper"]
  for p in sorted( res["xl"].values(), key=lambda p: ( p["n_in"], p["n_out"] ) ):
    if ref is not None and p["paper_ms"]:
      sync = 100 * p["classes"].get( "sync", 0 ) / p["cycles"]
      rows.append( ( f"{L['xl']} {p['n_in']}:{p['n_out']}, {L['xl_cards']} cards, sync share "
                     "of latency", f"{sync:.1f} %", f"{ref} %", f"{sync - ref:+.1f} points",
                     _shares( p["classes"] ) ) )
  return rows


def per_token( res, clock_mhz ):
  """The large model's generation step from its paper points: for each
  input length with two output lengths published, the two longest: ms per
  generated token (the latency difference over the extra tokens) modelled,
  per op class, and the paper's."""
  out = []
  pts = { ( p["n_in"], p["n_out"] ): p for p in res["xl"].values() if p["paper_ms"] }
  for n_in in sorted( { i for i, _ in pts } ):
    outs = sorted( o for i, o in pts if i == n_in )
    if len( outs ) < 2:
      continue
    a, b = pts[ ( n_in, outs[-2] ) ], pts[ ( n_in, outs[-1] ) ]
    n = b["n_out"] - a["n_out"]
    cls = { k: cycles_to_ms( b["classes"][k] - a["classes"][k], clock_mhz ) / n for k in a["classes"] }
    out.append( dict( n_in=n_in, outs=( a["n_out"], b["n_out"] ), ms=sum( cls.values() ),
                      classes=cls, paper_ms=( b["paper_ms"] - a["paper_ms"] ) / n ) )
  return out


def gap_rows( res, clock_mhz ):
  """(what, modelled ms, paper ms, difference) per generated token of the
  large model: total, self-attention + FFN, sync, the rest."""
  L, rows = res["labels"], []
  for t in per_token( res, clock_mhz ):
    c, pm = t["classes"], t["paper_ms"]
    af, sync = c.get( "attention", 0 ) + c.get( "ffn", 0 ), c.get( "sync", 0 )
    head = f"{L['xl']} {t['n_in']}:{t['outs'][0]}->{t['outs'][1]}, ms per generated token"
    rows.append( ( head, t["ms"], pm ) )
    if L.get( "xl_attn_ffn_paper" ) is not None and L.get( "xl_sync_paper" ) is not None:
      pa, ps = pm * L["xl_attn_ffn_paper"] / 100, pm * L["xl_sync_paper"] / 100
      rows += [ ( "  of which self-attention + FFN", af, pa ), ( "  of which sync", sync, ps ),
                ( "  of which the rest", t["ms"] - af - sync, pm - pa - ps ) ]
  return rows


def write( res, figures, clock_mhz ):
  """The page as a string; `figures`: {name: png file}."""
  lines = [ "# DFX on the modelled U280 appliance: latency report", "",
            "Every figure is from `pymtl_dfx.perf`: the CL appliance's cycles, replayed without "
            "data through the units' own timing code, at the paper's core (d=64, l=16, 32 HBM "
            f"channels, {clock_mhz} MHz) with the U280 system's measured costs (docs/perf.md). "
            "In each generation the steps at a few positions are timed exactly and the others "
            "interpolated between them (`perf.sampled`; the positions are in results.json).", "" ]
  if res.get( "profile" ) or res.get( "set" ):
    from ..profiles import get
    said = [ f"profile `{res['profile']}` ({get( res['profile'] ).description})" ] \
      if res.get( "profile" ) else []
    said += [ f"`--set {s}`" for s in res.get( "set" ) or () ]
    lines += [ "Computed with " + ", then ".join( said ) + ".", "" ]
  if res["skipped"]:
    lines += [ "Not compiled (so not shown): " + "; ".join( f"{k}: {v}"
                                                          for k, v in res["skipped"].items() ), "" ]
  L = res["labels"]
  captions = dict(
    breakdown=f"(a) Per-operation latency of one generation step (context {L['context']}) per "
              "model size and card count.",
    scaling=f"(b) Scalability: {L['scaling']} on each card count, with the paper's points.",
    xl_latency=f"(c) {L['xl']} on {L['xl_cards']} cards: end-to-end latency against output "
               "tokens for each input length, with the paper's points.",
    step_ms="(d) Milliseconds per step against context length, at the exactly timed steps.",
    design_breakdown=f"(a) beside the paper's design: each step of (a) with every design option "
                     "off (hatched, left) and as computed (right), with the HBM roofline of its "
                     "weights.",
    roofline="Each op class's cycles in the breakdown step of the first model size on the most "
             "cards against the cycles its HBM bytes take at the full bandwidth." )
  for name, png in figures.items():
    lines += [ f"![{captions[ name ]}]({png})", "", captions[ name ], "" ]
  lines += [ "## Modelled against the paper", "",
             "| figure | modelled | paper | error | largest op classes (modelled) |",
             "|---|---|---|---|---|" ]
  lines += [ "| " + " | ".join( r ) + " |" for r in comparison_rows( res ) ]
  gaps = gap_rows( res, clock_mhz )
  if gaps:
    lines += [ "", "## Where the difference is", "",
               "Per generated token (the difference between a long and a short generation over "
               "the extra tokens), modelled by op class against the paper's latency split by its "
               "own breakdown (self-attention + FFN and synchronisation shares).", "",
               "| per generated token | modelled ms | paper ms | difference ms |", "|---|---|---|---|" ]
    lines += [ f"| {w} | {m:.3f} | {p:.3f} | {m - p:+.3f} |" for w, m, p in gaps ]
  lines += validation_lines( res.get( "validation" ) )
  lines += [ "", "## HBM roofline share", "",
             "The weights a generation step streams (FP16 matrices and the LM head) over the "
             "DMA's ceiling (every HBM channel's word each cycle: 409.6 GB/s per card at the "
             "paper's core), against the modelled step.", "",
             "| model, cards | step ms (modelled) | weights at the DMA ceiling, ms | share |",
             "|---|---|---|---|" ]
  for k, r in res["breakdown"].items():
    lines.append( f"| {k} | {r['ms']:.3f} | {r['roofline_ms']:.3f} | "
                  f"{100 * r['roofline_ms'] / r['ms']:.0f} % |" )
  lines += design_lines( res )
  lines += [ "", "## One generation step per op class (ms)", "",
             "| model, cards | " + " | ".join( CYCLE_CLASSES ) + " | total |",
             "|---|" + "---|" * ( len( CYCLE_CLASSES ) + 1 ) ]
  for k, r in res["breakdown"].items():
    ms = [ cycles_to_ms( r["classes"].get( c, 0 ), clock_mhz ) for c in CYCLE_CLASSES ]
    lines.append( f"| {k} | " + " | ".join( f"{v:.3f}" for v in ms ) + f" | {r['ms']:.3f} |" )
  return "\n".join( lines ) + "\n"


def design_lines( res ):
  """The breakdown steps against the paper's design at the same costs and
  against the roofline, when a design option is on."""
  if not res.get( "paper_design" ):
    return []
  lines = [ "", "## Against the paper's design", "",
            "The same step with every design option off (`config.DESIGN_FIELDS`), the costs kept, "
            "and the HBM roofline of the step's weights.", "",
            "| model, cards | paper's design ms | this design ms | speed-up | roofline ms | "
            "roofline share |", "|---|---|---|---|---|---|" ]
  for k, r in res["breakdown"].items():
    b = res["paper_design"].get( k )
    if b is not None:
      lines.append( f"| {k} | {b['ms']:.3f} | {r['ms']:.3f} | {b['ms'] / r['ms']:.2f}x | "
                    f"{r['roofline_ms']:.3f} | {100 * r['roofline_ms'] / r['ms']:.0f} % |" )
  return lines


def _fmt( v, unit ):
  if unit == "points":
    return f"{v:.1f} %"
  return f"{v:,.0f}" if v >= 1000 else f"{v:.1f}" if v >= 100 else f"{v:.2f}"


def _err_text( r ):
  return f"{r['error']:+.1f} points" if r["error_unit"] == "points" else f"{r['error']:+.1f} %"


def validation_lines( val ):
  """The profiles of DFX as built against the paper: one row per figure,
  a column pair (modelled, error) per profile, fitted or held out."""
  if not val or not val["rows"]:
    return []
  profs = list( dict.fromkeys( r["profile"] for r in val["rows"] ) )
  by = {}
  for r in val["rows"]:
    by.setdefault( r["figure"], {} )[ r["profile"] ] = r
  lines = [ "", "## The profiles of DFX as built against the paper", "",
            "`paper` is DFX as built with every value sourced; `calibrated` adds the fitted "
            "parameters below, fitted on the rows marked *fitted* only (`reports/calibrate_dfx.py`). "
            "*Held out* rows were never used in the fit.  The report's own --profile and --set do "
            "not apply to this table.", "",
            "| figure | " + " | ".join( f"`{p}` | error" for p in profs ) + " | paper | use |",
            "|---|" + "---|---|" * len( profs ) + "---|---|" ]
  for fig, cols in by.items():
    any_r = next( iter( cols.values() ) )
    cells = []
    for p in profs:
      r = cols.get( p )
      cells += [ _fmt( r["modelled"], r["error_unit"] ), _err_text( r ) ] if r else [ "-", "-" ]
    use = "held out" if any_r["held_out"] else "fitted" if "GFLOPS" not in fig else "derived"
    lines.append( f"| {fig} | " + " | ".join( cells )
                  + f" | {any_r['paper']:g}{' %' if any_r['error_unit'] == 'points' else ''} | {use} |" )
  if val["summary"]:
    lines += [ "", "Mean absolute error of the held-out 1.5B latencies:", "" ]
    for p, widths in val["summary"].items():
      for w, s in widths.items():
        lines.append( f"- `{p}`, {w}: {s['mean_abs_latency_error_pct']:.1f} % over "
                      f"{s['points']} points" )
  cal = val.get( "calibration" )
  if cal:
    lines += [ "", f"Fitted parameters ({cal.get( 'date', 'undated' )}, `{cal.get( 'command' )}`):", "",
               "| parameter | value | range | meaning |", "|---|---|---|---|" ]
    for q in cal["params"]:
      edge = " (at the edge of its range)" if q["at_edge"] else ""
      lines.append( f"| `{q['field']}` | {q['value']}{edge} | {q['low']}..{q['high']} {q['unit']} "
                    f"| {q['meaning']} |" )
  return lines
