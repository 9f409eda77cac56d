"""Times every step the report needs (`plan.steps_needed`), through the
step cache, and turns them into the figures' numbers."""

from .. import perf
from ..compiler.limits import CompileError
from ..config import DFXConfig, gpt2_preset
from ..perf.sampled import StepCache, estimate, time_many
from .plan import PAPER


def model( plan, name, cards, overrides=() ):
  dfx = DFXConfig( cores=cards )
  if overrides:
    dfx = dfx.with_overrides( list( overrides ) )
  return perf.planned( gpt2_preset( name ), dfx, cards, plan.max_tokens[ name ] )


def fill( cache, plan=PAPER, jobs=1, overrides=(), on_done=None ):
  """Times every step not yet in the cache; returns {(name, cards): the
  reason} for the configurations that do not compile."""
  tasks, skipped = [], {}
  for name, cards, steps in plan.steps_needed():
    try:
      m = model( plan, name, cards, overrides )
    except CompileError as e:
      skipped[ ( name, cards ) ] = str( e ).splitlines()[0]
      continue
    vocab = m.gpt.vocab_size
    tasks += [ ( m, pos % vocab, pos, want ) for pos, want in steps ]
  # the largest first, so the processes finish together
  tasks.sort( key=lambda t: -t[0].gpt.n_embd ** 2 * t[0].gpt.n_layer / t[0].cores )
  time_many( tasks, cache, jobs, on_done )
  return skipped


def _ms( cycles, dfx ):
  return cycles / ( dfx.clock_mhz * 1e3 )


def weight_bytes( gpt ):
  """FP16 bytes of the weights a generated token streams from HBM: the
  decoder layers' matrices and the LM head (the token embedding)."""
  E = gpt.n_embd
  return 2 * ( 12 * E * E * gpt.n_layer + gpt.vocab_size * E )


def dma_ceiling( dfx ):
  """Bytes per second the DMA can take from HBM: every channel's word per
  kernel cycle (409.6 GB/s at the paper's 32 x 512 bits, 200 MHz)."""
  return dfx.hbm_channels * dfx.hbm_channel_bits / 8 * dfx.clock_mhz * 1e6


def results( cache, plan=PAPER, overrides=() ):
  """The numbers of every figure, from the cache (timing what is missing)."""
  skipped = {}
  out = dict( breakdown={}, scaling={}, xl={}, xl_steps=[], skipped={} )
  models = {}
  for name, cards, _ in plan.steps_needed():
    try:
      models[ ( name, cards ) ] = model( plan, name, cards, overrides )
    except CompileError as e:
      skipped[ ( name, cards ) ] = str( e ).splitlines()[0]
  out["skipped"] = { f"{n} x{c}": why for ( n, c ), why in skipped.items() }
  label = { v: k for k, v in plan.sizes.items() }
  name, n_in, n_out = plan.scaling
  out["labels"] = dict( context=plan.breakdown_pos + 1, scaling=f"{label[ name ]} {n_in}:{n_out}",
                        xl=label[ plan.xl ], xl_cards=plan.xl_cards,
                        xl_sync_paper=plan.xl_sync_paper )
  # (a) one generation step per size and card count
  for label, name in plan.sizes.items():
    for cards in plan.cards:
      m = models.get( ( name, cards ) )
      if m is None:
        continue
      pos = plan.breakdown_pos
      rec = time_many( [ ( m, pos % m.gpt.vocab_size, pos, True ) ], cache )[0]
      out["breakdown"][ f"{label} x{cards}" ] = dict(
        size=label, cards=cards, cycles=rec["cycles"], ms=_ms( rec["cycles"], m.dfx ),
        classes=rec["classes"],
        roofline_ms=weight_bytes( m.gpt ) / cards / dma_ceiling( m.dfx ) * 1e3 )
  # (b) 345M 64:64 on 1, 2, 4 cards
  name, n_in, n_out = plan.scaling
  for cards in plan.cards:
    m = models.get( ( name, cards ) )
    if m is None:
      continue
    res = estimate( m, n_in, n_out, positions=plan.scaling_positions, cache=cache )
    ms = _ms( res["cycles"], m.dfx )
    vocab = m.gpt.vocab_size
    steps = [ dict( pos=p, logits=want,
                    ms=_ms( time_many( [ ( m, p % vocab, p, want ) ], cache )[0]["cycles"], m.dfx ) )
              for want, ps in plan.scaling_positions.items() for p in ps ]
    out["scaling"][ cards ] = dict(
      ms=ms, tokens_per_s=n_out / ( ms / 1e3 ), classes=res["class_cycles"],
      cycles=res["cycles"], timed_steps=res["timed_steps"], steps=steps,
      paper_tokens_per_s=plan.scaling_paper.get( cards ) )
  # (c) 1.5B on 4 cards: the nine points and the curves through them
  m = models.get( ( plan.xl, plan.xl_cards ) )
  if m is not None:
    for n_in in sorted( { i for i, _ in plan.xl_points } ):
      for n_out in plan.xl_outputs:
        res = estimate( m, n_in, n_out, positions=plan.xl_positions, cache=cache )
        out["xl"][ f"{n_in}:{n_out}" ] = dict(
          n_in=n_in, n_out=n_out, ms=_ms( res["cycles"], m.dfx ), classes=res["class_cycles"],
          cycles=res["cycles"], paper_ms=plan.xl_paper.get( ( n_in, n_out ) ) )
    # (d) the timed steps: ms per step against context
    vocab = m.gpt.vocab_size
    for want, ps in plan.xl_positions.items():
      for p in ps:
        rec = time_many( [ ( m, p % vocab, p, want ) ], cache )[0]
        out["xl_steps"].append( dict( pos=p, logits=want, ms=_ms( rec["cycles"], m.dfx ),
                                      classes=rec["classes"] ) )
  return out
