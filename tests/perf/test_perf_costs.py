"""The costs of the U280 system (`config.COST_FIELDS`, docs/perf.md "Costs
of the U280 system") act in CL and in perf alike: for each cost field a
non-default value, on the small model of test_perf_vs_cl (one step with
logits; 1 core, 2 for the ring's fields, which a lone core never uses),
gives perf == CL (every step, op class and unit), and it changes the cycles
from the defaults' (perf's, which test_core_e2e and test_perf_vs_cl hold
equal to CL's), except DDR bandwidth: the small model's DDR transfers are a
few words each and latency-bound, so there it changes no cycle (its rate
is checked alone in tests/units/memory).  The host's per-step cost is in
the op-class breakdown, which still sums to the total.  Each profile that
sets cost fields (`profiles.PROFILES`: the Aurora ring's) does the same
with all its cost values at once."""

import functools

import pytest

from pymtl_dfx import perf, profiles
from pymtl_dfx.appliance.host import Host
from pymtl_dfx.compiler.build import compile_model
from pymtl_dfx.config import CALIBRATION_FIELDS, COST_FIELDS
from pymtl_dfx.gpt2 import random_weights
from pymtl_dfx.testing.perf_check import assert_perf_equals_cl

from test_perf_vs_cl import GPT, dfx_config

PROMPT, NEW = [ 5 ], 1
MAX_TOKENS = 4          # the breakdown test runs 3 steps

# field: (cores, a non-default value, other fields it needs to act)
CHANGES = {
  "hbm_channel_gbps":  ( 1, "6.4" ),       # half the 200 MHz port's 12.8 GB/s
  "hbm_latency_ns":    ( 1, "300" ),
  "hbm_axi_mhz":       ( 1, "300" ),       # the HBM side at 8.69 GB/s binds
  "hbm_refresh_ns":    ( 1, "350" ),       # the port binds: 1 - 350/3900 of it
  "hbm_refresh_interval_ns": ( 1, "1000", "hbm_refresh_ns=260" ),
  "ddr_gbps":          ( 1, "12.81" ),     # 2 DDR ports of 1/2 word a cycle
  "ddr_latency_ns":    ( 1, "300" ),
  "ring_gbps":         ( 2, "25" ),
  "ring_latency_ns":   ( 2, "2000" ),
  "ring_frame_overhead_bytes": ( 2, "200" ),
  "host_step_us":      ( 1, "1" ),
  # the calibration parameters act through the same rules
  "hbm_stream_efficiency": ( 1, "0.55" ),
  "ring_hop_overhead_ns":  ( 2, "1500" ),
  "done_latency_cycles":   ( 1, "5" ),
}
# every new field at once, on the ring (the profile `paper`'s and the
# calibration's mechanisms together, at values of neither)
ALL_NEW = ( "hbm_axi_mhz=350", "hbm_refresh_ns=300", "hbm_refresh_interval_ns=2000",
            "hbm_latency_ns=250", "host_step_us=0", "hbm_stream_efficiency=0.7",
            "ring_hop_overhead_ns=700", "done_latency_cycles=2" )


def test_every_cost_field_is_exercised():
  assert set( CHANGES ) == set( COST_FIELDS ) | set( CALIBRATION_FIELDS )


@functools.lru_cache( maxsize=None )
def compiled( cores, override=None, *more ):
  w = random_weights( GPT, 7 ).to_fp16()
  cfg = dfx_config( cores, ( [ override ] if override else [] ) + list( more ) )
  return compile_model( w, cfg, cores, max_tokens=MAX_TOKENS )


@pytest.mark.parametrize( "field", list( CHANGES ) )
def test_cost_field_acts_in_cl_and_perf_alike( field ):
  cores, value, *needs = CHANGES[ field ]
  c = compiled( cores, f"{field}={value}", *needs )
  host = Host( c, "cl" )
  tokens = host.generate( PROMPT, NEW )
  cl = host.results()
  assert_perf_equals_cl( c, PROMPT, NEW, tokens, cl )
  base = perf.run( compiled( cores, *needs ), PROMPT, NEW )
  if field == "ddr_gbps":
    assert cl["step_cycles"] == base["step_cycles"]
  else:
    assert cl["step_cycles"] != base["step_cycles"], f"{field}={value} changed no cycle"
  assert cl["class_cycles"]["host"] == len( cl["step_cycles"] ) * c.dfx.host_step_cycles


def test_every_new_field_at_once():
  """The mechanisms of DFX as built and the calibration's, all at
  non-default values together on 2 cores: perf == CL, and the cycles move."""
  c = compiled( 2, *ALL_NEW )
  host = Host( c, "cl" )
  tokens = host.generate( PROMPT, NEW )
  cl = host.results()
  assert_perf_equals_cl( c, PROMPT, NEW, tokens, cl )
  assert cl["step_cycles"] != perf.run( compiled( 2 ), PROMPT, NEW )["step_cycles"]


# the profiles that set a cost field or a calibration parameter: those
# values on the small model
PROFILED = { n: { k: v for k, v in profiles.values( n ).items()
                  if k in COST_FIELDS + CALIBRATION_FIELDS }
             for n in profiles.PROFILES }
PROFILED = { n: v for n, v in PROFILED.items() if v }


def test_a_profile_sets_cost_fields():
  assert "aurora-ring" in PROFILED


@pytest.mark.parametrize( "name", list( PROFILED ) )
def test_profile_costs_act_in_cl_and_perf_alike( name ):
  """On 2 cores (the Aurora values are the ring's): perf == CL in every step,
  op class and unit, each value in the config, and the cycles differ from
  the defaults'."""
  c = compiled( 2, *( f"{k}={v}" for k, v in PROFILED[ name ].items() ) )
  for k, v in PROFILED[ name ].items():
    assert getattr( c.dfx, k ) == v
  host = Host( c, "cl" )
  tokens = host.generate( PROMPT, NEW )
  cl = host.results()
  assert_perf_equals_cl( c, PROMPT, NEW, tokens, cl )
  base = perf.run( compiled( 2 ), PROMPT, NEW )
  assert cl["step_cycles"] != base["step_cycles"], f"profile {name} changed no cycle"


@pytest.mark.parametrize( "cores", [ 1, 2 ] )
def test_host_step_cost_in_the_breakdown( cores ):
  """Every step carries host_step_cycles in class "host"; the classes sum
  to each step's total; host_step_us=0 removes exactly that."""
  c = compiled( cores )
  r = perf.run( c, [ 5, 17 ], 2 )
  h = c.dfx.host_step_cycles
  assert h == 6660
  for total, classes in zip( r["step_cycles"], r["step_classes"] ):
    assert classes["host"] == h and sum( classes.values() ) == total
  assert r["class_cycles"]["host"] == 3 * h and sum( r["class_cycles"].values() ) == r["cycles"]
  free = perf.run( compiled( cores, "host_step_us=0" ), [ 5, 17 ], 2 )
  assert [ t - h for t in r["step_cycles"] ] == free["step_cycles"]
  assert free["class_cycles"]["host"] == 0


@pytest.mark.parametrize( "level", [ "func", "fl" ] )
def test_host_step_cost_at_other_levels( level ):
  """The func and FL hosts add the same per-step cost (FL's classes sum to
  its total with it; func has no classes)."""
  c = compiled( 1 )
  host = Host( c, level )
  host.generate( PROMPT, NEW )
  r = host.results()
  free = Host( compiled( 1, "host_step_us=0" ), level )
  free.generate( PROMPT, NEW )
  assert [ t - 6660 for t in r["step_cycles"] ] == free.results()["step_cycles"]
  if level == "fl":
    assert r["class_cycles"]["host"] == 6660 and sum( r["class_cycles"].values() ) == r["cycles"]
