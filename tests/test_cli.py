"""`dfx`: the JSON `generate` prints, and one clear line (exit 1, usage 2)
for every bad argument or file; a closed pipe is silent, Ctrl-C one line."""

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
import safetensors.numpy

from pymtl_dfx import cli
from pymtl_dfx.appliance import host as host_mod
from pymtl_dfx.cli import main
from pymtl_dfx.config import DFXConfig, gpt2_preset
from pymtl_dfx.gpt2 import DFXForward, generate, random_weights, save_checkpoint

TINY = gpt2_preset( "tiny" )


def run_json( capsys, *args ):
  assert main( [ "generate", "--json", *args ] ) == 0
  return json.loads( capsys.readouterr().out )


def reference( seed, prompt, n, dfx=DFXConfig() ):
  w = random_weights( TINY, seed ).to_fp16()
  return generate( DFXForward( w, dfx ), prompt, n )


def test_generate_json_matches_the_reference( capsys ):
  out = run_json( capsys, "--model", "tiny", "--prompt-ids", "1,2,3", "--new-tokens", "4",
                  "--cores", "2", "--seed", "3" )
  assert out["tokens"] == reference( 3, [ 1, 2, 3 ], 4 )
  assert ( out["level"], out["cores"], out["prompt_ids"] ) == ( "func", 2, [ 1, 2, 3 ] )
  per = out["per_op_class"]
  assert set( per ) == { "embedding", "layernorm", "attention", "ffn", "residual", "sync", "lm_head" }
  for cls in ( "attention", "ffn", "lm_head" ):
    assert per[ cls ]["flops"] > 0 and per[ cls ]["hbm_bytes"] > 0
  assert per["sync"]["ring_bytes"] > 0 and per["embedding"]["ddr_bytes"] > 0
  assert out["total"]["instructions"] == sum( v["instructions"] for v in per.values() )


def test_set_changes_the_hardware( capsys ):
  """--set d=32 halves the MFU tree: the reference of that config is matched."""
  out = run_json( capsys, "--model", "tiny", "--prompt-ids", "4,5", "--new-tokens", "3",
                  "--set", "d=32", "--set", "cores=2" )
  assert out["cores"] == 2 and out["set"] == [ "d=32", "cores=2" ]
  assert out["tokens"] == reference( 0, [ 4, 5 ], 3, DFXConfig( d=32 ) )


@pytest.mark.parametrize( "cores", [ 3, 5 ] )
def test_uneven_core_counts_are_padded( capsys, cores ):
  """3 or 5 cores do not divide tiny's 2 heads or its columns: the compiler
  pads them (zero heads, zero columns), so the tokens are the same."""
  out = run_json( capsys, "--model", "tiny", "--prompt-ids", "7,8", "--new-tokens", "3",
                  "--cores", str( cores ) )
  assert out["cores"] == cores and out["tokens"] == reference( 0, [ 7, 8 ], 3 )


def test_text_prompt_streams_text( capsys ):
  assert main( [ "generate", "--model", "tiny", "--prompt", "Hi", "--new-tokens", "2" ] ) == 0
  assert capsys.readouterr().out.startswith( "Hi" )


def test_level_choices_come_from_the_host():
  p = cli._parser()
  gen = p._subparsers._group_actions[0].choices["generate"]
  level = next( a for a in gen._actions if a.dest == "level" )
  assert tuple( level.choices ) == host_mod.LEVELS


def test_unit_levels_reach_the_host( capsys, monkeypatch ):
  """Parsed into a dict and passed under the name Host's signature uses."""
  seen = {}

  class FakeHost:
    def __init__( s, compiled, level="func", levels=None ):
      seen.update( level=level, levels=levels )
      raise ValueError( "fake host stops here" )

  monkeypatch.setattr( host_mod, "Host", FakeHost )
  code = main( [ "generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "1",
                 "--level", "cl", "--unit-levels", "mpu=rtl, vpu=cl" ] )
  assert code == 1 and "fake host stops here" in capsys.readouterr().err
  assert seen == { "level": "cl", "levels": { "mpu": "rtl", "vpu": "cl" } }


# --- every mistake: one line on stderr, the exit code, nothing written -------------

def _run( capsys, argv ):
  try:
    code = main( argv )
  except SystemExit as e:      # argparse's own usage errors
    code = e.code
  out, err = capsys.readouterr()
  return code, out, err


def _check_one_line( capsys, tmp_path, monkeypatch, argv, code, named ):
  monkeypatch.chdir( tmp_path )
  before = sorted( os.listdir( tmp_path ) )
  got, out, err = _run( capsys, argv )
  assert got == code, err
  assert err.count( "\n" ) == 1 and err.endswith( "\n" ), err
  assert named in err, err
  assert "Traceback" not in err and out == ""
  assert sorted( os.listdir( tmp_path ) ) == before


GEN = [ "generate", "--model", "tiny", "--prompt-ids", "1,2" ]


@pytest.mark.parametrize( "extra, named", [
  ( [ "--new-tokens", "0" ], "argument --new-tokens: 0 must be at least 1" ),
  ( [ "--new-tokens", "-3" ], "argument --new-tokens: -3 must be at least 1" ),
  ( [ "--new-tokens", "many" ], "argument --new-tokens: 'many' is not an integer" ),
  ( [ "--seed", "-1" ], "argument --seed: -1 must be at least 0" ),
  ( [ "--seed", "1.5" ], "argument --seed: '1.5' is not an integer" ),
  ( [ "--cores", "0" ], "argument --cores: 0 must be at least 1" ),
  ( [ "--cores", "-2" ], "argument --cores: -2 must be at least 1" ),
  ( [ "--cores", "two" ], "argument --cores: 'two' is not an integer" ),
  ( [ "--level", "gates" ], "argument --level: invalid choice: 'gates'" ),
  ( [ "--set", "foo=1" ], "'foo' is not a DFXConfig field" ),
  ( [ "--set", "d=3" ], "d=3 (must be a power of two)" ),
  ( [ "--set", "d=abc" ], "d='abc' (must be an integer)" ),
  ( [ "--set", "d" ], "'d' (expected key=value)" ),
  ( [ "--set", "cores=0" ], "cores=0 (must be positive)" ),
  ( [ "--set", "cores=2", "--cores", "4" ], "--cores 4 and --set cores=2 disagree" ),
  ( [ "--level", "fl", "--unit-levels", "mpux=rtl" ], "'mpux' is not a unit (units: ctrl" ),
  ( [ "--level", "fl", "--unit-levels", "mpu=rtx" ], "mpu='rtx' is not a unit level" ),
  ( [ "--level", "fl", "--unit-levels", "mpu" ], "'mpu' is not unit=level" ),
  ( [ "--level", "fl", "--unit-levels", "mpu=rtl,mpu=cl" ], "mpu is given twice (rtl, cl)" ),
  ( [ "--level", "fl", "--unit-levels", "," ], "',' names no unit" ),
  ( [ "--unit-levels", "mpu=rtl" ], "--unit-levels needs a stream level" ),
  ( [ "--new-tokens", "127" ], "2 prompt tokens + 127 new tokens = 129 positions, but model "
    "'tiny' has n_positions=128; use --new-tokens <= 126" ),
  ( [ "--prompt", "x" ], "not allowed with argument --prompt-ids" ),
] )
def test_usage_errors( capsys, tmp_path, monkeypatch, extra, named ):
  _check_one_line( capsys, tmp_path, monkeypatch, GEN + extra, 2, named )


@pytest.mark.parametrize( "argv, named", [
  ( [ "generate", "--model", "gpt5", "--prompt-ids", "1" ],
    "--model 'gpt5' is neither a checkpoint directory nor a preset" ),
  ( [ "generate", "--model", "tiny", "--prompt-ids", "1,x" ], "comma-separated integers" ),
  ( [ "generate", "--model", "tiny", "--prompt-ids", "999" ], "out of range: [999]" ),
  ( [ "generate", "--model", "tiny", "--prompt-ids", "-1" ], "out of range: [-1]" ),
  ( [ "generate", "--model", "tiny", "--prompt-ids", "," ], "1 or more ids in [0, 256)" ),
  ( [ "generate", "--model", "tiny", "--prompt-ids", ",".join( [ "1" ] * 128 ) ],
    "128 prompt tokens + 16 new tokens = 144 positions" ),
  ( [ "generate", "--model", "tiny" ], "one of the arguments --prompt --prompt-ids is required" ),
  ( [ "generate", "--prompt", "x" ], "the following arguments are required: --model" ),
  ( [ "demo", "--pairs", "-1" ], "argument --pairs: -1 must be at least 1" ),
  ( [ "demo", "--pairs", "0" ], "argument --pairs: 0 must be at least 1" ),
  ( [ "demo", "--seed", "-1" ], "argument --seed: -1 must be at least 0" ),
  ( [ "demo", "--new-tokens", "0" ], "argument --new-tokens: 0 must be at least 1" ),
  ( [ "demo", "--new-tokens", "124" ], "5 prompt tokens + 124 new tokens = 129 positions" ),
  ( [ "bake" ], "invalid choice: 'bake'" ),
] )
def test_more_usage_errors( capsys, tmp_path, monkeypatch, argv, named ):
  _check_one_line( capsys, tmp_path, monkeypatch, argv, 2, named )


@pytest.mark.parametrize( "extra, named", [
  ( [ "--cores", "300" ], "core count" ),
  ( [ "--set", "d=128" ], "head_dim=64 (n_embd=128 / n_head=2) needs to be a multiple of d=128" ),
  ( [ "--set", "vreg_entries=4" ], "register file" ),
  ( [ "--set", "mreg_entries=1" ], "x buffer" ),
] )
def test_what_the_compiler_refuses( capsys, tmp_path, monkeypatch, extra, named ):
  _check_one_line( capsys, tmp_path, monkeypatch, GEN + extra, 1, named )


def _nan_in_wte( ckpt ):
  f = str( ckpt / "model.safetensors" )
  t = safetensors.numpy.load_file( f )
  t["wte.weight"][ 4, 9 ] = np.nan
  safetensors.numpy.save_file( t, f )


def _overflow_in_fc( ckpt ):
  f = str( ckpt / "model.safetensors" )
  t = safetensors.numpy.load_file( f )
  t["h.0.mlp.c_fc.weight"][ 2, 3 ] = 1e5
  safetensors.numpy.save_file( t, f )


@pytest.mark.parametrize( "damage, named", [
  ( lambda c: ( c / "config.json" ).write_text( "{oops" ), "config.json: not readable JSON" ),
  ( lambda c: ( c / "config.json" ).unlink(), "config.json: file not found" ),
  ( lambda c: ( c / "model.safetensors" ).write_bytes( b"\0" * 3 ), "not a readable safetensors" ),
  ( lambda c: ( c / "vocab.json" ).write_text( "{}" ), "merges.txt: file not found" ),
  ( _nan_in_wte, "tensor 'wte.weight' holds 1 NaN/inf value(s), the first (nan) at index [4, 9]" ),
  ( _overflow_in_fc, "'h.0.mlp.c_fc.weight' has 1 value(s) beyond FP16's range (+-65504), "
    "the first (100000.0) at index [2, 3]" ),
] )
def test_bad_checkpoint_is_one_line( capsys, tmp_path, monkeypatch, ckpt, damage, named ):
  damage( ckpt )
  argv = [ "generate", "--model", str( ckpt ), "--prompt-ids", "1", "--new-tokens", "2" ]
  _check_one_line( capsys, tmp_path, monkeypatch, argv, 1, named )


def test_debug_shows_the_traceback( capsys ):
  from pymtl_dfx.compiler.limits import CompileError
  with pytest.raises( CompileError ):
    main( GEN + [ "--cores", "300", "--debug" ] )


# --- pipes and Ctrl-C, in a real process ---------------------------------------------

def _dfx( *args, **kw ):
  return subprocess.Popen( [ sys.executable, "-m", "pymtl_dfx.cli", *args ],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw )


def test_closed_pipe_is_silent():
  p = _dfx( "generate", "--model", "tiny", "--prompt-ids", "1,2", "--new-tokens", "100" )
  p.stdout.read( 1 )
  p.stdout.close()          # `| head -c 1`
  err = p.stderr.read()
  assert p.wait( 120 ) == cli.EXIT_PIPE and err == b""


@pytest.mark.skipif( sys.platform == "win32", reason="SIGINT" )
def test_ctrl_c_prints_one_line():
  # the cycle-level appliance: seconds per step, so the signal always lands
  # mid-generation (the functional one can finish 100 tokens first)
  p = _dfx( "generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "100",
            "--level", "cl", "--set", "d=32", "--set", "l=8", "--set", "hbm_channels=4",
            "--set", "vreg_entries=512", "--set", "mreg_entries=32", "--set", "psum_entries=16" )
  p.stdout.read( 1 )        # the prompt: generation has started
  p.send_signal( signal.SIGINT )
  out, err = p.communicate( timeout=120 )
  assert p.returncode == cli.EXIT_INTERRUPTED
  assert err == b"dfx generate: interrupted\n"


def test_timing_of_a_timed_level_sums_and_converts_at_the_clock():
  from types import SimpleNamespace
  from pymtl_dfx.cli import _timing
  from pymtl_dfx.config import DFXConfig
  r = dict( cycles=3000, step_cycles=[ 1000, 2000 ], stage_cycles={ "summarization": 1000,
            "generation": 2000 }, class_cycles={ "attention": 2500, "ffn": 500 },
            unit_busy={ "mpu": 10 } )
  host = SimpleNamespace( level="cl", results=lambda: r )
  t = _timing( host, DFXConfig( clock_mhz=200 ) )
  assert t["cycles"]["total"] == sum( t["cycles"]["per_op_class"].values() ) == 3000
  assert t["ms_at_clock"]["total"] == 3000 / 200e3
  assert t["ms_at_clock"]["per_step"] == [ 1000 / 200e3, 2000 / 200e3 ]
  assert _timing( SimpleNamespace( level="func" ), DFXConfig() ) == {}
  assert _timing( SimpleNamespace( level="fl" ), DFXConfig() ) == {}
