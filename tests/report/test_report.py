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
  xl_attn_ffn_paper=60.0 )


@pytest.fixture( scope="module" )
def built( tmp_path_factory ):
  out = tmp_path_factory.mktemp( "report" )
  cache = sampled.StepCache( tmp_path_factory.mktemp( "cache" ) )
  return out, cache, build( str( out ), TINY, cache )


def test_every_file_is_written_whole( built ):
  out, _, paths = built
  names = sorted( p.name for p in out.iterdir() )
  assert names == sorted( [ f"{f}.{e}" for f in ( "breakdown", "scaling", "xl_latency", "step_ms" )
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
  assert text.count( "tokens/s |" ) == 1 and text.count( "latency ms |" ) == 2


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
