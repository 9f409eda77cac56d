"""The host: loads a compiled model onto a modelled appliance and generates.

Per token step it emits every core's program, loads it into the control
units, runs the simulation until all cores are idle, and (for the last
prompt token and every generated one) reads each core's logits slice from
its DDR, joins the real vocabulary columns and picks the next token greedily.
"""

import time

import numpy as np
from pymtl3 import DefaultPassGroup

from ..compiler import stats as S
from ..gpt2.decoding import greedy_token
from ..isa import encode
from ..funcsim.ApplianceFunc import ApplianceFunc

LEVELS = { "fl": ApplianceFunc }


class StepTimeout( RuntimeError ):
  pass


class Host:

  def __init__( s, compiled, level="fl", max_cycles_per_step=None ):
    if level not in LEVELS:
      raise ValueError( f"level {level!r} is not available for the appliance yet "
                        f"(have: {', '.join(LEVELS)})" )
    s.model = compiled
    s.level = level
    s.emitter = compiled.emitter()
    s.max_cycles = max_cycles_per_step
    s.appliance = LEVELS[ level ]( compiled.dfx, compiled.images, compiled.readonly_hbm_words )
    s.appliance.apply( DefaultPassGroup( linetrace=False ) )
    s.appliance.sim_reset()
    s.pos = 0
    s.stats = S.empty()
    s.cycles = 0
    s.step_seconds = []

  def step( s, token, want_logits ):
    m = s.model
    limit = s.max_cycles
    t0 = time.perf_counter()
    n_inst = 0
    for i, core in enumerate( s.appliance.cores ):
      prog, classes = s.emitter.step( i, int( token ), s.pos, want_logits )
      S.count( prog, classes, m.dfx.d, m.cores, s.stats )
      core.ctrl.load( [ encode( inst ) for inst in prog ] )
      n_inst = max( n_inst, len( prog ) )
    limit = limit or 100 * n_inst + 10_000
    start = s.appliance.sim_cycle_count()
    while not s.appliance.idle():
      if s.appliance.sim_cycle_count() - start > limit:
        stuck = [ f"core {i}: {c.ctrl.line_trace().strip()}"
                  for i, c in enumerate( s.appliance.cores ) ]
        raise StepTimeout( f"step at position {s.pos} did not finish in {limit} cycles; "
                           + "; ".join( stuck ) )
      s.appliance.sim_tick()
    s.cycles += s.appliance.sim_cycle_count() - start
    s.pos += 1
    s.step_seconds.append( time.perf_counter() - t0 )
    return s.read_logits() if want_logits else None

  def read_logits( s ):
    lay = s.model.layout
    seg = lay["split"]["vocab"]
    addr = lay["ddr"]["regions"]["logits"]
    parts = [ ddr[ addr: ].reshape( -1 )[ :seg ] for _, ddr in s.model.images ]
    return np.concatenate( parts )[ :s.model.gpt.vocab_size ].copy()

  def generate( s, prompt_ids, n_new, on_token=None ):
    """Greedy generation: summarization over the prompt, then n_new tokens."""
    if not prompt_ids:
      raise ValueError( "generation needs at least one prompt token" )
    if len( prompt_ids ) + n_new > s.model.layout["max_tokens"]:
      raise ValueError( f"{len(prompt_ids)} prompt + {n_new} new tokens exceed the compiled "
                        f"context of {s.model.layout['max_tokens']}" )
    out = []
    logits = None
    for k, tok in enumerate( prompt_ids ):
      logits = s.step( tok, want_logits=( k == len( prompt_ids ) - 1 ) )
    for k in range( n_new ):
      nxt = greedy_token( logits )
      out.append( nxt )
      if on_token:
        on_token( nxt )
      if k + 1 < n_new:
        logits = s.step( nxt, want_logits=True )
    s.last_logits = logits
    return out
