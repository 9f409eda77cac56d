"""`dfx perf`: the JSON record and its arithmetic, and bad arguments."""

import json

from pymtl_dfx import perf
from pymtl_dfx.cli import main
from pymtl_dfx.config import DFXConfig, gpt2_preset


def test_dfx_perf_json( capsys ):
  assert main( [ "perf", "--model", "tiny", "--cores", "2", "--in", "1", "--out", "2",
                 "--set", "d=32", "--json", "--no-cache" ] ) == 0
  rec = json.loads( capsys.readouterr().out )
  # the same run through the library (the token of position k is k)
  model = perf.planned( gpt2_preset( "tiny" ), DFXConfig( d=32, cores=2 ), 2, max_tokens=3 )
  res = perf.run( model, [ 0 ], 2, tokens=[ 1 ] )
  assert rec["timed_steps"] == [ 0, 1 ] and rec["interpolated_steps"] == []
  assert rec["cycles"] == res["cycles"] == sum( rec["breakdown"]["per_step"] )
  assert rec["breakdown"]["per_op_class"] == res["class_cycles"]
  assert sum( rec["breakdown"]["per_op_class"].values() ) == rec["cycles"]
  assert rec["ms"] == rec["cycles"] / 200e3                  # 200 MHz
  assert rec["tokens_per_s"] == 2 / ( rec["ms"] / 1e3 )      # output tokens / latency
  steps = rec["breakdown"]["per_step"]
  assert rec["ms_per_step"] == dict( summarization=steps[0] / 200e3, generation=steps[1] / 200e3 )


def test_dfx_perf_samples_steps( capsys, tmp_path ):
  args = [ "perf", "--model", "tiny", "--in", "3", "--out", "4", "--set", "d=32", "--samples", "2",
           "--jobs", "1", "--cache", str( tmp_path ) ]
  assert main( args + [ "--json" ] ) == 0
  rec = json.loads( capsys.readouterr().out )
  # prompt steps 0..1 (no logits), logits steps 2..5: each kind's ends timed
  assert rec["timed_steps"] == [ 0, 1, 2, 5 ] and rec["interpolated_steps"] == [ 3, 4 ]
  assert len( list( tmp_path.glob( "*.json" ) ) ) == 4
  assert main( args ) == 0
  assert "4 of 6 steps timed exactly, 2 interpolated" in capsys.readouterr().out
  exact = [ a for a in args if a not in ( "--samples", "2" ) ]    # --samples with --exact: refused
  assert main( exact + [ "--exact", "--json" ] ) == 0
  assert json.loads( capsys.readouterr().out )["interpolated_steps"] == []


def test_dfx_perf_refuses_bad_arguments( capsys ):
  assert main( [ "perf", "--model", "tiny", "--in", "2", "--out", "2", "--set", "nope=1" ] ) == 2
  assert main( [ "perf", "--model", "no-such-model", "--in", "2", "--out", "2" ] ) == 2
  assert main( [ "perf", "--model", "tiny", "--in", "100", "--out", "100" ] ) == 2   # n_positions
  err = capsys.readouterr().err
  assert err.count( "dfx perf: error:" ) == 3
