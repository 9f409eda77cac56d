"""Token steps as the host runs them, timed by the data-free appliance.

`run(compiled, prompt_ids, n_new)` emits each step's per-core programs
exactly as `Host.generate` does (summarization over the prompt, the logits
wanted after the last prompt token and after every generated one) and
returns what `Host.results()` returns at CL: cycles in total, per step,
per stage, per op class (the host's attribution rule) and busy cycles per
unit.  A generated token changes only the embedding row the step reads, so
`tokens` (ids after the prompt) may be given; by default the last prompt
token is repeated.
"""

from dataclasses import dataclass

from ..appliance.host import STAGES, add_host_step
from ..compiler import stats as S
from ..compiler.build import plan
from ..compiler.emit import StepEmitter
from ..config import DFXConfig, GPT2Config
from ..isa import Kind, encode, op_of
from ..units.control.ControlUnitFL import UNITS, unit_of
from .appliance import ApplianceTiming
from .core import STALLS
from .fold import Layers


@dataclass
class Planned:
  """What perf needs of a compiled model: the configs and the layout (no
  memory images, so any model size plans in milliseconds)."""
  gpt: GPT2Config
  dfx: DFXConfig
  layout: dict

  @property
  def cores( s ):
    return s.layout["cores"]

  def emitter( s ):
    return StepEmitter( s.layout, s.gpt )


def planned( gpt, dfx, cores, max_tokens=None ):
  """A model planned for `cores` cores (the compiler's layout and limits)."""
  return Planned( gpt, dfx, plan( gpt, dfx, cores, max_tokens ) )


def step_programs( compiled, emitter, token, pos, want_logits ):
  """Per core: (words, units, classes, body_end) of one token step
  (body_end: where the decoder layers end and the LM head begins)."""
  out = []
  for i in range( compiled.cores ):
    prog, cls = emitter.step( i, int( token ), pos, want_logits )
    body_end = len( emitter.step( i, int( token ), pos, False )[0] ) if want_logits else len( prog )
    words = [ int( encode( inst ) ) for inst in prog ]
    units = [ unit_of( op_of( inst ), Kind( int( inst.hdr.kind ) ) ) for inst in prog ]
    out.append( ( words, units, cls, body_end ) )
  return out


def schedule( prompt_ids, n_new, tokens=None ):
  """(token, want_logits) of every step `Host.generate` runs."""
  steps = [ ( t, k == len( prompt_ids ) - 1 ) for k, t in enumerate( prompt_ids ) ]
  gen = list( tokens or [] ) + [ prompt_ids[-1] ] * max( 0, n_new - 1 )
  steps += [ ( gen[k], True ) for k in range( max( 0, n_new - 1 ) ) ]
  return steps


def time_step( compiled, app, emitter, token, pos, want, fold=True ):
  """One step on `app` (an `ApplianceTiming` of the model's cores): its
  cycles with the host's cost, cycles per op class, busy cycles per unit
  of every core, the decoder layers folded and the cycles they stood for
  (not simulated)."""
  cfg = compiled.dfx
  progs = step_programs( compiled, emitter, token, pos, want )
  layers = None
  if fold:
    M = ( cfg.hbm_channels, cfg.ddr_channels )
    layers = [ Layers( w, u, c, compiled.gpt.n_layer, end, M ) for w, u, c, end in progs ]
  k, tracks = app.step( *[ [ p[i] for p in progs ] for i in range( 3 ) ], layers,
                        what=f"step at position {pos}" )
  slowest = max( range( len( tracks ) ), key=lambda i: ( tracks[i].last_done, -i ) )
  k, per_class = add_host_step( cfg, k, tracks[ slowest ].cycles )
  busy = [ { name: t.busy[u] for u, name in enumerate( UNITS ) } for t in tracks ]
  stalls = [ { name: dict( c.stalls.by_unit[u] ) for u, name in enumerate( UNITS ) } for c in app.cores ]
  return dict( cycles=k, classes=per_class, busy=busy, stalls=stalls, folded=app.folded,
               skipped=app.skipped )


def empty_result( cores ):
  return dict( level="perf", cycles=0, step_cycles=[], stage_cycles=dict.fromkeys( STAGES, 0 ),
               class_cycles=dict.fromkeys( S.CYCLE_CLASSES, 0 ), step_classes=[],
               unit_busy=[ dict.fromkeys( UNITS, 0 ) for _ in range( cores ) ],
               unit_stalls=[ { u: dict.fromkeys( STALLS, 0 ) for u in UNITS }
                             for _ in range( cores ) ] )


def add_step( res, step, stage ):
  """Adds one step's `time_step` record to a run's result."""
  res["cycles"] += step["cycles"]
  res["step_cycles"].append( step["cycles"] )
  res["stage_cycles"][ stage ] += step["cycles"]
  res["step_classes"].append( step["classes"] )
  for c, n in step["classes"].items():
    res["class_cycles"][c] += n
  for total, busy in zip( res["unit_busy"], step["busy"] ):
    for name, n in busy.items():
      total[ name ] += n
  for total, stalls in zip( res["unit_stalls"], step["stalls"] ):
    for name, why in stalls.items():
      for k, n in why.items():
        total[ name ][k] += n


def run( compiled, prompt_ids, n_new, tokens=None, on_step=None, fold=True ):
  """`compiled`: a `CompiledModel` or a `Planned` one; `fold`: fold
  repeated decoder layers (`fold.py`: the same cycles, in less time)."""
  app = ApplianceTiming( compiled.dfx, compiled.cores )
  emitter = compiled.emitter()
  res = empty_result( compiled.cores )
  for pos, ( token, want ) in enumerate( schedule( prompt_ids, n_new, tokens ) ):
    step = time_step( compiled, app, emitter, token, pos, want, fold )
    add_step( res, step, "summarization" if pos < len( prompt_ids ) else "generation" )
    res.setdefault( "folded_layers", [] ).append( step["folded"] )
    res.setdefault( "skipped_cycles", [] ).append( step["skipped"] )
    if on_step:
      on_step( pos, step["cycles"] )
  return res
