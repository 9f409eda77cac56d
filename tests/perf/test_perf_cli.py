"""`dfx perf`: the JSON record and its arithmetic, and bad arguments."""

import json

from pymtl_dfx import perf
from pymtl_dfx.cli import main
from pymtl_dfx.config import DFXConfig, gpt2_preset


def test_dfx_perf_json( capsys ):
  assert main( [ "perf", "--model", "tiny", "--cores", "2", "--in", "1", "--out", "2",
                 "--set", "d=32", "--json" ] ) == 0
  rec = json.loads( capsys.readouterr().out )
  # the same run through the library
  model = perf.planned( gpt2_preset( "tiny" ), DFXConfig( d=32, cores=2 ), 2, max_tokens=3 )
  res = perf.run( model, [ 0 ], 2 )
  assert rec["cycles"] == res["cycles"] == sum( rec["breakdown"]["per_step"] )
  assert rec["breakdown"]["per_op_class"] == res["class_cycles"]
  assert sum( rec["breakdown"]["per_op_class"].values() ) == rec["cycles"]
  assert rec["ms"] == rec["cycles"] / 200e3                  # 200 MHz
  assert rec["tokens_per_s"] == 2 / ( rec["ms"] / 1e3 )      # output tokens / latency
  steps = rec["breakdown"]["per_step"]
  assert rec["ms_per_step"] == dict( summarization=steps[0] / 200e3, generation=steps[1] / 200e3 )


def test_dfx_perf_refuses_bad_arguments( capsys ):
  assert main( [ "perf", "--model", "tiny", "--in", "2", "--out", "2", "--set", "nope=1" ] ) == 2
  assert main( [ "perf", "--model", "no-such-model", "--in", "2", "--out", "2" ] ) == 2
  assert main( [ "perf", "--model", "tiny", "--in", "100", "--out", "100" ] ) == 2   # n_positions
  err = capsys.readouterr().err
  assert err.count( "dfx perf: error:" ) == 3
