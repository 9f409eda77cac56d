"""The design options past DFX (`config.DESIGN_FIELDS`) act in CL and in
perf alike: for each option a non-default value, on the small model of
test_perf_vs_cl (one step with logits), gives perf == CL (every step, op
class and unit), changes the cycles from the default design's, and gives
the tokens and logits of its own functional models (funcsim and FL at its
config); an option that changes only cycles (`TIMING_ONLY`) also gives the
default design's, bit for bit (the others change the numerics by a named
variant in `numerics`).  A bad value of an option is a ConfigError naming
it, from the config and from the command line.  At its default an option
leaves `str(DFXConfig)` (pymtl3's module names of every RTL component
taking the config) as it was before the option existed."""

import dataclasses
import functools

import numpy as np
import pytest

from pymtl_dfx import cli, perf
from pymtl_dfx.appliance.host import Host
from pymtl_dfx.compiler.build import compile_model
from pymtl_dfx.config import DESIGN_FIELDS, ConfigError, DFXConfig
from pymtl_dfx.gpt2 import DFXForward, greedy_token, random_weights
from pymtl_dfx.testing.perf_check import assert_perf_equals_cl

from test_perf_vs_cl import GPT, dfx_config

PROMPT, NEW = [ 5 ], 1
MAX_TOKENS = 4

# field: (cores, a non-default value[, other fields it is measured with, the
# base design's too])
OPTIONS = {
  "mpu_raster_walk": ( 1, "1" ),
  "mpu_post_bypass": ( 1, "1" ),
  # the small model has 2 heads, both on the one core: they pipeline
  "attn_head_pipeline": ( 1, "1" ),
  # a numerics variant (`numerics.reduce_sum`'s partials): its own models' values
  "reduce_partials": ( 1, "8" ),
  # the max reductions' own comparator pipes (LayerNorm's REDMAXABS, softmax's REDMAX)
  "vpu_max_tree": ( 1, "1" ),
  # a numerics variant (`numerics.row_split_conv1d`) on more than one core
  # (one core's row split is the whole matrix): 2 cores, one head each
  "proj_row_split": ( 2, "1" ),
  # a numerics variant (`numerics.fold_layernorm`, `fold_correct`) and a
  # compiler option: its own models' values
  "ln_fold": ( 1, "1" ),
  # the VPU's GELU pipe: hardware no program of the default compiler uses,
  # so the cycles stay the default design's (`UNUSED_ALONE`)
  "vpu_gelu": ( 1, "1" ),
  # ln_2 folded into c_fc, a numerics variant and a compiler option on the
  # VPU's GELU (the base design has the GELU pipe too)
  "ln2_fold": ( 1, "1", ( "vpu_gelu=1", ) ),
  # the test config's MPU takes a tile a cycle, its 4 channels half of one:
  # reads run ahead into a FIFO deep enough to hold them
  "weight_read_ahead": ( 1, "1", ( "weight_fifo_entries=64", ) ),
  # the queue in front of the DMA, with the read-ahead that then moves reads
  # over matrices (the base design has the read-ahead too)
  "dma_inst_queue": ( 1, "8", ( "weight_read_ahead=1", "weight_fifo_entries=64" ) ),
}
# field: values the config refuses
BAD = {
  "mpu_raster_walk": ( 2, -1, "x", 1.0, True ),
  "mpu_post_bypass": ( 2, -1, "x", 1.0, True ),
  "attn_head_pipeline": ( 2, -1, "x", 1.0, True ),
  "reduce_partials": ( 0, 3, -1, 6, "x", 2.0, True ),
  "vpu_max_tree": ( 2, -1, "x", 1.0, True ),
  "proj_row_split": ( 2, -1, "x", 1.0, True ),
  "ln_fold": ( 2, -1, "x", 1.0, True ),
  "vpu_gelu": ( 2, -1, "x", 1.0, True ),
  "ln2_fold": ( 2, -1, "x", 1.0, True ),
  "weight_read_ahead": ( 2, -1, "x", 1.0, True ),
  "dma_inst_queue": ( -1, "x", 1.0, True ),
}
# the options that change only cycles: their tokens and logits are the
# default design's (the others' are their own numerics variant's)
TIMING_ONLY = { "mpu_raster_walk", "mpu_post_bypass", "attn_head_pipeline", "vpu_max_tree",
                "weight_read_ahead", "dma_inst_queue", "vpu_gelu" }
# the options that add hardware only another option's programs use: alone
# they change no cycle
UNUSED_ALONE = { "vpu_gelu" }
# the numerics variants whose order changes this model's logits (at d=32 a
# reduction of the 64-wide residual has 2 chunks: 8 partials add them as
# one running value does)
CHANGES_LOGITS = { "proj_row_split", "ln_fold", "ln2_fold" }


def test_every_design_field_is_exercised():
  assert set( OPTIONS ) == set( DESIGN_FIELDS ) == set( BAD )


@functools.lru_cache( maxsize=None )
def compiled( cores, override=None, extra=() ):
  w = random_weights( GPT, 7 ).to_fp16()
  cfg = dfx_config( cores, list( extra ) + ( [ override ] if override else [] ) )
  return compile_model( w, cfg, cores, max_tokens=MAX_TOKENS )


def bits( logits ):
  return np.asarray( logits, np.float16 ).view( np.uint16 )


def reference( c ):
  """(tokens, last logits' bits) of the DFX-numerics reference at c's config."""
  ref = DFXForward( random_weights( GPT, 7 ).to_fp16(), c.dfx )
  for tok in PROMPT[ :-1 ]:
    ref.step( tok, logits=False )
  tokens, logits = [], ref.step( PROMPT[-1] )
  while True:
    tokens.append( greedy_token( logits ) )
    if len( tokens ) == NEW:
      return tokens, bits( logits )
    logits = ref.step( tokens[-1] )


@pytest.mark.parametrize( "field", list( OPTIONS ) )
def test_design_option_acts_in_cl_and_perf_alike( field ):
  cores, value, *extra = OPTIONS[ field ]
  extra = tuple( extra[0] ) if extra else ()
  c = compiled( cores, f"{field}={value}", extra )
  assert getattr( c.dfx, field ) == int( value )
  host = Host( c, "cl" )
  tokens = host.generate( PROMPT, NEW )
  cl = host.results()
  assert_perf_equals_cl( c, PROMPT, NEW, tokens, cl )
  base = perf.run( compiled( cores, extra=extra ), PROMPT, NEW )
  if field in UNUSED_ALONE:
    assert cl["step_cycles"] == base["step_cycles"], f"{field}={value} changed the cycles"
  else:
    assert cl["step_cycles"] != base["step_cycles"], f"{field}={value} changed no cycle"
  if field in TIMING_ONLY:
    ref = Host( compiled( cores, extra=extra ), "func" )
    assert ref.generate( PROMPT, NEW ) == tokens
    assert np.array_equal( bits( ref.last_logits ), bits( host.last_logits ) )
  else:
    # its own numerics variant: the DFX-numerics reference at its config
    want = reference( c )
    assert want[0] == tokens and np.array_equal( want[1], bits( host.last_logits ) )
    if field in CHANGES_LOGITS:
      other = reference( compiled( cores ) )
      assert not np.array_equal( want[1], other[1] ), f"{field}={value} changed no logit"
  # the option's own functional models (funcsim and FL at its config) agree
  for level in ( "func", "fl" ):
    other = Host( c, level )
    assert other.generate( PROMPT, NEW ) == tokens, level
    assert np.array_equal( bits( other.last_logits ), bits( host.last_logits ) ), level


@pytest.mark.parametrize( "field,value", [ ( f, v ) for f, vs in BAD.items() for v in vs ] )
def test_bad_design_option_names_the_field( field, value ):
  with pytest.raises( ConfigError, match=rf"{field}={value!r} \(must be" ):
    DFXConfig( **{ field: value } )


@pytest.mark.parametrize( "field", list( BAD ) )
def test_bad_design_option_on_the_command_line( field, capsys ):
  """`--set` refuses a bad value as a usage error (exit 2) in one line naming
  the field (no traceback)."""
  for value in ( BAD[ field ][0], "x" ):
    assert cli.main( [ "perf", "--model", "tiny", "--in", "1", "--out", "1", "--no-cache",
                      "--set", f"{field}={value}" ] ) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith( "dfx perf:" ) and f"{field}=" in err and "\n" not in err
    assert "Traceback" not in err


def test_a_default_option_leaves_the_module_names():
  """str() of the config (what pymtl3 names modules after) omits an option
  at its default, so the default design's Verilog is today's; any other
  value shows, so the two designs get different modules."""
  cfg = DFXConfig()
  # the options are the last fields: str() is repr() cut before them
  assert str( cfg ) == repr( cfg )[ :len( str( cfg ) ) - 1 ] + ")"
  for f in dataclasses.fields( cfg ):
    assert ( f"{f.name}=" in str( cfg ) ) == ( f.name not in DESIGN_FIELDS )
  for field, ( _, value, *extra ) in OPTIONS.items():
    others = dict( kv.split( "=" ) for kv in ( extra[0] if extra else () ) )
    on = cfg.replace( **{ k: int( v ) for k, v in others.items() }, **{ field: int( value ) } )
    assert f"{field}={int( value )!r}" in str( on )
