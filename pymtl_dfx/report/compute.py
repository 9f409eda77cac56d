"""Times every step the report needs (`plan.steps_needed`), through the
step cache, and turns them into the figures' numbers."""

import dataclasses

from .. import perf
from ..appliance.host import emit_step
from ..compiler import stats
from ..compiler.limits import CompileError
from .. import profiles
from ..config import DESIGN_FIELDS, DFXConfig, gpt2_preset
from ..perf.sampled import estimate, time_many
from .plan import PAPER


def model( plan, name, cards, overrides=(), profile=None ):
  dfx = profiles.config( profile, DFXConfig( cores=cards ) )
  if overrides:
    dfx = dfx.with_overrides( list( overrides ) )
  return perf.planned( gpt2_preset( name ), dfx, cards, plan.max_tokens[ name ] )


def paper_design( m ):
  """Planned model `m` with every design option (`DESIGN_FIELDS`) at its
  default, the paper's design, and the costs kept; None when `m` is the
  paper's design already."""
  off = { f.name: f.default for f in dataclasses.fields( m.dfx ) if f.name in DESIGN_FIELDS }
  dfx = m.dfx.replace( **off )
  if dfx == m.dfx:
    return None
  return perf.planned( m.gpt, dfx, m.cores, m.layout["max_tokens"] )


def fill( cache, plan=PAPER, jobs=1, overrides=(), on_done=None, needed=None, on_start=None,
          profile=None ):
  """Times every step not yet in the cache (`needed`: [(preset, cards,
  [(pos, want logits)])], by default every step of the report, and with a
  design option on the breakdown step of the paper's design too); returns
  {(name, cards): the reason} for the configurations that do not compile."""
  tasks, skipped = [], {}
  for name, cards, steps in ( plan.steps_needed() if needed is None else needed ):
    try:
      m = model( plan, name, cards, overrides, profile )
    except CompileError as e:
      skipped[ ( name, cards ) ] = str( e ).splitlines()[0]
      continue
    vocab = m.gpt.vocab_size
    tasks += [ ( m, pos % vocab, pos, want ) for pos, want in steps ]
    base = paper_design( m ) if needed is None else None
    if base is not None:
      tasks.append( ( base, plan.breakdown_pos % vocab, plan.breakdown_pos, True ) )
  # the largest first, so the processes finish together
  tasks.sort( key=lambda t: -t[0].gpt.n_embd ** 2 * t[0].gpt.n_layer / t[0].cores )
  time_many( tasks, cache, jobs, on_done, on_start=on_start )
  return skipped




def weight_bytes( gpt ):
  """FP16 bytes of the weights a generated token streams from HBM: the
  decoder layers' matrices and the LM head (the token embedding)."""
  E = gpt.n_embd
  return 2 * ( 12 * E * E * gpt.n_layer + gpt.vocab_size * E )


def models( plan, overrides=(), profile=None ):
  """{(preset, cards): planned model} of every configuration that
  compiles, and {(preset, cards): why not} of the others."""
  ok, skipped = {}, {}
  for name, cards, _ in plan.steps_needed():
    try:
      ok[ ( name, cards ) ] = model( plan, name, cards, overrides, profile )
    except CompileError as e:
      skipped[ ( name, cards ) ] = str( e ).splitlines()[0]
  return ok, skipped


def _step( m, pos, want, cache, compute ):
  return time_many( [ ( m, pos % m.gpt.vocab_size, pos, want ) ], cache, compute=compute )[0]


def breakdown( plan, ms_, cache, compute=True ):
  """(a) one generation step per size and card count."""
  out = {}
  for label, name in plan.sizes.items():
    for cards in plan.cards:
      m = ms_.get( ( name, cards ) )
      if m is None:
        continue
      rec = _step( m, plan.breakdown_pos, True, cache, compute )
      out[ f"{label} x{cards}" ] = dict(
        size=label, cards=cards, cycles=rec["cycles"], ms=m.dfx.ms( rec["cycles"] ),
        classes=rec["classes"],
        roofline_ms=weight_bytes( m.gpt ) / cards / ( m.dfx.hbm_gbps * 1e9 ) * 1e3 )
  return out


def class_roofline( m, pos ):
  """{op class: cycles the busiest card's HBM bytes of that class take at
  the full HBM bandwidth} of the step at `pos` with the logits."""
  progs, classes = emit_step( m, m.emitter(), pos % m.gpt.vocab_size, pos, True )
  per_core = [ stats.count( p, c, m.dfx.d, m.cores ) for p, c in zip( progs, classes ) ]
  return { k: max( pc[ k ]["hbm_bytes"] for pc in per_core ) / m.dfx.hbm_bytes_per_cycle
           for k in stats.CLASSES }


def design( plan, ms_, cache, compute=True ):
  """The breakdown step of the paper's design beside this one's, when a
  design option is on ({} otherwise): {"model, cards": breakdown entry};
  and every breakdown step's op classes against their HBM bytes' roofline
  ({"model, cards": {op class: cycles}})."""
  bases = { k: b for k, m in ms_.items() if ( b := paper_design( m ) ) is not None }
  roof = {}
  for label, name in plan.sizes.items():
    for cards in plan.cards:
      if ( name, cards ) in ms_:
        roof[ f"{label} x{cards}" ] = class_roofline( ms_[ ( name, cards ) ], plan.breakdown_pos )
  return breakdown( plan, bases, cache, compute ) if bases else {}, roof


def scaling( plan, ms_, cache, compute=True ):
  """(b) the scaling generation on every card count, with its timed steps."""
  out = {}
  name, n_in, n_out = plan.scaling
  for cards in plan.cards:
    m = ms_.get( ( name, cards ) )
    if m is None:
      continue
    res = estimate( m, n_in, n_out, positions=plan.scaling_positions, cache=cache,
                    compute=compute )
    ms = m.dfx.ms( res["cycles"] )
    steps = [ dict( pos=p, logits=want, ms=m.dfx.ms( _step( m, p, want, cache, compute )["cycles"] ) )
              for want, ps in plan.scaling_positions.items() for p in ps ]
    out[ cards ] = dict(
      ms=ms, tokens_per_s=n_out / ( ms / 1e3 ), classes=res["class_cycles"],
      cycles=res["cycles"], timed_steps=res["timed_steps"], steps=steps,
      paper_tokens_per_s=plan.scaling_paper.get( cards ) )
  return out


def xl( plan, ms_, cache, compute=True ):
  """(c) the large model's generations at every point, (d) its timed steps."""
  m = ms_.get( ( plan.xl, plan.xl_cards ) )
  if m is None:
    return {}, []
  return xl_of( plan, m, cache, compute )


def xl_of( plan, m, cache, compute=True ):
  """(c) and (d) of model `m` (a large model on the plan's card count)."""
  points, steps = {}, []
  for n_in in sorted( { i for i, _ in plan.xl_points } ):
    for n_out in plan.xl_outputs:
      res = estimate( m, n_in, n_out, positions=plan.xl_positions, cache=cache, compute=compute )
      points[ f"{n_in}:{n_out}" ] = dict(
        n_in=n_in, n_out=n_out, ms=m.dfx.ms( res["cycles"] ), classes=res["class_cycles"],
        cycles=res["cycles"], paper_ms=plan.xl_paper.get( ( n_in, n_out ) ) )
  for want, ps in plan.xl_positions.items():
    for p in ps:
      rec = _step( m, p, want, cache, compute )
      steps.append( dict( pos=p, logits=want, ms=m.dfx.ms( rec["cycles"] ),
                          classes=rec["classes"] ) )
  return points, steps


def size_label( plan, preset ):
  """The plan's label of a preset, e.g. "345M"."""
  return { v: k for k, v in plan.sizes.items() }[ preset ]


def scaling_label( plan ):
  """(b)'s generation, e.g. "345M 64:64"."""
  name, n_in, n_out = plan.scaling
  return f"{size_label( plan, name )} {n_in}:{n_out}"


def paper_scaling( cache, compute=False, jobs=1, on_done=None, plan=PAPER ):
  """(b) of the plan (the paper's); `compute`: time its steps missing from
  the cache first (on `jobs` processes), else only read the cache
  (`perf.sampled.NotCached` when a step is missing)."""
  if compute:
    fill( cache, plan, jobs, on_done=on_done, needed=plan.scaling_steps() )
  name = plan.scaling[0]
  ms_ = { ( name, c ): model( plan, name, c ) for c in plan.cards }
  return scaling( plan, ms_, cache, compute=False )


def results( cache, plan=PAPER, overrides=(), profile=None ):
  """The numbers of every figure, from the cache (timing what is missing),
  with the --profile and --set they were computed for."""
  ms_, skipped = models( plan, overrides, profile )
  points, steps = xl( plan, ms_, cache )
  base, roof = design( plan, ms_, cache )
  return dict(
    profile=profile, set=list( overrides ),
    skipped={ f"{n} x{c}": why for ( n, c ), why in skipped.items() },
    labels=dict( context=plan.breakdown_pos + 1, scaling=scaling_label( plan ),
                 xl=size_label( plan, plan.xl ), xl_cards=plan.xl_cards,
                 xl_sync_paper=plan.xl_sync_paper,
                 xl_attn_ffn_paper=plan.xl_attn_ffn_paper ),
    breakdown=breakdown( plan, ms_, cache ), scaling=scaling( plan, ms_, cache ),
    xl=points, xl_steps=steps, paper_design=base, class_roofline=roof )
