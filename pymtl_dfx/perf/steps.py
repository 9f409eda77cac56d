"""Token steps as the host runs them, timed by the data-free appliance.

`run(compiled, prompt_ids, n_new)` is `Host.replay` (`Host.generate`'s
loop and step schedule, the tokens given) over the perf backend (`backend.PerfBackend`)
and returns what `Host.results()` returns at CL: cycles in total, per step,
per stage, per op class (the host's attribution rule) and busy cycles per
unit, plus the stalled cycles per unit and cause, the decoder layers
folded and the cycles they stood for per step.  A generated token changes
only the embedding row the step reads, so `tokens` (ids after the prompt)
may be given; by default the last prompt token is repeated.
"""

from dataclasses import dataclass

from ..appliance import attribution
from ..appliance.host import Host, emit_step, schedule   # noqa: F401
from ..compiler.build import plan
from ..compiler.emit import StepEmitter
from ..config import DFXConfig, GPT2Config
from .backend import PerfBackend
from .core import STALLS

add_step = attribution.add_step


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


def unplanned( gpt, dfx, cores, max_tokens=None ):
  """A Planned model before its plan: only the layout's fields the step
  cache's key reads (`StepCache.key`: cores and max_tokens, as `plan_layout`
  sets them), so that its steps are looked up, and its time estimated,
  before it is laid out.  Not for timing: `planned` it first."""
  return Planned( gpt, dfx, dict( cores=cores, max_tokens=max_tokens or gpt.n_positions ) )


def time_step( compiled, app, emitter, token, pos, want, fold=True ):
  """One step on `app` (an `ApplianceTiming` of the model's cores): its
  timing record (`PerfBackend.step`)."""
  progs, classes = emit_step( compiled, emitter, token, pos, want )
  backend = PerfBackend( compiled.dfx, compiled.cores, compiled, fold, app, emitter )
  return backend.step( progs, classes, ( int( token ), pos, want ) )


def empty_result( cores ):
  """perf's run result before its first step (`attribution.empty_result`)."""
  return attribution.empty_result( "perf", cores, True, STALLS )


def run( compiled, prompt_ids, n_new, tokens=None, on_step=None, fold=True ):
  """`compiled`: a `CompiledModel` or a `Planned` one; `fold`: fold
  repeated decoder layers (`fold.py`: the same cycles, in less time);
  `on_step(pos, cycles)` after each step."""
  host = Host( compiled, backend=PerfBackend( compiled.dfx, compiled.cores, compiled, fold ) )
  each = None
  if on_step:
    def each( pos ):
      on_step( pos - 1, host.step_cycles[-1] )
  host.replay( list( prompt_ids ), n_new, tokens, each )
  return host.results()
