"""`pymtl_dfx.perf` gives the CL appliance's cycles exactly: for every step,
its total, its cycles per op class (the host's attribution) and every
core's busy cycles per unit.  tests/core/test_core_e2e.py checks it on its
own CL runs (the small model at 1, 2 and 4 cores); here the same small
model at other configs: smaller buffers and more HBM channels, other
latencies and a smaller scoreboard, late scoreboard releases, and the paper's core (d=64, l=16, 32
HBM channels, on a 1-layer model 128 wide: a head must be whole entries).

The CL runs are the cost (tens of seconds each): each case runs CL once.
"""

import functools

import pytest

from pymtl_dfx import perf
from pymtl_dfx.appliance.host import Host
from pymtl_dfx.compiler.build import compile_model
from pymtl_dfx.config import DFXConfig, GPT2Config
from pymtl_dfx.gpt2 import random_weights
from pymtl_dfx.perf.appliance import ApplianceTiming
from pymtl_dfx.perf.steps import time_step
from pymtl_dfx.testing.perf_check import assert_perf_equals_cl, step_rows

GPT = GPT2Config( n_layer=2, n_embd=64, n_head=2, vocab_size=128, n_positions=32, name="small" )
# a head is a whole number of register entries: 64 wide for the paper's d=64
GPT_WIDE = GPT2Config( n_layer=1, n_embd=128, n_head=2, vocab_size=128, n_positions=32,
                       name="small-wide" )
PROMPT = [ 5, 17 ]
NEW = 2

CASES = {
  # name: (cores, DFXConfig overrides, prompt, new tokens[, model])
  "1core":  ( 1, [], PROMPT, NEW ),
  # a shallower weight FIFO and partial-sum buffer (narrower tile bands),
  # twice the HBM channels (a tile in fewer beats, other alignments)
  "2core-buffers": ( 2, [ "psum_entries=4", "weight_fifo_entries=2", "hbm_channels=8" ],
                     [ 5 ], 2 ),
  # a smaller scoreboard and instruction buffer, a short ring hop, slow HBM
  # with few outstanding requests
  "4core-latency": ( 4, [ "scoreboard_entries=4", "inst_buffer_entries=2", "ring_latency_ns=100",
                          "hbm_latency_ns=300", "mem_outstanding=16" ], [ 5 ], 2 ),
  # a control unit that frees a scoreboard entry 3 cycles after its done
  # token (every waiting instruction issues later)
  "2core-done-latency": ( 2, [ "done_latency_cycles=3" ], [ 5 ], 2 ),
  # the paper's core: d=64, l=16, 32 HBM channels, full-size buffers
  "1core-paper": ( 1, [ "d=64", "l=16", "hbm_channels=32", "vreg_entries=2048",
                        "mreg_entries=2048", "psum_entries=1024" ], [ 5 ], 2, GPT_WIDE ),
}


def dfx_config( cores, overrides ):
  # test_core_e2e's config, then the case's changes
  base = DFXConfig( d=32, l=8, cores=cores, hbm_channels=4, vreg_entries=256,
                    mreg_entries=16, psum_entries=16 )
  return base.with_overrides( overrides ) if overrides else base


@functools.lru_cache( maxsize=None )
def compiled( name ):
  cores, over, prompt, new, *gpt = CASES[ name ]
  w = random_weights( ( gpt or [ GPT ] )[0], 7 ).to_fp16()
  return compile_model( w, dfx_config( cores, over ), cores, max_tokens=len( prompt ) + new )


@functools.lru_cache( maxsize=None )
def cl_run( name ):
  _, _, prompt, new, *_ = CASES[ name ]
  host = Host( compiled( name ), "cl" )
  tokens = host.generate( prompt, new )
  return tokens, host.results()


@pytest.mark.parametrize( "name", [ n for n in CASES if n != "1core" ] )
def test_perf_equals_cl( name ):
  _, _, prompt, new, *_ = CASES[ name ]
  tokens, cl = cl_run( name )
  assert_perf_equals_cl( compiled( name ), prompt, new, tokens, cl )


def test_generated_tokens_do_not_change_cycles():
  """Here a step's timing does not depend on which token it embeds (an
  embedding row is 2 DDR words: every token's row is read in the same
  beats), so perf's default (the last prompt token repeated) gives the
  same cycles.  The cases above give perf CL's own tokens."""
  a = perf.run( compiled( "1core" ), PROMPT, NEW, tokens=[ 99 ] )
  b = perf.run( compiled( "1core" ), PROMPT, NEW )
  assert a["step_classes"] == b["step_classes"] and a["step_cycles"] == b["step_cycles"]


def test_schedule_matches_host_generate():
  # Host.generate: the prompt's steps (logits after the last), then one
  # step per generated token but the last, each with logits
  assert perf.schedule( [ 5, 17 ], 2, [ 40 ] ) == [ ( 5, False ), ( 17, True ), ( 40, True ) ]
  assert perf.schedule( [ 5 ], 1 ) == [ ( 5, True ) ]
  assert perf.schedule( [ 5, 6 ], 3 ) == [ ( 5, False ), ( 6, True ), ( 6, True ), ( 6, True ) ]


def test_one_step_of_a_planned_model_at_a_later_position():
  """The full-size check (`sim/check_perf_full_size.py`) runs one step of a
  planned model (no weights: memories zeroed) at CL at a position reached
  without the steps before it; here the same on the small model: CL ==
  perf's step at that position, per op class and unit."""
  model = perf.planned( GPT, dfx_config( 1, [] ), 1 )
  pos = 20
  host = Host( model, "cl" )
  host.seek( pos )
  host.step( 3, True )
  cl = host.results()
  want = time_step( model, ApplianceTiming( model.dfx, 1 ), model.emitter(), 3, pos, True )
  assert len( cl["step_cycles"] ) == 1
  rows = step_rows( want, cl )
  assert len( rows ) == 1 + len( cl["step_classes"][0] ) + 4
  assert [ ( n, a ) for n, a, b in rows if a != b ] == []
  assert host.load_cycles == 0 and cl["readback_cycles"] > 0


def test_a_planned_model_has_no_functional_level_nor_positions_past_its_context():
  model = perf.planned( GPT, dfx_config( 1, [] ), 1, max_tokens=8 )
  with pytest.raises( ValueError, match="functional appliance computes on the weights" ):
    Host( model, "func" )
  host = Host( model, "cl" )
  with pytest.raises( ValueError, match="position 8 is outside the compiled context of 8" ):
    host.seek( 8 )
