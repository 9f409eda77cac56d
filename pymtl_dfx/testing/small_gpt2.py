"""The small GPT-2 of the end-to-end tests: compiled, its DFX-numerics
reference, and a generation on the appliance at a level
(tests/core/test_core_e2e.py, tests/kernel/test_kernel_cosim.py).

`compiled(cores, long, d)`: the weights and the compiled model of
`core_mixing.GPT` (or the one-layer `GPT_LONG`) for `core_mixing.dfx_config`;
`reference(...)`: the reference's tokens and final logits' bits;
`run(cores, level, ...)`: a generation through `Host` (tokens, final
logits' bits, the host); `cl_run`: the CL run, once per process.
"""

import functools
import time

from .. import numerics as N
from ..appliance.host import Host
from ..compiler.build import compile_model
from ..config import GPT2Config
from ..gpt2 import DFXForward, generate, random_weights
from ..gpt2.decoding import greedy_token
from .core_mixing import GPT, SMALL, dfx_config

PROMPT = [ 5, 17 ]
NEW = 2

# the longer generation: one layer (half the cycles of a step), a context
# past d; its memories are given the depths of the 2-layer model above so
# the Verilated appliance is the same model (one build for both tests)
GPT_LONG = GPT2Config( n_layer=1, n_embd=64, n_head=2, vocab_size=128, n_positions=48,
                       name="small-long" )
PROMPT_LONG = [ ( 7 * k + 3 ) % 128 for k in range( 30 ) ]
NEW_LONG = 5


@functools.lru_cache( maxsize=None )
def compiled( cores, long=False, d=32 ):
  gpt, prompt, new = ( GPT_LONG, PROMPT_LONG, NEW_LONG ) if long else ( GPT, PROMPT, NEW )
  w = random_weights( gpt, 7 ).to_fp16()
  return w, compile_model( w, dfx_config( cores, d ), cores, max_tokens=len( prompt ) + new )


@functools.lru_cache( maxsize=None )
def reference( cores, long=False, d=32 ):
  w, _ = compiled( cores, long, d )
  prompt, new = ( PROMPT_LONG, NEW_LONG ) if long else ( PROMPT, NEW )
  ref = DFXForward( w, dfx_config( cores, d ) )
  ref.reset()
  for k, tok in enumerate( prompt ):
    logits = ref.step( tok, logits=( k == len( prompt ) - 1 ) )
  tokens = [ greedy_token( logits ) ]
  while len( tokens ) < new:
    logits = ref.step( tokens[-1] )
    tokens.append( greedy_token( logits ) )
  assert tokens == generate( DFXForward( w, dfx_config( cores, d ) ), prompt, new )
  return tokens, N.bits( logits ).copy()


def run( cores, level, levels=None, long=False, d=32 ):
  """A generation at `level` (tokens, final logits' bits, the host with
  `build_and_load` and `seconds` timed)."""
  _, cm = compiled( cores, long, d )
  prompt, new = ( PROMPT_LONG, NEW_LONG ) if long else ( PROMPT, NEW )
  t0 = time.perf_counter()
  host = Host( cm, level, levels, **SMALL[d][1] )
  host.build_and_load = time.perf_counter() - t0
  tokens = host.generate( prompt, new )
  host.seconds = time.perf_counter() - t0
  return tokens, N.bits( host.last_logits ).copy(), host


@functools.lru_cache( maxsize=None )
def cl_run( cores, long=False, d=32 ):
  return run( cores, "cl", long=long, d=d )
