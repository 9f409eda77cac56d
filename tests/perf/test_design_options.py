"""The design options past DFX (`config.DESIGN_FIELDS`) act in CL and in
perf alike: for each option a non-default value, on the small model of
test_perf_vs_cl (one step with logits), gives perf == CL (every step, op
class and unit), and it changes the cycles from the defaults' (perf's,
which test_core_e2e and test_perf_vs_cl hold equal to CL's); an option
that changes only cycles (`TIMING_ONLY`) keeps the default design's tokens
and logits."""

import functools

import numpy as np
import pytest

from pymtl_dfx import numerics as N, perf
from pymtl_dfx.appliance.host import Host
from pymtl_dfx.compiler.build import compile_model
from pymtl_dfx.config import DESIGN_FIELDS
from pymtl_dfx.gpt2 import random_weights
from pymtl_dfx.testing.perf_check import assert_perf_equals_cl

from test_perf_vs_cl import GPT, dfx_config

PROMPT, NEW = [ 5 ], 1
MAX_TOKENS = 4

# field: (cores, a non-default value, other fields it needs to act)
CHANGES = {
  "mpu_post_bypass": ( 1, "1" ),
}
# the options that change only cycles (their numerics are the default's)
TIMING_ONLY = { "mpu_post_bypass" }


def test_every_design_field_is_exercised():
  assert set( CHANGES ) == set( DESIGN_FIELDS )


@functools.lru_cache( maxsize=None )
def compiled( cores, override=None, *more ):
  w = random_weights( GPT, 7 ).to_fp16()
  cfg = dfx_config( cores, ( [ override ] if override else [] ) + list( more ) )
  return compile_model( w, cfg, cores, max_tokens=MAX_TOKENS )


@pytest.mark.parametrize( "field", list( CHANGES ) )
def test_design_field_acts_in_cl_and_perf_alike( field ):
  cores, value, *needs = CHANGES[ field ]
  c = compiled( cores, f"{field}={value}", *needs )
  assert str( getattr( c.dfx, field ) ) == value
  host = Host( c, "cl" )
  tokens = host.generate( PROMPT, NEW )
  cl = host.results()
  assert_perf_equals_cl( c, PROMPT, NEW, tokens, cl )
  base = perf.run( compiled( cores, *needs ), PROMPT, NEW )
  assert cl["step_cycles"] != base["step_cycles"], f"{field}={value} changed no cycle"
  if field in TIMING_ONLY:
    # the values are the default design's: its functional model's tokens
    # and last logits, bit for bit
    ref = Host( compiled( cores, *needs ), "func" )
    assert ref.generate( PROMPT, NEW ) == tokens
    assert np.array_equal( N.bits( ref.read_logits() ), N.bits( host.read_logits() ) )
