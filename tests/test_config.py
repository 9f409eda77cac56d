"""DFXConfig / GPT2Config: the paper's defaults, derived sizes, clear errors."""

import pytest

from pymtl_dfx.config import (ConfigError, DFXConfig, GPT2Config, GPT2_PRESETS,
                              gpt2_preset)


def test_defaults_are_the_papers():
  c = DFXConfig()
  assert ( c.d, c.l, c.clock_mhz, c.hbm_channels, c.hbm_channel_bits ) == ( 64, 16, 200, 32, 512 )
  assert c.macs_per_cycle == 1024 and c.tree_depth == 6
  assert c.hbm_bytes_per_cycle == 2048
  assert c.hbm_gbps == pytest.approx( 409.6 )
  assert c.ring_bytes_per_cycle == pytest.approx( 62.5 )
  assert c.hbm_bytes == 8 * 2**30


@pytest.mark.parametrize( "field,value,why", [
  ( "d", 48, "power of two" ), ( "l", 0, "positive" ), ( "cores", -1, "positive" ),
  ( "clock_mhz", 2.5, "integer" ), ( "ddr_gbps", 0, "positive number" ),
  ( "hbm_channel_bits", 500, "multiple of 16" ),
  ( "hbm_channel_bits", 1024, "at most 512" ), ( "vreg_entries", 1000, "power of two" ),
] )
def test_invalid_dfx_values_name_the_field( field, value, why ):
  with pytest.raises( ConfigError, match=rf"{field}={value!r}.*{why}" ):
    DFXConfig( **{ field: value } )


def test_every_bad_field_is_reported_at_once():
  with pytest.raises( ConfigError ) as e:
    DFXConfig( d=3, l=6 )
  assert "d=3" in str( e.value ) and "l=6" in str( e.value )


def test_presets():
  assert set( GPT2_PRESETS ) == { "tiny", "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl-dfx",
                                  "gpt2-xl-dfx-1600" }
  m = gpt2_preset( "gpt2-medium" )
  assert ( m.n_layer, m.n_embd, m.n_head, m.head_dim ) == ( 24, 1024, 16, 64 )
  assert 350e6 < m.n_params < 360e6
  assert gpt2_preset( "gpt2" ).n_params == 124_439_808   # Hugging Face's count
  xl = gpt2_preset( "gpt2-xl-dfx" )
  assert xl.n_head == 24 and xl.head_dim == 64
  # gpt2-xl (1,557,611,200 parameters) less one head's c_attn columns and
  # c_proj rows in each of its 48 layers
  xl16 = gpt2_preset( "gpt2-xl-dfx-1600" )
  assert ( xl16.n_embd, xl16.n_head, xl16.head_dim, xl16.attn_dim, xl16.n_inner ) \
    == ( 1600, 24, 64, 1536, 6400 )
  assert xl16.n_params == 1_557_611_200 - 48 * ( 1600 * 3 * 64 + 3 * 64 + 64 * 1600 )
  assert 1.50e9 < xl16.n_params < 1.56e9
  assert GPT2Config( n_layer=48, n_embd=1600, n_head=25, vocab_size=50257 ).n_params \
    == 1_557_611_200                                      # gpt2-xl, Hugging Face's count


def test_unknown_preset_lists_the_known_ones():
  with pytest.raises( ConfigError, match="unknown GPT-2 preset 'gpt3'.*gpt2-medium" ):
    gpt2_preset( "gpt3" )


def test_gpt2_errors_and_uneven_sizes():
  with pytest.raises( ConfigError, match="n_embd=100.*multiple of n_head=3" ):
    GPT2Config( n_embd=100, n_head=3 )
  with pytest.raises( ConfigError, match="n_layer=0" ):
    GPT2Config( n_layer=0 )
  # a vocabulary that does not divide over cores or lanes is not an error
  assert GPT2Config( vocab_size=50257 ).vocab_size == 50257


@pytest.mark.parametrize( "bad, why", [ ( 0, "must be positive" ), ( -1, "must be positive" ),
                                        ( 1.5, "must be an integer" ),
                                        ( True, "must be an integer" ),
                                        ( "64", "must be an integer" ) ] )
def test_bad_head_dim_is_named( bad, why ):
  with pytest.raises( ConfigError, match=f"head_dim={bad!r}.*{why}" ):
    GPT2Config( n_embd=96, n_head=2, head_dim=bad )


def test_head_dim_sets_the_attention_width():
  # left out: GPT-2's n_embd / n_head, and n_embd must divide
  assert GPT2Config( n_embd=96, n_head=2 ).head_dim == 48
  with pytest.raises( ConfigError, match=r"n_embd=96 \(must be a multiple of n_head=5\)" ):
    GPT2Config( n_embd=96, n_head=5 )
  # given: the attention is n_head x head_dim inside the residual's n_embd
  c = GPT2Config( n_embd=96, n_head=5, head_dim=32 )
  assert ( c.head_dim, c.attn_dim ) == ( 32, 160 )
  # GPT-2's own width spelled out is the same model
  assert GPT2Config( n_embd=96, n_head=2, head_dim=48 ) == GPT2Config( n_embd=96, n_head=2 )


def test_hf_dict_round_trip():
  c = gpt2_preset( "tiny" )
  back = GPT2Config.from_hf_dict( c.to_hf_dict(), name="tiny" )
  assert back == c
  assert "head_dim" not in c.to_hf_dict()        # Hugging Face's GPT-2 has no such key
  v = gpt2_preset( "gpt2-xl-dfx-1600" )
  assert v.to_hf_dict()["head_dim"] == 64
  assert GPT2Config.from_hf_dict( v.to_hf_dict() ) == v
  with pytest.raises( ConfigError, match="head_dim=0" ):
    GPT2Config.from_hf_dict( dict( v.to_hf_dict(), head_dim=0 ) )
  with pytest.raises( ConfigError, match="missing.*n_head" ):
    GPT2Config.from_hf_dict( { "n_layer": 1, "n_embd": 8, "vocab_size": 4 } )


def test_dfx_dict_round_trip_and_unknown_field():
  c = DFXConfig( cores=4, d=16 )
  assert DFXConfig.from_dict( c.to_dict() ) == c
  with pytest.raises( ConfigError, match="unknown field.*lanes" ):
    DFXConfig.from_dict( { "lanes": 4 } )


def test_with_overrides_parses_each_field_by_its_type():
  c = DFXConfig().with_overrides( [ "d=32", "l=8", "ddr_gbps=19.5" ] )
  assert ( c.d, c.l, c.ddr_gbps ) == ( 32, 8, 19.5 )
  assert DFXConfig().with_overrides( [] ) == DFXConfig()


@pytest.mark.parametrize( "bad, named", [
  ( [ "d=x" ], "d='x' (must be an integer)" ),
  ( [ "nope=1" ], "'nope' is not a DFXConfig field" ),
  ( [ "d" ], "'d' (expected key=value)" ),
  ( [ "ddr_gbps=fast" ], "ddr_gbps='fast'" ),
  ( [ "d=3" ], "d=3 (must be a power of two)" ),
] )
def test_with_overrides_names_the_bad_assignment( bad, named ):
  with pytest.raises( ConfigError ) as e:
    DFXConfig().with_overrides( bad )
  assert named in str( e.value )


# -- the costs of the U280 system (issue #12 item 3) ------------------------------

@pytest.mark.parametrize( "field,value,why", [
  ( "hbm_channel_gbps", 0, "positive number" ), ( "hbm_channel_gbps", float( "nan" ), "positive number" ),
  ( "hbm_latency_ns", -1.0, "positive number" ), ( "ddr_gbps", -33.0, "positive number" ),
  ( "ddr_latency_ns", 0, "positive number" ), ( "ring_gbps", True, "positive number" ),
  ( "ring_latency_ns", float( "inf" ), "positive number" ),
  ( "ring_frame_overhead_bytes", -1, "integer >= 0" ), ( "ring_frame_overhead_bytes", 6.5, "integer >= 0" ),
  ( "host_step_us", -0.5, r"number >= 0" ), ( "host_step_us", "33", r"number >= 0" ),
] )
def test_invalid_cost_values_name_the_field( field, value, why ):
  with pytest.raises( ConfigError, match=rf"{field}={value!r}.*{why}" ):
    DFXConfig( **{ field: value } )


def test_cost_overrides_parse_as_their_types():
  c = DFXConfig().with_overrides( [ "ring_frame_overhead_bytes=0", "host_step_us=0",
                                     "hbm_channel_gbps=6.4" ] )
  assert ( c.ring_frame_overhead_bytes, c.host_step_us, c.hbm_channel_gbps ) == ( 0, 0.0, 6.4 )
  with pytest.raises( ConfigError, match="ring_frame_overhead_bytes='1.5'.*integer" ):
    DFXConfig().with_overrides( [ "ring_frame_overhead_bytes=1.5" ] )


def test_cost_defaults_in_cycles():
  """The sourced defaults (docs/perf.md "Costs of the U280 system") at the
  200 MHz kernel clock."""
  from fractions import Fraction
  c = DFXConfig()
  # 13.04 GB/s sequential per pseudo-channel is above the port's 12.8 GB/s
  assert c.hbm_words_per_channel_cycle == 1 and c.hbm_channel_efficiency == 1
  assert c.hbm_latency_cycles == 25            # 122.2 ns
  assert c.ddr_words_per_cycle == Fraction( 165, 64 ) and c.ddr_channels == 4
  assert c.ddr_latency_cycles == 15            # 73 ns
  assert c.ring_latency_cycles == 108          # 535.5 ns
  # 128 payload bytes per packet, 66 of framing: 100 Gb/s x 128/194
  assert c.ring_packet_words_per_cycle == Fraction( 125, 4 ) * Fraction( 128, 194 )
  assert c.host_step_cycles == 6660            # 33.3 us
  # a slower pseudo-channel binds: half the port's rate
  half = c.replace( hbm_channel_gbps=6.4 )
  assert half.hbm_words_per_channel_cycle == Fraction( 1, 2 ) == half.hbm_channel_efficiency
  assert c.replace( ring_frame_overhead_bytes=0 ).ring_packet_words_per_cycle == c.ring_words_per_cycle
  assert c.replace( host_step_us=0 ).host_step_cycles == 0


def test_udp_framing_gives_the_measured_throughputs():
  """ring_frame_overhead_bytes=66 reproduces the four measured UDP
  throughputs U280 to U280 (xup_vitis_network_example) within 0.1 Gb/s."""
  c = DFXConfig()
  for payload, gbps in ( ( 64, 49.2 ), ( 256, 79.5 ), ( 1024, 94.0 ), ( 1472, 95.7 ) ):
    got = c.ring_gbps * payload / ( payload + c.ring_frame_overhead_bytes )
    assert abs( got - gbps ) <= 0.1, ( payload, got )


def test_every_cost_field_is_in_the_docs_table():
  """docs/perf.md "Costs of the U280 system" has a row for every cost field
  (COST_FIELDS) naming its default, and COST_FIELDS names DFXConfig fields."""
  import dataclasses
  import pathlib
  import re
  from pymtl_dfx.config import COST_FIELDS
  names = { f.name: f.default for f in dataclasses.fields( DFXConfig ) }
  doc = ( pathlib.Path( __file__ ).resolve().parents[1] / "docs" / "perf.md" ).read_text()
  section = doc.split( "## Costs of the U280 system", 1 )
  assert len( section ) == 2, "docs/perf.md lacks the section"
  section = section[1].split( "\n## ", 1 )[0]
  rows = { m.group( 1 ): m.group( 2 ) for m in
           re.finditer( r"^\| `(\w+)` \| ([^|]+) \|", section, re.M ) }
  for name in COST_FIELDS:
    assert name in names, name
    assert name in rows, f"{name} has no row in docs/perf.md's cost table"
    assert float( rows[ name ].strip().replace( ",", "" ) ) == float( names[ name ] ), name
  assert set( rows ) == set( COST_FIELDS )


@pytest.mark.parametrize( "d,l,word_elems,entry_words", [
  ( 4, 2, 4, 1 ), ( 16, 8, 16, 1 ), ( 32, 8, 32, 1 ), ( 64, 64, 32, 2 ), ( 128, 16, 32, 4 ) ] )
def test_derived_memory_sizes( d, l, word_elems, entry_words ):
  c = DFXConfig( d=d, l=l )
  assert ( c.mem_word_elems, c.entry_words ) == ( word_elems, entry_words )
  assert c.entry_words * c.mem_word_elems == d          # an entry is whole words
  assert c.tile_words == l * entry_words
  assert c.hbm_words * c.mem_word_bytes == c.hbm_bytes


# -- design options past DFX (DESIGN_FIELDS) ------------------------------------

@pytest.mark.parametrize( "value", [ 2, -1, True, 1.0, "1" ] )
def test_bad_mpu_post_bypass_is_named( value ):
  with pytest.raises( ConfigError, match=rf"mpu_post_bypass={value!r} \(must be 0 .* or 1 " ):
    DFXConfig( mpu_post_bypass=value )


@pytest.mark.parametrize( "text, named", [
  ( "mpu_post_bypass=2", "mpu_post_bypass=2 (must be 0" ),
  ( "mpu_post_bypass=x", "mpu_post_bypass='x' (must be an integer)" ),
] )
def test_bad_mpu_post_bypass_override_is_named( text, named ):
  with pytest.raises( ConfigError ) as e:
    DFXConfig().with_overrides( [ text ] )
  assert named in str( e.value )


def test_mpu_post_depth_per_command():
  """Off, every command passes the adder, the multiplier and the GELU table
  (11 + 6 + 30 cycles at the defaults); on, only those it uses, and one
  register when it uses none (REDMAX and VECTORIZE are selects)."""
  from pymtl_dfx.config import DESIGN_FIELDS
  from pymtl_dfx.isa import ComputeOp as C, PostOp as P
  from pymtl_dfx.units.mpu.timing import post_latency, tile_latency
  off, on = DFXConfig(), DFXConfig( mpu_post_bypass=1 )
  ops = ( C.CONV1D, C.MASKEDMM, C.MM )
  assert { post_latency( off, op, post ) for op in ops for post in P } == { 47 }
  assert off.mpu_post_latency == 47 and off.mpu_tile_latency == tile_latency( off, C.MM, P.NONE )
  own = { C.CONV1D: 11, C.MASKEDMM: 6, C.MM: 0 }
  for op in ops:
    for post in P:
      assert post_latency( on, op, post ) == max( 1, own[ op ] + 30 * ( post == P.GELU ) )
  assert tile_latency( on, C.MM, P.REDMAX ) == on.mfu_lane_latency + on.fp_add_latency + 1
  assert on.mpu_tile_latency == off.mpu_tile_latency     # the deepest, for bounds
  assert "mpu_post_bypass" in DESIGN_FIELDS
  # a design option at its default is left out of str(), which names the
  # RTL modules, so the default's Verilog keeps its module names
  assert "mpu_post_bypass" not in str( off ) and "mpu_post_bypass=1" in str( on )
  assert DFXConfig.from_dict( on.to_dict() ) == on


@pytest.mark.parametrize( "value", [ 2, -1, True, 1.0, "1" ] )
def test_bad_vpu_max_tree_is_named( value ):
  with pytest.raises( ConfigError, match=rf"vpu_max_tree={value!r} \(must be 0 .* or 1 " ):
    DFXConfig( vpu_max_tree=value )


def test_vpu_max_tree_latencies():
  """The max reductions' own pipes take comparator steps (tree_depth of them
  in the tree, one in the accumulator); the sum's keep the adder's.  At its
  default the option is left out of str() (the RTL modules' names)."""
  off, on = DFXConfig(), DFXConfig( vpu_max_tree=1, fp_max_latency=2 )
  assert ( on.vpu_max_tree_latency, on.vpu_max_accum_latency ) == ( 12, 2 )
  assert ( on.vpu_tree_latency, on.vpu_accum_latency ) == ( off.vpu_tree_latency, 11 ) == ( 66, 11 )
  assert "vpu_max_tree" not in str( off ) and "vpu_max_tree=1" in str( on )
  assert DFXConfig.from_dict( on.to_dict() ) == on


@pytest.mark.parametrize( "value", [ 2, -1, True, 1.0, "1" ] )
def test_bad_vpu_gelu_is_named( value ):
  with pytest.raises( ConfigError, match=rf"vpu_gelu={value!r} \(must be 0 .* or 1 " ):
    DFXConfig( vpu_gelu=value )


def test_vpu_gelu_latency():
  """The VPU's GELU pipe is as deep as the GELU table (the MPU post-op's),
  with or without the option; the element-wise pipe keeps its depth.  At
  its default the option is left out of str() (the RTL modules' names)."""
  off, on = DFXConfig(), DFXConfig( vpu_gelu=1 )
  assert on.vpu_gelu_latency == off.vpu_gelu_latency == off.fp_gelu_latency == 30
  assert on.vpu_elementwise_latency == off.vpu_elementwise_latency == 11
  fast = on.replace( fp_add_latency=3 )
  assert fast.vpu_gelu_latency == fast.sfu_rom_latency + 2 * 3 + fast.fp_mul_latency
  assert "vpu_gelu" not in str( off ) and "vpu_gelu=1" in str( on )
  assert DFXConfig.from_dict( on.to_dict() ) == on


def test_ln2_fold_needs_vpu_gelu():
  """ln2_fold's GELU runs on the VPU (`config.DESIGN_NEEDS`): alone it is
  refused, naming the option and what it needs."""
  with pytest.raises( ConfigError, match=r"ln2_fold=1 \(needs vpu_gelu=1\)" ):
    DFXConfig( ln2_fold=1 )
  assert DFXConfig( ln2_fold=1, vpu_gelu=1 ).ln2_fold == 1
