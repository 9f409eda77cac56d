"""The profiles of DFX as built against its published figures, in one table:
`paper` (every value sourced) and `calibrated` (`paper` with the fitted
parameters of `pymtl_dfx.calibration`).  The fit used the 345M 64:64
tokens/s on 1, 2 and 4 cards; every other row is held out: the 1.5B
latencies on 4 cards at the paper's nine input:output points, and the
paper's breakdown shares (synchronisation, self-attention + FFN) over those
nine generations, for each 1.5B width (`plan.validation_xl`).  The GFLOPS
of one card is derived from a fitted point (its latency), so it is not
held out.  The report's own --profile and --set do not apply here."""

from .. import profiles
from ..compiler.limits import CompileError
from ..perf.sampled import plan_steps
from . import compute

# the paper's 184.1 GFLOPS on one card over 345M 64:64 (figures.md)
PAPER_GFLOPS_1CARD = 184.1


def present( plan ):
  """The plan's validation profiles that exist (`calibrated` needs a fit)."""
  return [ p for p in plan.validation_profiles if p in profiles.PROFILES ]


def needed( plan ):
  """[(preset, cards, [(pos, want logits)])]: the steps the table needs
  under each profile."""
  xl_steps = sorted( ( p, w ) for w, ps in plan.xl_positions.items() for p in ps )
  return plan.scaling_steps() + [ ( name, plan.xl_cards, xl_steps )
                                  for name in plan.validation_xl.values() ]


def fill( cache, plan, jobs=1, on_done=None, on_start=None ):
  """Times every step of the table not yet in the cache; {(profile,
  preset, cards): why not} of what does not compile."""
  skipped = {}
  for prof in present( plan ):
    for k, why in compute.fill( cache, plan, jobs, needed=needed( plan ), profile=prof,
                                on_done=on_done, on_start=on_start ).items():
      skipped[ ( prof, ) + k ] = why
  return skipped


def step_flops( gpt, pos, want ):
  """FLOPs of one step at position `pos`: 2 per multiply-accumulate of
  every decoder matrix, of the attention's scores and weighted sum over
  pos + 1 positions, and of the LM head when the step produces logits."""
  E, L = gpt.n_embd, gpt.n_layer
  A = getattr( gpt, "attn_dim", E )
  per_layer = E * 3 * A + A * E + 2 * E * gpt.n_inner + 2 * ( pos + 1 ) * A
  return 2 * ( L * per_layer + ( gpt.vocab_size * E if want else 0 ) )


def generation_flops( gpt, n_in, n_out ):
  return sum( step_flops( gpt, pos, want ) for _, pos, want, _ in plan_steps( n_in, n_out, gpt.vocab_size ) )


def _row( prof, figure, modelled, paper, held_out, unit="%" ):
  if unit == "points":
    error = modelled - paper
  else:
    error = 100 * ( modelled - paper ) / paper
  return dict( profile=prof, figure=figure, modelled=modelled, paper=paper, error=error,
               error_unit=unit, held_out=held_out )


def _shares( points ):
  cyc = sum( p["cycles"] for p in points )
  cls = lambda k: sum( p["classes"].get( k, 0 ) for p in points )
  return 100 * cls( "sync" ) / cyc, 100 * ( cls( "attention" ) + cls( "ffn" ) ) / cyc


def table( cache, plan, compute_missing=True ):
  """{rows, summary, calibration}: every row of every present profile,
  the mean absolute held-out latency error per profile and 1.5B width, and
  the fitted record (values, ranges) when `calibrated` exists."""
  from ..calibration import fitted
  rows, summary = [], {}
  name, n_in, n_out = plan.scaling
  label = compute.scaling_label( plan )
  for prof in present( plan ):
    ms_ = {}
    for c in plan.cards:
      try:
        ms_[ ( name, c ) ] = compute.model( plan, name, c, (), prof )
      except CompileError:       # a configuration that does not compile has no row
        pass
    sc = compute.scaling( plan, ms_, cache, compute_missing )
    for c, r in sorted( sc.items() ):
      if r["paper_tokens_per_s"]:
        rows.append( _row( prof, f"{label}, {c} card(s), tokens/s", r["tokens_per_s"],
                           r["paper_tokens_per_s"], False ) )
    if 1 in sc:
      m = ms_[ ( name, 1 ) ]
      gflops = generation_flops( m.gpt, n_in, n_out ) / ( sc[1]["ms"] / 1e3 ) / 1e9
      rows.append( _row( prof, f"{label}, 1 card, GFLOPS (derived from the fitted latency)",
                         gflops, PAPER_GFLOPS_1CARD, False ) )
    for width, preset in plan.validation_xl.items():
      try:
        m = compute.model( plan, preset, plan.xl_cards, (), prof )
      except CompileError:
        continue
      points, _ = compute.xl_of( plan, m, cache, compute_missing )
      pts = [ p for p in points.values() if p["paper_ms"] ]
      errs = []
      for p in sorted( pts, key=lambda p: ( p["n_in"], p["n_out"] ) ):
        r = _row( prof, f"{width} {p['n_in']}:{p['n_out']}, {plan.xl_cards} cards, latency ms",
                  p["ms"], p["paper_ms"], True )
        rows.append( r )
        errs.append( abs( r["error"] ) )
      if pts and plan.xl_sync_paper is not None:
        sync, af = _shares( pts )
        rows.append( _row( prof, f"{width}, {plan.xl_cards} cards, sync share of latency "
                           f"(over the {len( pts )} points)", sync, plan.xl_sync_paper, True,
                           "points" ) )
        rows.append( _row( prof, f"{width}, {plan.xl_cards} cards, self-attention + FFN share "
                           f"(over the {len( pts )} points)", af, plan.xl_attn_ffn_paper, True,
                           "points" ) )
      if errs:
        summary.setdefault( prof, {} )[ width ] = dict(
          mean_abs_latency_error_pct=sum( errs ) / len( errs ), points=len( errs ) )
  return dict( rows=rows, summary=summary,
               calibration=fitted() if "calibrated" in present( plan ) else None )
