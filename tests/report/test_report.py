"""`dfx report`: the figures, the summary and the numbers behind them, on a
plan of the tiny model (the paper's plan is the same code on full-size
models, tens of CPU minutes)."""

import json

import pytest

from pymtl_dfx.cli import main
from pymtl_dfx.perf import sampled
from pymtl_dfx.report.build import build
from pymtl_dfx.report.plan import PAPER, Plan

TINY = Plan(
  sizes={ "tiny": "tiny" }, cards=( 1, 2 ), max_tokens={ "tiny": 16 }, breakdown_pos=5,
  scaling=( "tiny", 4, 4 ), scaling_positions={ False: [ 0, 2 ], True: [ 3, 6 ] },
  xl="tiny", xl_cards=2, xl_positions={ False: [ 0, 2 ], True: [ 1, 2, 3, 4, 6 ] },
  xl_points=( ( 2, 1 ), ( 4, 4 ) ), xl_outputs=( 1, 2, 4 ),
  # made-up published figures, to exercise the comparison
  scaling_paper={ 1: 1000.0 }, xl_paper={ ( 4, 2 ): 0.5, ( 4, 4 ): 1.0 }, xl_sync_paper=10.0,
  xl_attn_ffn_paper=60.0, validation_xl={ "tiny (as xl)": "tiny" } )


@pytest.fixture( scope="module" )
def built( tmp_path_factory ):
  out = tmp_path_factory.mktemp( "report" )
  cache = sampled.StepCache( tmp_path_factory.mktemp( "cache" ) )
  return out, cache, build( str( out ), TINY, cache )


def test_every_file_is_written_whole( built ):
  out, _, paths = built
  names = sorted( p.name for p in out.iterdir() )
  assert names == sorted( [ f"{f}.{e}" for f in ( "breakdown", "roofline", "scaling", "xl_latency",
                                                      "step_ms" )
                            for e in ( "png", "svg" ) ] + [ "summary.md", "results.json" ] )
  for f in out.iterdir():
    assert f.stat().st_size > 0
  assert paths["summary"] == str( out / "summary.md" )


def test_numbers_add_up( built ):
  out, _, _ = built
  res = json.loads( ( out / "results.json" ).read_text() )
  for r in res["breakdown"].values():
    assert sum( r["classes"].values() ) == r["cycles"]
    assert r["ms"] == r["cycles"] / 200e3
  for cards, r in res["scaling"].items():
    assert r["tokens_per_s"] == pytest.approx( 4 / ( r["cycles"] / 200e6 ) )
    assert r["paper_tokens_per_s"] == TINY.scaling_paper.get( int( cards ) )
  # more output tokens take longer; more input tokens too
  xl = res["xl"]
  assert xl["2:1"]["ms"] < xl["2:2"]["ms"] < xl["2:4"]["ms"] < xl["4:4"]["ms"]
  assert len( res["xl_steps"] ) == 7


def test_summary_embeds_figures_and_compares( built ):
  out, _, _ = built
  text = ( out / "summary.md" ).read_text()
  for f in ( "breakdown", "scaling", "xl_latency", "step_ms" ):
    assert f"]({f}.png)" in text
  res = json.loads( ( out / "results.json" ).read_text() )
  tps, ms = res["scaling"]["1"]["tokens_per_s"], res["xl"]["4:4"]["ms"]
  sync = 100 * res["xl"]["4:4"]["classes"]["sync"] / res["xl"]["4:4"]["cycles"]
  assert f"| tiny 4:4, 1 card(s), tokens/s | {tps:.1f} | 1000.00 | {100 * ( tps - 1000 ) / 1000:+.1f} %" in text
  assert f"| tiny 4:4, 2 cards, latency ms | {ms:.0f} | 1.0 | {100 * ( ms - 1 ):+.1f} %" in text
  assert f"| tiny 4:4, 2 cards, sync share of latency | {sync:.1f} % | 10.0 % |" in text
  table = text.split( "## Modelled against the paper", 1 )[1].split( "\n## ", 1 )[0]
  assert table.count( "tokens/s |" ) == 1 and table.count( "latency ms |" ) == 2


def test_difference_per_generated_token( built ):
  out, _, _ = built
  res = json.loads( ( out / "results.json" ).read_text() )
  text = ( out / "summary.md" ).read_text()
  a, b = res["xl"]["4:2"], res["xl"]["4:4"]
  per = lambda k: ( b["classes"][k] - a["classes"][k] ) / 2 / 200e3   # noqa: E731
  ms = sum( per( k ) for k in a["classes"] )
  assert f"| tiny 4:2->4, ms per generated token | {ms:.3f} | 0.250 | {ms - 0.25:+.3f} |" in text
  af = per( "attention" ) + per( "ffn" )
  assert f"|   of which self-attention + FFN | {af:.3f} | 0.150 |" in text
  assert f"|   of which sync | {per( 'sync' ):.3f} | 0.025 |" in text
  assert f"|   of which the rest | {ms - af - per( 'sync' ):.3f} | 0.075 |" in text


def test_a_rebuild_times_nothing( built, monkeypatch, tmp_path ):
  _, cache, _ = built

  def no_timing( task ):
    raise AssertionError( "a cached step was timed again" )
  monkeypatch.setattr( sampled, "_time_one", no_timing )
  build( str( tmp_path ), TINY, cache )
  assert ( tmp_path / "summary.md" ).exists()


def test_paper_plan_covers_every_point():
  # every generation the figures estimate has its steps bracketed by timed positions
  for n_in, n_out in PAPER.xl_points:
    assert n_out in PAPER.xl_outputs
    prompt = range( 0, n_in - 1 )
    logits = range( n_in - 1, n_in + n_out - 1 )
    for want, ps in ( ( False, prompt ), ( True, logits ) ):
      timed = PAPER.xl_positions[ want ]
      assert not ps or ( min( timed ) <= ps[0] and max( timed ) >= ps[-1] ), ( n_in, n_out, want )
  assert max( PAPER.xl_positions[ True ] ) < PAPER.max_tokens[ PAPER.xl ]


def test_report_refuses_bad_settings( capsys ):
  assert main( [ "report", "--out", "unused", "--set", "cores=2" ] ) == 2
  assert main( [ "report", "--out", "unused", "--set", "nope=1" ] ) == 2
  err = capsys.readouterr().err
  assert "--set cores is not allowed" in err and err.count( "dfx report: error:" ) == 2


def test_paper_scaling_times_only_its_own_steps( built, tmp_path ):
  """The demo's comparison (`paper_scaling`, compute=True) on an empty
  cache times (b)'s steps and nothing else, and gives the numbers the
  whole report gives; then it reads them back without timing."""
  from pymtl_dfx.report import compute
  cache = sampled.StepCache( tmp_path )
  rows = compute.paper_scaling( cache, compute=True, plan=TINY )
  n_steps = sum( len( steps ) for _, _, steps in TINY.scaling_steps() )
  assert n_steps == len( TINY.cards ) * 4 and len( list( tmp_path.iterdir() ) ) == n_steps
  report = json.loads( ( built[0] / "results.json" ).read_text() )["scaling"]
  assert { str( c ): r["cycles"] for c, r in rows.items() } == \
         { c: r["cycles"] for c, r in report.items() }
  assert compute.paper_scaling( cache, plan=TINY ) == rows


def test_paper_scaling_reads_only_the_cache( tmp_path ):
  from pymtl_dfx.perf.sampled import NotCached
  from pymtl_dfx.report import compute
  with pytest.raises( NotCached, match="steps are not in the cache" ):
    compute.paper_scaling( sampled.StepCache( tmp_path ) )
  assert list( tmp_path.iterdir() ) == []


def test_the_profiles_against_the_paper( built ):
  """results.json's validation rows: per present profile, the fitted
  scaling point and the derived GFLOPS (not held out), the xl latencies
  and the two shares (held out); each row's error from its own numbers;
  the mean absolute held-out latency error from the rows; and summary.md
  has one table with a column pair per profile."""
  from pymtl_dfx.report import validation
  out, _, _ = built
  val = json.loads( ( out / "results.json" ).read_text() )["validation"]
  profs = validation.present( TINY )
  assert "paper" in profs
  rows = val["rows"]
  assert { r["profile"] for r in rows } == set( profs )
  for r in rows:
    assert set( r ) == { "profile", "figure", "modelled", "paper", "error", "error_unit", "held_out" }
    if r["error_unit"] == "points":
      assert r["error"] == pytest.approx( r["modelled"] - r["paper"] )
    else:
      assert r["error"] == pytest.approx( 100 * ( r["modelled"] - r["paper"] ) / r["paper"] )
  for prof in profs:
    mine = [ r for r in rows if r["profile"] == prof ]
    fitted = [ r["figure"] for r in mine if not r["held_out"] ]
    held = [ r for r in mine if r["held_out"] ]
    assert fitted == [ "tiny 4:4, 1 card(s), tokens/s",
                       "tiny 4:4, 1 card, GFLOPS (derived from the fitted latency)" ]
    lat = [ r for r in held if r["figure"].endswith( "latency ms" ) ]
    assert len( lat ) == 2 and len( held ) == 4
    s = val["summary"][ prof ]["tiny (as xl)"]
    assert s["points"] == 2
    assert s["mean_abs_latency_error_pct"] == pytest.approx( sum( abs( r["error"] ) for r in lat ) / 2 )
  text = ( out / "summary.md" ).read_text()
  assert "## The profiles of DFX as built against the paper" in text
  assert "| figure | " + " | ".join( f"`{p}` | error" for p in profs ) + " | paper | use |" in text
  assert text.count( "| held out |" ) == 4 and text.count( "| fitted |" ) == 1


def test_step_flops_count_every_matrix():
  from pymtl_dfx.config import gpt2_preset
  from pymtl_dfx.report.validation import generation_flops, step_flops
  g = gpt2_preset( "gpt2-medium" )
  E, L = g.n_embd, g.n_layer
  # a generated step at context 1: 2 x (the 12 E^2 weights of each layer,
  # the attention over one position, the LM head)
  assert step_flops( g, 0, True ) == 2 * ( L * ( 12 * E * E + 2 * E ) + g.vocab_size * E )
  assert step_flops( g, 0, False ) == step_flops( g, 0, True ) - 2 * g.vocab_size * E
  assert generation_flops( g, 2, 2 ) == ( step_flops( g, 0, False ) + step_flops( g, 1, True )
                                          + step_flops( g, 2, True ) )


def test_a_design_profile_beside_the_paper_design( built, tmp_path ):
  """With a design option on, the breakdown steps of the paper's design
  are the default report's own (the same costs, every option off), drawn
  and tabled beside the profile's; the default report has none."""
  out, cache, _ = built
  default = json.loads( ( out / "results.json" ).read_text() )
  assert default["paper_design"] == {} and not ( out / "design_breakdown.png" ).exists()
  paths = build( str( tmp_path ), TINY, cache, profile="streaming" )
  res = json.loads( ( tmp_path / "results.json" ).read_text() )
  assert "design_breakdown" in paths and ( tmp_path / "design_breakdown.svg" ).stat().st_size > 0
  assert { k: r["cycles"] for k, r in res["paper_design"].items() } == \
         { k: r["cycles"] for k, r in default["breakdown"].items() }
  assert any( res["breakdown"][ k ]["cycles"] != r["cycles"] for k, r in default["breakdown"].items() )
  text = ( tmp_path / "summary.md" ).read_text()
  for k, r in res["breakdown"].items():
    b = res["paper_design"][ k ]
    assert f"| {k} | {b['ms']:.3f} | {r['ms']:.3f} | {b['ms'] / r['ms']:.2f}x |" in text


def test_class_roofline_counts_every_weight_byte( built ):
  """The roofline figure's bytes: per card count, the busiest card's HBM
  bytes per op class, which together are at least the card's share of the
  weights (the breakdown step's roofline)."""
  out, _, _ = built
  res = json.loads( ( out / "results.json" ).read_text() )
  assert set( res["class_roofline"] ) == set( res["breakdown"] )
  for k, roof in res["class_roofline"].items():
    r = res["breakdown"][ k ]
    assert roof["lm_head"] > 0 and roof["ffn"] > 0 and roof["layernorm"] == 0
    assert sum( roof.values() ) / 200e3 >= r["roofline_ms"] * 0.999
