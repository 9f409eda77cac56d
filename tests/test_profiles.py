"""Profiles (`pymtl_dfx.profiles`, docs/perf.md "Profiles"): the table
composes and builds valid configs, the docs list every profile and its
cost values, the Aurora values reproduce their measurements, and on the
command line `--profile` is applied before `--set` on every command that
builds a DFXConfig, recorded in each output, checked against an image,
and an unknown name is one line listing the names."""

import json
import pathlib
import re
from fractions import Fraction

import pytest

from pymtl_dfx import profiles
from pymtl_dfx.cli import main
from pymtl_dfx.config import COST_FIELDS, DESIGN_FIELDS, DFXConfig
from pymtl_dfx.profiles import Profile, ProfileError

ROOT = pathlib.Path( __file__ ).resolve().parents[1]
AURORA = profiles.values( "aurora-ring" )


# -- the table --------------------------------------------------------------------

def test_the_table_composes_and_builds_valid_configs():
  profiles.check_table()
  assert profiles.config() == DFXConfig()
  for name in profiles.PROFILES:
    cfg = profiles.config( name )
    assert cfg != DFXConfig(), f"{name} changes nothing"
    for k, v in profiles.values( name ).items():
      assert getattr( cfg, k ) == v
    # every other field keeps the default's value
    assert cfg.replace( **{ k: getattr( DFXConfig(), k ) for k in profiles.values( name ) } ) \
      == DFXConfig()


def test_a_profile_applies_on_a_given_base():
  base = DFXConfig( cores=4, d=32 )
  cfg = profiles.config( "aurora-ring", base )
  assert ( cfg.cores, cfg.d, cfg.ring_latency_ns ) == ( 4, 32, 975.0 )


def test_an_unknown_name_lists_the_profiles():
  for bad in ( "nope", "", "Aurora-Ring" ):
    with pytest.raises( ProfileError, match=rf"unknown profile {re.escape( repr( bad ) )} "
                                            r"\(profiles: aurora-ring" ):
      profiles.config( bad )


def _table( monkeypatch, *ps ):
  monkeypatch.setattr( profiles, "PROFILES", { p.name: p for p in ps } )


def test_includes_compose_in_order_and_own_values_refine( monkeypatch ):
  link = Profile( "link", "a link", "s", dict( ring_gbps=50.0, ring_latency_ns=900.0 ) )
  mem = Profile( "mem", "a memory", "s", dict( hbm_latency_ns=200.0 ) )
  both = Profile( "both", "both", "s", dict( ring_latency_ns=800.0 ), includes=( "link", "mem" ) )
  _table( monkeypatch, link, mem, both )
  assert profiles.values( "both" ) == dict( ring_gbps=50.0, ring_latency_ns=800.0,
                                            hbm_latency_ns=200.0 )
  profiles.check_table()
  assert profiles.config( "both" ).hbm_latency_ns == 200.0


@pytest.mark.parametrize( "table, words", [
  ( [ Profile( "a", "a", "s", dict( ring_gbps=50.0 ) ), Profile( "b", "b", "s", dict( ring_gbps=60.0 ) ),
      Profile( "ab", "ab", "s", includes=( "a", "b" ) ) ], "profile 'ab': a and b set ring_gbps to 50.0 and 60.0" ),
  ( [ Profile( "loop", "l", "s", includes=( "loop", ) ) ], "profile 'loop' includes itself" ),
  ( [ Profile( "x", "x", "s", includes=( "gone", ) ) ], "unknown profile 'gone'" ),
  ( [ Profile( "c", "c", "s", dict( cores=4 ) ) ], "profile 'c' sets cores" ),
  ( [ Profile( "f", "f", "s", dict( ring_speed=1.0 ) ) ], "'ring_speed' is not a DFXConfig field" ),
  ( [ Profile( "t", "t", "s", dict( ring_frame_overhead_bytes=6.5 ) ) ],
    "ring_frame_overhead_bytes=6.5 must be of type int" ),
  ( [ Profile( "t", "t", "s", dict( ring_gbps=100 ) ) ], "ring_gbps=100 must be of type float" ),
  ( [ Profile( "v", "v", "s", dict( ring_gbps=-1.0 ) ) ], "profile 'v': invalid DFXConfig: ring_gbps" ),
  ( [ Profile( "d", "", "s", dict( ring_gbps=1.0 ) ) ], "needs a one-line description and a source" ),
  ( [ Profile( "d", "two\nlines", "s", dict( ring_gbps=1.0 ) ) ], "one-line description" ),
  ( [ Profile( "d", "d", " ", dict( ring_gbps=1.0 ) ) ], "and a source" ),
  ( [ Profile( "a b", "d", "s", dict( ring_gbps=1.0 ) ) ], "has a space" ),
] )
def test_a_table_that_does_not_compose_is_refused( monkeypatch, table, words ):
  _table( monkeypatch, *table )
  with pytest.raises( ProfileError, match=re.escape( words ) ):
    profiles.check_table()


# -- the docs ------------------------------------------------------------------------

def _section( title ):
  doc = ( ROOT / "docs" / "perf.md" ).read_text()
  parts = doc.split( f"## {title}", 1 )
  assert len( parts ) == 2, f"docs/perf.md lacks {title!r}"
  return parts[1].split( "\n## ", 1 )[0]


def _rows( text, head ):
  """The markdown table whose header row starts with `head`: its header
  cells and {first cell: cells}."""
  lines = text.split( "\n" )
  i = next( i for i, l in enumerate( lines ) if l.startswith( head ) )
  cells = lambda l: [ c.strip() for c in l.strip().strip( "|" ).split( " | " ) ]  # noqa: E731
  body = {}
  for l in lines[ i + 2: ]:
    if not l.startswith( "|" ):
      break
    c = cells( l )
    body[ c[0] ] = c
  return cells( lines[ i ] ), body


def test_the_docs_list_every_profile():
  head, rows = _rows( _section( "Profiles" ), "| profile |" )
  assert head == [ "profile", "description", "sets", "source" ]
  assert set( rows ) == { f"`{n}`" for n in profiles.PROFILES }
  for name, p in profiles.PROFILES.items():
    row = rows[ f"`{name}`" ]
    assert row[1] == p.description, name
    sets = dict( kv.strip( "`" ).split( "=" ) for kv in row[2].split( ", " ) )
    assert { k: type( profiles.values( name )[ k ] )( v ) for k, v in sets.items() } \
      == profiles.values( name ), name


def test_the_cost_table_has_a_column_per_profile_that_sets_a_cost():
  """docs/perf.md "Costs of the U280 system": a column per profile that sets
  a cost field, its value in each row ('-': the default's); the Aurora
  table below it gives every value the profile sets."""
  section = _section( "Costs of the U280 system" )
  head, rows = _rows( section, "| field | default |" )
  columns = { h.strip( "`" ): i for i, h in enumerate( head ) if h.startswith( "`" ) }
  costly = [ n for n in profiles.PROFILES if set( profiles.values( n ) ) & set( COST_FIELDS ) ]
  assert sorted( columns ) == sorted( costly )
  for name, i in columns.items():
    vals = profiles.values( name )
    for field in COST_FIELDS:
      cell = rows[ f"`{field}`" ][ i ]
      if field in vals:
        assert float( cell ) == vals[ field ], ( name, field )
      else:
        assert cell == "-", ( name, field )
  _, aurora = _rows( _section( "The Aurora 64B/66B ring" ), "| field | `aurora-ring` |" )
  assert { k.strip( "`" ): float( v[1] ) for k, v in aurora.items() } == AURORA


# -- the Aurora values against their measurements -------------------------------------

def test_aurora_values_in_cycles():
  c = profiles.config( "aurora-ring" )
  assert c.ring_latency_cycles == 195                      # 975 ns at 200 MHz
  # 128 payload bytes per frame, 64 of framing: 100 Gb/s x 128/192
  assert c.ring_packet_words_per_cycle == Fraction( 125, 6 )
  # 4 lanes x 25.78125 Gb/s with 64b/66b coding
  assert c.ring_gbps == pytest.approx( 4 * 25.78125 * 64 / 66 )


def test_aurora_framing_gives_the_measured_throughputs():
  """ring_frame_overhead_bytes=64 at 100 Gb/s reproduces the framing-mode
  throughputs of pc2/Aurora-HLS (medians, frames of 2 to 16 beats of 64 B)
  within 0.35 % above each: what the link loses with large frames too
  (12.4625 GB/s against 12.5), which the model does not count."""
  c = profiles.config( "aurora-ring" )
  large = c.ring_gbps / 8 / 12.4625 - 1
  assert 0 < large < 0.0035
  for frame, gbytes in ( ( 128, 8.311 ), ( 256, 9.9713 ), ( 512, 11.0775 ), ( 1024, 11.7278 ) ):
    got = c.ring_gbps / 8 * frame / ( frame + c.ring_frame_overhead_bytes )
    assert 0 <= got / gbytes - 1 <= 0.0035, ( frame, got )


# -- on the command line --------------------------------------------------------------

def _run( capsys, argv ):
  try:
    code = main( argv )
  except SystemExit as e:
    code = e.code
  out, err = capsys.readouterr()
  return code, out, err


def _json( capsys, argv ):
  code, out, err = _run( capsys, argv + [ "--json" ] )
  assert code == 0, err
  return json.loads( out )


PERF = [ "perf", "--model", "tiny", "--cores", "2", "--in", "1", "--out", "1", "--no-cache",
         "--jobs", "1" ]
CACHED = PERF[ :-3 ] + [ "--jobs", "1", "--cache" ]
UDP = [ "--set", "ring_gbps=100.0", "--set", "ring_latency_ns=535.5",
        "--set", "ring_frame_overhead_bytes=66" ]


def test_perf_applies_the_profile_before_set( capsys, tmp_path ):
  perf = CACHED + [ str( tmp_path ) ]         # the same config twice is timed once
  base = _json( capsys, perf )
  aurora = _json( capsys, perf + [ "--profile", "aurora-ring" ] )
  assert ( base["profile"], aurora["profile"] ) == ( None, "aurora-ring" )
  assert aurora["cycles"] > base["cycles"]
  assert aurora["breakdown"]["per_op_class"]["sync"] > base["breakdown"]["per_op_class"]["sync"]
  # the profile's fields set back to the default's on top: the default's cycles
  back = _json( capsys, perf + [ "--profile", "aurora-ring" ] + UDP )
  assert back["cycles"] == base["cycles"] and back["set"] == UDP[ 1::2 ]
  assert "(profile aurora-ring)" in _run( capsys, perf + [ "--profile", "aurora-ring" ] )[1]


def test_perf_help_lists_the_profiles( capsys ):
  code, out, _ = _run( capsys, [ "perf", "--help" ] )
  assert code == 0
  text = " ".join( out.split() )
  for name, p in profiles.PROFILES.items():
    assert f"{name}: {' '.join( p.description.split() )}" in text


@pytest.mark.parametrize( "argv", [
  [ "generate", "--model", "tiny", "--prompt-ids", "1" ],
  PERF,
  [ "report", "--out", "r" ],
  [ "sweep", "--model", "tiny", "--grid", "d=32", "--out", "s" ],
  [ "verilog", "--out", "v" ],
] )
@pytest.mark.parametrize( "json_out", [ False, True ] )
def test_an_unknown_profile_is_one_line_on_every_command( capsys, tmp_path, monkeypatch, argv,
                                                          json_out ):
  monkeypatch.chdir( tmp_path )
  code, out, err = _run( capsys, argv + [ "--profile", "nope" ] + ( [ "--json" ] if json_out else [] ) )
  assert code == 2
  assert err.count( "\n" ) == 1 and "Traceback" not in err
  assert "argument --profile: unknown profile 'nope' (profiles: aurora-ring" in err
  if json_out:
    assert json.loads( out )["error"]["kind"] == "usage"
  else:
    assert out == ""
  assert list( tmp_path.iterdir() ) == []


GEN = [ "generate", "--model", "tiny", "--prompt-ids", "1,2", "--new-tokens", "1" ]


def test_generate_compiles_for_the_profile_and_checks_it_against_an_image( capsys, tmp_path ):
  from pymtl_dfx.compiler.build import load_compiled
  img = str( tmp_path / "aurora.dfx" )
  rec = _json( capsys, GEN + [ "--cores", "2", "--profile", "aurora-ring", "--save-image", img ] )
  assert rec["profile"] == "aurora-ring"
  assert load_compiled( img ).dfx == profiles.config( "aurora-ring", DFXConfig( cores=2 ) )
  # restating the image's config is accepted and recorded
  again = _json( capsys, GEN + [ "--image", img, "--profile", "aurora-ring", "--cores", "2" ] )
  assert again["profile"] == "aurora-ring" and again["tokens"] == rec["tokens"]
  assert _json( capsys, GEN + [ "--image", img ] )["profile"] is None
  # a config that differs from the image's is refused, naming the fields
  plain = str( tmp_path / "udp.dfx" )
  _json( capsys, GEN + [ "--cores", "2", "--save-image", plain ] )
  for image, extra, named in (
      ( plain, [ "--profile", "aurora-ring", "--cores", "2" ],
        "was compiled for ring_latency_ns=535.5, ring_frame_overhead_bytes=66" ),
      ( img, [ "--profile", "aurora-ring", "--cores", "2", "--set", "ring_latency_ns=535.5" ],
        "was compiled for ring_latency_ns=975.0;" ) ):
    code, out, err = _run( capsys, GEN + [ "--image", image ] + extra )
    assert code == 2 and out == "" and err.count( "\n" ) == 1, err
    assert named in err and "drop --profile/--cores/--set" in err, err


def test_sweep_records_the_profile_under_its_grid( capsys, tmp_path ):
  out = tmp_path / "s"
  rec = _json( capsys, [ "sweep", "--model", "tiny", "--set", "cores=2", "--profile", "aurora-ring",
                         "--grid", "ring_frame_overhead_bytes=0,64", "--context", "2",
                         "--no-cache", "--jobs", "1", "--out", str( out ) ] )
  saved = json.loads( ( out / "sweep.json" ).read_text() )
  assert rec["profile"] == saved["profile"] == "aurora-ring" and saved["set"] == [ "cores=2" ]
  cfgs = [ p["config"] for p in saved["points"] ]
  assert [ c["ring_frame_overhead_bytes"] for c in cfgs ] == [ 0, 64 ]
  assert all( c["ring_latency_ns"] == 975.0 and c["cores"] == 2 for c in cfgs )
  steps = [ p["step"]["cycles"] for p in saved["points"] ]
  assert steps[0] < steps[1]
  assert "Every point: profile `aurora-ring`, then `cores=2`." in ( out / "sweep.md" ).read_text()


def test_report_records_the_profile( tmp_path ):
  from pymtl_dfx.perf import sampled
  from pymtl_dfx.report import compute
  from pymtl_dfx.report.build import build
  from pymtl_dfx.report.plan import Plan
  # the tiny model on 2 cards (the ring's fields need a ring), 3 timed steps
  plan = Plan(
    sizes={ "tiny": "tiny" }, cards=( 2, ), max_tokens={ "tiny": 4 }, breakdown_pos=1,
    scaling=( "tiny", 1, 2 ), scaling_positions={ False: [ 0 ], True: [ 0, 1 ] },
    xl="tiny", xl_cards=2, xl_positions={ False: [ 0 ], True: [ 0, 1 ] },
    xl_points=( ( 1, 1 ), ), xl_outputs=( 1, 2 ),
    scaling_paper={}, xl_paper={}, xl_sync_paper=10.0, xl_attn_ffn_paper=60.0 )
  cache = sampled.StepCache( tmp_path / "cache" )
  build( str( tmp_path / "r" ), plan, cache, profile="aurora-ring",
         overrides=[ "hbm_latency_ns=200" ] )
  res = json.loads( ( tmp_path / "r" / "results.json" ).read_text() )
  assert res["profile"] == "aurora-ring" and res["set"] == [ "hbm_latency_ns=200" ]
  m = compute.model( plan, "tiny", 2, [ "hbm_latency_ns=200" ], "aurora-ring" )
  assert ( m.dfx.ring_latency_ns, m.dfx.hbm_latency_ns, m.dfx.cores ) == ( 975.0, 200.0, 2 )
  assert res["breakdown"]["tiny x2"]["cycles"] == sampled.time_many(
    [ ( m, plan.breakdown_pos % m.gpt.vocab_size, plan.breakdown_pos, True ) ], cache )[0]["cycles"]
  summary = ( tmp_path / "r" / "summary.md" ).read_text()
  assert "Computed with profile `aurora-ring` (" in summary and "`--set hbm_latency_ns=200`" in summary


def test_verilog_records_the_profile_in_config_json( capsys, tmp_path, monkeypatch ):
  """The record's plumbing only: the translation itself (about a minute)
  is tests/core/test_verilog_output.py's; here it writes a stand-in file."""
  from pymtl_dfx.hdl import rtlgen
  from pymtl_dfx.core import verilog
  seen = []

  def translate( top, work ):
    path = pathlib.Path( work ) / "Top.v"
    path.write_text( "module Top; endmodule\n" )
    return str( path ), "Top"
  monkeypatch.setattr( rtlgen, "translate", translate )
  monkeypatch.setattr( verilog, "fpga_core", lambda cfg: seen.append( cfg ) )
  monkeypatch.setattr( verilog, "top_ports", lambda core: {} )    # no core to list
  out = tmp_path / "v"
  rec = _json( capsys, [ "verilog", "--out", str( out ), "--no-lint", "--profile", "aurora-ring",
                         "--set", "d=8", "--set", "l=4" ] )
  saved = json.loads( ( out / "config.json" ).read_text() )
  assert rec["profile"] == saved["profile"] == "aurora-ring"
  assert saved["config"] == profiles.config( "aurora-ring", DFXConfig( d=8, l=4 ) ).to_dict() \
    == seen[0].to_dict()


def test_streaming_turns_every_design_option_on_and_dfx_none():
  """The design options past DFX (`config.DESIGN_FIELDS`) are the profile
  `streaming-wide`'s, each at a value other than the paper's design;
  `streaming` is it at the paper's MPU width, without the read-ahead that
  needs the wider MPU (and the DMA queue it moves reads over matrices
  with); no profile of DFX itself (the link, as built, calibrated) sets
  one."""
  defaults = DFXConfig()
  wide, narrow = profiles.values( "streaming-wide" ), profiles.values( "streaming" )
  assert set( wide ) == set( DESIGN_FIELDS ) | { "l", "weight_fifo_entries" }
  assert set( narrow ) == set( DESIGN_FIELDS ) - { "weight_read_ahead", "dma_inst_queue" }
  assert profiles.get( "streaming-wide" ).includes == ( "streaming", )
  for k, v in wide.items():
    assert v != getattr( defaults, k ), k
  assert wide["l"] == 2 * defaults.l
  for name in profiles.PROFILES:
    if not name.startswith( "streaming" ):
      assert not set( profiles.values( name ) ) & set( DESIGN_FIELDS ), name
