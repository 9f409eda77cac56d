"""The small GPT-2 of the end-to-end tests: compiled, its DFX-numerics
reference, and a generation on the appliance at a level
(tests/core/test_core_e2e.py, tests/kernel/test_kernel_cosim.py).

`compiled(cores, long, d, model)`: the weights and the compiled model of
`core_mixing.GPT` (or the one-layer `GPT_LONG`, or `model="attn"`:
`GPT_ATTN`, or `model="streaming"` / `"streaming-wide"`: `GPT` with that
profile, or
`model="partials"`: `GPT` with `reduce_partials=4`, or `model="rowsplit"`:
`GPT` with `proj_row_split=1`, or `model="lnfold"`: `GPT` with `ln_fold=1`,
or `model="ln2fold"`: `GPT` with `ln2_fold=1` (and `vpu_gelu=1`),
or `model="read_ahead"`: `GPT` with `weight_read_ahead=1`, l=32 and a
64-tile weight FIFO, or `model="u280"`: `GPT` on the U280's 32 HBM
channels) for `core_mixing.dfx_config`;
`reference(...)`: the reference's tokens and final logits' bits;
`run(cores, level, ...)`: a generation through `Host` (tokens, final
logits' bits, the host); `cl_run`: the CL run, once per process;
`cl_results`: its `results()` (the cycle reference of the other levels),
kept on disk for the next process when DFX_CL_RUNS names a folder.
"""

import functools
import hashlib
import os
import pathlib
import pickle
import sys
import time

from .. import numerics as N
from ..atomic import atomic_open
from .. import profiles
from ..levels import host_for
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

# gpt2-xl-dfx-1600's shape in small: the residual and the MLP 96 wide (on 2
# cores each core's 48 columns pad to 64, as 1600's 400 pad to 448 on 4),
# the attention 2 heads of 32 = 64 wide inside.  Its 384-row MLP c_proj
# needs x buffers of 16 entries (mreg_entries=32); no Verilated appliance
# runs it, so its memories take the depths its images need.
GPT_ATTN = GPT2Config( n_layer=1, n_embd=96, n_head=2, head_dim=32, vocab_size=128,
                       n_positions=32, name="small-attn64" )
ATTN_DFX = dict( mreg_entries=32 )

# six heads of 32 (3 a core on 2 cores): the pipelined heads with head
# j + 2's DMA work in softmax(j)'s wait (`emit.StepEmitter.heads_in_reduction_wait`)
GPT_HEADS = GPT2Config( n_layer=1, n_embd=64, n_head=6, head_dim=32, vocab_size=128,
                        n_positions=32, name="small-heads6" )

# model -> (config, prompt, new tokens, DFXConfig changes, fixed memory depths);
# "streaming" is the small model with the profile `streaming`'s design
# options on (the random core programs' streaming runs build the same
# Verilated appliance)
MODELS = {
  "small": ( GPT, PROMPT, NEW, {}, True ),
  "streaming": ( GPT, PROMPT, NEW, profiles.values( "streaming" ), True ),
  # the MPU as wide as d (l=32 at d=32) fed ahead through a 512-tile FIFO;
  # no Verilated appliance runs it, so its memories take the depths it needs
  "streaming-wide": ( GPT, PROMPT, NEW, profiles.values( "streaming-wide" ), False ),
  "long":  ( GPT_LONG, PROMPT_LONG, NEW_LONG, {}, True ),
  "attn":  ( GPT_ATTN, PROMPT, NEW, ATTN_DFX, False ),
  # the VPU's interleaved reductions (at d=8 a LayerNorm reduces 8 chunks:
  # two rounds of the 4 partials)
  "partials": ( GPT, PROMPT, NEW, dict( reduce_partials=4 ), True ),
  # the c_proj matrices split by rows (on 4 cores: 2 of them hold only a
  # padding head)
  "rowsplit": ( GPT, PROMPT, NEW, dict( proj_row_split=1 ), True ),
  # ln_1 folded into c_attn (a numerics variant and a compiler option)
  "lnfold": ( GPT, PROMPT, NEW, dict( ln_fold=1 ), True ),
  # ln_2 folded into c_fc, its GELU on the VPU (a numerics variant and a
  # compiler option on the VPU's GELU pipe)
  "ln2fold": ( GPT, PROMPT, NEW, dict( vpu_gelu=1, ln2_fold=1 ), True ),
  # the weight reads moved ahead, for an MPU twice the HBM's rate (l=32 at
  # d=32 on 4 channels) and a FIFO that holds what streams meanwhile
  "read_ahead": ( GPT, PROMPT, NEW, dict( weight_read_ahead=1, l=32, weight_fifo_entries=64 ),
                  False ),
  "heads": ( GPT_HEADS, PROMPT, NEW, profiles.values( "streaming" ), False ),
  # the U280's 32 HBM pseudo-channels (the co-simulated kernel on one card,
  # as `dfx fpga` writes it for a card)
  "u280": ( GPT, PROMPT, NEW, dict( hbm_channels=32 ), True ),
}


def _model( long, model ):
  return MODELS[ model or ( "long" if long else "small" ) ]


def _dfx( cores, d, long, model ):
  return dfx_config( cores, d ).replace( **_model( long, model )[3] )


@functools.lru_cache( maxsize=None )
def compiled( cores, long=False, d=32, model=None ):
  gpt, prompt, new, _, _ = _model( long, model )
  w = random_weights( gpt, 7 ).to_fp16()
  return w, compile_model( w, _dfx( cores, d, long, model ), cores,
                           max_tokens=len( prompt ) + new )


@functools.lru_cache( maxsize=None )
def reference( cores, long=False, d=32, model=None ):
  w, _ = compiled( cores, long, d, model )
  _, prompt, new, _, _ = _model( long, model )
  ref = DFXForward( w, _dfx( cores, d, long, model ) )
  ref.reset()
  for k, tok in enumerate( prompt ):
    logits = ref.step( tok, logits=( k == len( prompt ) - 1 ) )
  tokens = [ greedy_token( logits ) ]
  while len( tokens ) < new:
    logits = ref.step( tokens[-1] )
    tokens.append( greedy_token( logits ) )
  assert tokens == generate( DFXForward( w, _dfx( cores, d, long, model ) ), prompt, new )
  return tokens, N.bits( logits ).copy()


def run( cores, level, levels=None, long=False, d=32, model=None ):
  """A generation at `level` (tokens, final logits' bits, the host with
  `build_and_load` and `seconds` timed)."""
  _, cm = compiled( cores, long, d, model )
  _, prompt, new, _, fixed_depths = _model( long, model )
  t0 = time.perf_counter()
  host = host_for( cm, level, levels, **( SMALL[d][1] if fixed_depths else {} ) )
  host.build_and_load = time.perf_counter() - t0
  tokens = host.generate( prompt, new )
  host.seconds = time.perf_counter() - t0
  return tokens, N.bits( host.last_logits ).copy(), host


@functools.lru_cache( maxsize=None )
def cl_run( cores, long=False, d=32, model=None ):
  got = run( cores, "cl", long=long, d=d, model=model )
  path = _results_path( cores, long, d, model )
  if path is not None:
    path.parent.mkdir( parents=True, exist_ok=True )
    with atomic_open( path, "wb" ) as f:
      pickle.dump( got[2].results(), f )
  return got


@functools.lru_cache( maxsize=None )
def cl_results( cores, long=False, d=32, model=None ):
  """The CL run's results: those a process of this checkout stored for the
  same package source (make test's plain pass runs every cl case before the
  Verilator pass compares its models' cycles with them), else a CL run."""
  path = _results_path( cores, long, d, model )
  if path is not None and path.exists():
    return pickle.loads( path.read_bytes() )
  return cl_run( cores, long, d, model )[2].results()


@functools.lru_cache( maxsize=None )
def _source_hash():
  # every module of the package: a change anywhere may change a cycle
  h = hashlib.sha256( repr( sys.version_info[ :2 ] ).encode() )
  root = pathlib.Path( __file__ ).resolve().parents[ 1 ]
  for f in sorted( root.rglob( "*.py" ) ):
    h.update( str( f.relative_to( root ) ).encode() + f.read_bytes() )
  return h.hexdigest()[ :24 ]


def _results_path( cores, long, d, model ):
  folder = os.environ.get( "DFX_CL_RUNS" )
  if not folder:
    return None
  args = hashlib.sha256( repr( ( cores, long, d, model,
                                 _dfx( cores, d, long, model ) ) ).encode() ).hexdigest()[ :16 ]
  return pathlib.Path( folder ) / _source_hash() / f"{args}.pickle"
