"""The host: loads a compiled model onto a modelled appliance and generates.

Levels (docs/core.md):
  "func"     the instruction-level functional appliance (`funcsim`): whole
             vectors per instruction over shared arrays; fast, any model size.
  "fl", "cl", "rtl"   the appliance of `core.Core`s built from the stream
             units at that level (pymtl3 simulation); `levels` overrides single
             units (e.g. {"mpu": "rtl"}), with "verilog" for a unit translated
             and imported alone.
  "verilog"  every unit RTL, and the whole appliance (cores, memories, links)
             translated into one Verilator model.

At every stream level the host drives the appliance the same way, through
ports only, from Python components inside the simulated top:
  1. load: every word of each core's HBM and DDR image is written through the
     memory's host port (write requests, acknowledgements counted);
  2. per token step: each core's program streams into its `inst` port from a
     word source; the host ticks until every core is idle and every source
     drained, watching each core's `issued` / `retired` handshakes to charge
     every cycle to an op class (`attribution`);
  3. logits: each core's slice is read back through its DDR host port, the
     real vocabulary columns joined, and the next token picked greedily.

Cycle attribution (which op class and unit each cycle is charged to, the
host's per-step cost) is `attribution`'s; running a step's programs at a
level is a backend's (`backend`: func, a stream level, or perf, the
data-free timing model); the port drivers are `drivers`'.  `Host` is the
generation loop over a backend.
"""

import copy
import time

import numpy as np

from ..compiler import stats as S
from ..gpt2.decoding import check_generation, decode_loop, greedy_token
from ..lib.arith import ceil_div
from .attribution import add_step, empty_result
from .backend import appliance_backend


def emit_step( model, emitter, token, pos, want_logits ):
  """Per core: the program and op classes of one token step."""
  out = [ emitter.step( i, int( token ), pos, want_logits ) for i in range( model.cores ) ]
  return [ p for p, _ in out ], [ c for _, c in out ]


def replayed( tokens, last ):
  """A `choose` for `decode_loop` that picks `tokens` in order, then `last`
  (the step schedule of a generation whose tokens are known or do not
  matter: a step's cycles do not depend on its token's values)."""
  it = iter( list( tokens or [] ) )
  return lambda logits: next( it, last )


def schedule( prompt_ids, n_new, tokens=None ):
  """(token, want_logits) of every step `Host.generate` runs, `tokens`
  (ids after the prompt) chosen, then the last prompt token repeated."""
  steps = []

  def step( token, want ):
    steps.append( ( token, want ) )

  decode_loop( step, prompt_ids, n_new, replayed( tokens, prompt_ids[-1] ) )
  return steps


class Host:
  """The generation loop over a backend: `backend` (any with the interface
  of `backend`: a stream level's, perf's, the kernel's), or the appliance's
  own of `level` (APPLIANCE_LEVELS) for `compiled`; every level by name:
  `levels.host_for`.  `probe` (`waves.Probe`): a wave and line trace of a
  stream level, finished by `close()`."""

  def __init__( s, compiled, level="func", levels=None, max_cycles_per_step=None,
                hbm_depth=None, ddr_depth=None, line_trace=False, backend=None, probe=None ):
    if backend is None:
      backend = appliance_backend( compiled, level, levels, max_cycles_per_step, hbm_depth,
                                   ddr_depth, line_trace, probe=probe )
    s.backend = backend
    s.model = compiled
    s.level = backend.level
    s.emitter = compiled.emitter()
    s.pos = 0
    s.stats = S.empty()
    s.step_seconds = []
    s.res = empty_result( s.level, compiled.cores, backend.counts_busy, backend.stalls )
    s.prompt_len = None

  # the run so far (`results`)
  cycles = property( lambda s: s.res["cycles"] )
  step_cycles = property( lambda s: s.res["step_cycles"] )
  step_classes = property( lambda s: s.res["step_classes"] )
  stage_cycles = property( lambda s: s.res["stage_cycles"] )
  class_cycles = property( lambda s: s.res["class_cycles"] )
  unit_busy = property( lambda s: s.res["unit_busy"] )
  load_cycles = property( lambda s: s.backend.load_cycles )
  readback_cycles = property( lambda s: s.backend.readback_cycles )

  def close( s ):
    """Finish the backend's wave and trace files, if any."""
    close = getattr( s.backend, "close", None )
    if close is not None:
      close()

  def seek( s, pos ):
    """The next step runs at position `pos`, over whatever the K/V cache
    holds (a step's cycles do not depend on its values): one step of a long
    generation, timed without the steps before it."""
    if not 0 <= pos < s.model.layout["max_tokens"]:
      raise ValueError( f"position {pos} is outside the compiled context of "
                        f"{s.model.layout['max_tokens']}" )
    s.pos = pos

  def step( s, token, want_logits ):
    m = s.model
    t0 = time.perf_counter()
    progs, classes = emit_step( m, s.emitter, token, s.pos, want_logits )
    for prog, cls in zip( progs, classes ):
      S.count( prog, cls, m.dfx.d, m.cores, s.stats )
    rec = s.backend.step( progs, classes, ( int( token ), s.pos, want_logits ) )
    stage = "summarization" if s.prompt_len is None or s.pos < s.prompt_len else "generation"
    add_step( s.res, rec, stage )
    s.pos += 1
    logits = s.read_logits() if want_logits else None
    s.step_seconds.append( time.perf_counter() - t0 )
    return logits

  def read_logits( s ):
    """The logits the last step left in DDR (None: a backend without data)."""
    lay = s.model.layout
    seg = lay["split"]["vocab"]
    parts = s.backend.read_ddr( lay["ddr"]["regions"]["logits"],
                                ceil_div( seg, s.model.dfx.mem_word_elems ) )
    if parts is None:
      return None
    return np.concatenate( [ p[ :seg ] for p in parts ] )[ :s.model.gpt.vocab_size ].copy()

  def results( s ):
    """Cycles of the run so far: per step, per stage, per op class, per
    unit (`attribution.empty_result`); the memories' load and readback
    cycles where the backend has data."""
    res = copy.deepcopy( s.res )
    if s.backend.data:
      res.update( load_cycles=s.load_cycles, readback_cycles=s.readback_cycles )
    return res

  def generate( s, prompt_ids, n_new, on_token=None, choose=greedy_token, stop_token=None,
                on_step=None ):
    """Summarization over the prompt, then n_new tokens (fewer if
    `stop_token` comes), each chosen by `choose` (greedy; or a seeded
    `gpt2.decoding.Sampler`); `gpt2.decoding.decode_loop` is the loop.
    `on_step(pos)` is called after each step (progress)."""
    check_generation( prompt_ids, n_new, s.model.layout["max_tokens"],
                      f"the compiled model has max_tokens={s.model.layout['max_tokens']}" )
    return s._decode( prompt_ids, n_new, on_token, choose, stop_token, on_step )

  def replay( s, prompt_ids, n_new, tokens=None, on_step=None ):
    """The steps `generate` runs (`schedule`) with the tokens after the
    prompt given (`tokens`, then the last prompt token repeated), as a
    backend without data (perf) runs them: a step's cycles do not depend on
    its token.  Returns the tokens fed back."""
    return s._decode( prompt_ids, n_new, None, replayed( tokens, prompt_ids[-1] ), None, on_step )

  def _decode( s, prompt_ids, n_new, on_token, choose, stop_token, on_step ):
    s.prompt_len = s.pos + len( prompt_ids )
    step = s.step
    if on_step is not None:
      def step( token, want_logits ):
        logits = s.step( token, want_logits )
        on_step( s.pos )
        return logits
    out, logits = decode_loop( step, prompt_ids, n_new, choose, on_token, stop_token )
    s.last_logits = logits
    return out
