"""Input that used to be silently ignored is now used or refused in one
line: contradictory options, an unreachable --dask address, a folder whose
name shadows a preset, and a sweep point that fails while the others run."""

import json
import os
import socket

import pytest

from pymtl_dfx.cli import main
from pymtl_dfx.gpt2 import random_weights, save_checkpoint
from pymtl_dfx.config import GPT2Config
from pymtl_dfx.sweep import run

SWEEP = [ "sweep", "--model", "tiny", "--grid", "cores=1,2", "--context", "3" ]


def _usage_error( capsys, argv, message ):
  try:
    assert main( argv ) == 2
  except SystemExit as e:      # argparse's own usage errors
    assert e.code == 2
  out, err = capsys.readouterr()
  assert len( err.splitlines() ) == 1 and message in err, err
  if "--json" in argv:
    assert json.loads( out )["error"]["exit_code"] == 2
  else:
    assert out == ""
  return err


# -- contradictory options ----------------------------------------------------------

@pytest.mark.parametrize( "cmd", [
  [ "perf", "--model", "tiny", "--in", "1", "--out", "1" ],
  SWEEP + [ "--out", "unused" ],
  [ "report", "--out", "unused" ],
  [ "demo", "--paper", "skip" ],
] )
def test_no_cache_with_cache( capsys, tmp_path, cmd ):
  _usage_error( capsys, cmd + [ "--cache", str( tmp_path / "c" ), "--no-cache" ],
                "argument --no-cache: not allowed with argument --cache" )
  assert not ( tmp_path / "c" ).exists() and not os.path.exists( "unused" )


@pytest.mark.parametrize( "samples", [ "4", "2" ] )   # the old default too
def test_exact_with_samples( capsys, samples ):
  _usage_error( capsys, [ "perf", "--model", "tiny", "--in", "1", "--out", "1", "--exact",
                          "--samples", samples ],
                "argument --samples: not allowed with argument --exact" )


def test_perf_samples_default_is_still_four( capsys ):
  recs = []
  for extra in ( [], [ "--samples", "4" ] ):
    assert main( [ "perf", "--model", "tiny", "--in", "6", "--out", "1", "--set", "d=32",
                   "--no-cache", "--json" ] + extra ) == 0
    recs.append( json.loads( capsys.readouterr().out ) )
  assert recs[0]["timed_steps"] == recs[1]["timed_steps"] and recs[0]["interpolated_steps"]


def test_sweep_samples_without_io( capsys, tmp_path ):
  _usage_error( capsys, SWEEP + [ "--samples", "2", "--out", str( tmp_path / "o" ) ],
                "--samples 2: only a whole generation (--io I:O) is sampled" )
  assert not ( tmp_path / "o" ).exists()


def test_sweep_jobs_with_dask( capsys, tmp_path ):
  _usage_error( capsys, SWEEP + [ "--jobs", "2", "--dask", "tcp://127.0.0.1:1", "--out",
                                  str( tmp_path / "o" ) ],
                "--jobs 2 and --dask tcp://127.0.0.1:1: the points run on local processes or "
                "on the cluster" )


def test_demo_out_with_paper_skip( capsys, tmp_path ):
  _usage_error( capsys, [ "demo", "--paper", "skip", "--out", str( tmp_path / "fig" ) ],
                f"--out {tmp_path / 'fig'} draws the comparison with the paper, which --paper "
                f"skip leaves out" )


@pytest.mark.parametrize( "where", [ "folder", "image" ] )
def test_seed_that_seeds_nothing( capsys, tmp_path, where ):
  cfg = GPT2Config( n_layer=1, n_embd=64, n_head=1, vocab_size=300, n_positions=16 )
  folder = tmp_path / "m"
  save_checkpoint( folder, random_weights( cfg, 1 ) )
  gen = [ "generate", "--prompt-ids", "1", "--new-tokens", "1", "--json" ]
  if where == "folder":
    gen += [ "--model", str( folder ) ]
    whose = f"--model {folder} has its own weights"
  else:
    image = tmp_path / "tiny.dfx"
    assert main( gen + [ "--model", "tiny", "--seed", "4", "--save-image", str( image ) ] ) == 0
    capsys.readouterr()
    gen += [ "--model", "tiny", "--image", str( image ) ]
    whose = f"--image {image} holds the weights"
  _usage_error( capsys, gen + [ "--seed", "3" ],
                f"--seed 3 seeds nothing here: {whose} and greedy decoding draws no samples" )
  # with sampling it seeds the draws, and without --seed the default is used
  assert main( gen + [ "--seed", "3", "--temperature", "1" ] ) == 0
  assert json.loads( capsys.readouterr().out )["seed"] == 3
  assert main( gen ) == 0
  assert json.loads( capsys.readouterr().out )["seed"] == 0


# -- an unreachable --dask address ---------------------------------------------------

def _closed_port():
  with socket.socket() as s:
    s.bind( ( "127.0.0.1", 0 ) )
    return s.getsockname()[1]     # nothing listens once it is closed


def test_unreachable_dask_even_when_every_point_is_cached( capsys, tmp_path ):
  pytest.importorskip( "dask.distributed", reason="pip install 'pymtl_dfx[sweep]'" )
  one = [ "sweep", "--model", "tiny", "--grid", "cores=1", "--context", "3" ]
  cache = str( tmp_path / "cache" )
  assert main( one + [ "--jobs", "1", "--cache", cache, "--out", str( tmp_path / "a" ) ] ) == 0
  capsys.readouterr()
  address = f"tcp://127.0.0.1:{_closed_port()}"
  assert main( one + [ "--dask", address, "--cache", cache, "--out",
                         str( tmp_path / "b" ) ] ) == 1
  out, err = capsys.readouterr()
  assert out == "" and len( err.splitlines() ) == 1
  assert err.startswith( f"dfx sweep: --dask {address}: no Dask scheduler answers there (" )
  assert not ( tmp_path / "b" ).exists()


# -- a folder with a preset's name ---------------------------------------------------

@pytest.fixture
def shadow( tmp_path, monkeypatch ):
  """./tiny in the current directory: a checkpoint folder of another model."""
  cfg = GPT2Config( n_layer=1, n_embd=64, n_head=1, vocab_size=300, n_positions=16 )
  save_checkpoint( tmp_path / "tiny", random_weights( cfg, 1 ) )
  monkeypatch.chdir( tmp_path )
  return cfg


def test_a_preset_name_means_the_preset( capsys, shadow ):
  assert main( [ "generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "1",
                 "--json" ] ) == 0
  out, err = capsys.readouterr()
  assert json.loads( out )["model"] == "tiny"
  assert err == ( "dfx: note: --model tiny is the preset 'tiny', not the folder ./tiny "
                  "(write that path for the folder)\n" )
  assert main( [ "perf", "--model", "tiny", "--in", "1", "--out", "1", "--set", "d=32",
                 "--no-cache", "--json" ] ) == 0
  out, err = capsys.readouterr()
  assert json.loads( out )["model"] == "tiny" and "is the preset 'tiny'" in err


def test_the_folder_spelled_as_a_path( capsys, shadow ):
  assert main( [ "generate", "--model", "./tiny", "--prompt-ids", "299", "--new-tokens", "1",
                 "--json" ] ) == 0
  out, err = capsys.readouterr()
  assert json.loads( out )["model"] == "./tiny" and err == ""
  # the preset's vocabulary is 256: id 299 is the folder's model
  assert main( [ "generate", "--model", "tiny", "--prompt-ids", "299", "--new-tokens", "1" ] ) == 2


# -- one failing sweep point -----------------------------------------------------------

def test_a_failing_point_does_not_stop_the_others( capsys, tmp_path, monkeypatch ):
  real = run.latency

  def latency( model, *a, **k ):
    if model.dfx.cores == 2:
      raise ValueError( "step 2 did not finish\nin 10 cycles" )
    return real( model, *a, **k )
  monkeypatch.setattr( run, "latency", latency )
  out_dir = tmp_path / "o"
  assert main( SWEEP + [ "--jobs", "1", "--no-cache", "--out", str( out_dir ) ] ) == 1
  out, err = capsys.readouterr()
  lines = out.splitlines()
  assert lines[0].startswith( "cores=1: " ) and "ms per step" in lines[0]
  assert lines[1] == "cores=2: failed: ValueError: step 2 did not finish in 10 cycles"
  assert err == ( f"dfx sweep: 1 of 2 points failed (the others are in {out_dir / 'sweep.json'}); "
                  f"cores=2: ValueError: step 2 did not finish in 10 cycles\n" )
  rec = json.loads( ( out_dir / "sweep.json" ).read_text() )
  good, bad = rec["points"]
  assert good["error"] is None and good["step"]["cycles"] > 0 and good["pareto_lut"]
  assert bad["error"] == "ValueError: step 2 did not finish in 10 cycles" and bad["step"] is None
  assert "failed: ValueError: step 2" in ( out_dir / "sweep.md" ).read_text()
  # --json: the record (with the failure) is the one JSON object on stdout
  assert main( SWEEP + [ "--jobs", "1", "--no-cache", "--out", str( out_dir ), "--json" ] ) == 1
  out, err = capsys.readouterr()
  assert json.loads( out )["points"][1]["error"].startswith( "ValueError" )
  assert len( err.splitlines() ) == 1
