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
from pymtl_dfx import levels as levels_mod
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


def test_level_choices_are_every_level():
  p = cli._parser()
  gen = p._subparsers._group_actions[0].choices["generate"]
  level = next( a for a in gen._actions if a.dest == "level" )
  assert tuple( level.choices ) == levels_mod.LEVELS


def test_unit_levels_reach_the_host( capsys, monkeypatch ):
  """Parsed into a dict and passed under the name Host's signature uses."""
  seen = {}

  def fake_host( compiled, level="func", levels=None, **options ):
    seen.update( level=level, levels=levels )
    raise ValueError( "fake host stops here" )

  monkeypatch.setattr( levels_mod, "host_for", fake_host )
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
  ( [ "--set", "mpu_post_bypass=2" ], "mpu_post_bypass=2 (must be 0" ),
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
  # a size past its bound (`bounds`), before the compiler sees it
  ( [ "--cores", "300" ], "cores=300 is above its bound 255" ),
  # a limit of the configuration alone (`limits.config_errors`), whatever the model
  ( [ "--set", "mreg_entries=1" ], "mreg_entries=1 must be >= 4" ),
] )
def test_usage_errors( capsys, tmp_path, monkeypatch, extra, named ):
  _check_one_line( capsys, tmp_path, monkeypatch, GEN + extra, 2, named )


@pytest.mark.parametrize( "argv, named", [
  ( [ "generate", "--model", "gpt5", "--prompt-ids", "1" ],
    "--model 'gpt5' is neither a checkpoint directory nor a preset" ),
  ( [ "generate", "--model", "tiny", "--prompt-ids", "1,x" ], "comma-separated integers" ),
  ( [ "generate", "--model", "tiny", "--prompt-ids", "999" ], "out of range: [999]" ),
  ( [ "generate", "--model", "tiny", "--prompt-ids", "-1" ], "out of range: [-1]" ),
  ( [ "generate", "--model", "tiny", "--prompt-ids", "," ], "--prompt-ids ',' has an empty item" ),
  ( [ "generate", "--model", "tiny", "--prompt-ids", ",".join( [ "1" ] * 128 ) ],
    "128 prompt tokens + 16 new tokens = 144 positions" ),
  ( [ "generate", "--model", "tiny" ], "one of the arguments --prompt --prompt-ids is required" ),
  ( [ "demo", "--cores", "0" ], "argument --cores: 0 must be at least 1" ),
  ( [ "demo", "--new-tokens", "0" ], "argument --new-tokens: 0 must be at least 1" ),
  ( [ "demo", "--new-tokens", "300" ], "4 prompt tokens + 300 new tokens = 304 positions" ),
  ( [ "bake" ], "invalid choice: 'bake'" ),
] )
def test_more_usage_errors( capsys, tmp_path, monkeypatch, argv, named ):
  _check_one_line( capsys, tmp_path, monkeypatch, argv, 2, named )


@pytest.mark.parametrize( "extra, named", [
  ( [ "--set", "d=128" ], "head_dim=64 (n_embd=128 / n_head=2) needs to be a multiple of d=128" ),
  ( [ "--set", "vreg_entries=4" ], "register file" ),
  # issue #38: the preset's LM head is one DMA stream per card, too long for one card
  ( [ "--model", "gpt2-xl-dfx-1600", "--cores", "1", "--new-tokens", "1" ],
    "hbm_read of weight stream lm_head needs vecs=1257600 on 1 core(s), the vecs field holds "
    "1048575 (VECS_BITS=20: one DMA instruction streams it whole); use 2 or more cores" ),
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
    main( GEN + [ "--set", "vreg_entries=4", "--debug" ] )


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
  # A terminal delivers Ctrl-C to a process whose SIGINT is the default; a
  # test suite started in the background (`make test &`) hands its children
  # SIGINT ignored, and Python then never turns the signal into
  # KeyboardInterrupt (two signals were lost that way on 2026-12-01).
  p = _dfx( "generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "100",
            "--level", "cl", "--set", "d=32", "--set", "l=8", "--set", "hbm_channels=4",
            "--set", "vreg_entries=512", "--set", "mreg_entries=32", "--set", "psum_entries=16",
            preexec_fn=lambda: signal.signal( signal.SIGINT, signal.SIG_DFL ) )
  p.stdout.read( 1 )        # the prompt: generation has started
  p.send_signal( signal.SIGINT )
  out, err = p.communicate( timeout=60 )
  assert p.returncode == cli.EXIT_INTERRUPTED
  # after the run's estimate (`bounds.announce`), the one line
  *before, last = err.decode().splitlines()
  assert last == "dfx generate: interrupted"
  assert all( l.startswith( "dfx generate: estimate: ~" ) for l in before ) and len( before ) <= 1, err


def test_timing_of_a_timed_level_sums_and_converts_at_the_clock():
  from types import SimpleNamespace
  from pymtl_dfx.cli.generate import timing as _timing
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


# --- a finished command line (issue #13 item 4) ----------------------------------------

def _subparsers():
  p = cli._parser()
  return p._subparsers._group_actions[0].choices


def test_version( capsys ):
  from pymtl_dfx import __version__
  with pytest.raises( SystemExit ) as e:
    main( [ "--version" ] )
  assert e.value.code == 0 and capsys.readouterr().out == f"dfx (pymtl_dfx) {__version__}\n"


def test_every_command_has_help_with_defaults_an_example_and_json():
  from pymtl_dfx.config import GPT2_PRESETS
  top = cli._parser().format_help()
  assert "--version" in top and "examples:" in top and all( n in top for n in GPT2_PRESETS )
  for name, p in _subparsers().items():
    text = p.format_help()
    assert "example" in text, name
    assert any( a.dest == "json" for a in p._actions ), name
    # a flag (store_true / store_false) shows no default: see test_flags_show_no_default
    defaulted = [ a for a in p._actions if a.help and a.default not in ( None, False, [] )
                  and a.default is not __import__( "argparse" ).SUPPRESS and a.nargs != 0 ]
    for a in defaulted:
      shown = " ".join( p._get_formatter()._get_help_string( a ).split() ) % { "default": a.default }
      # or said in words with this machine's value: "(default: the CPU count, 2 here"
      assert f"(default: {a.default})" in shown or \
        ( "(default: " in shown and f", {a.default} here" in shown ), ( name, a.dest )
  gen = _subparsers()["generate"].format_help()
  assert "(default: 16)" in gen and "(default: func)" in " ".join( gen.split() )
  assert all( n in gen for n in GPT2_PRESETS )


def test_numerics_json( capsys ):
  assert main( [ "numerics", "--json" ] ) == 0
  rows = json.loads( capsys.readouterr().out )["functions"]
  assert [ r["name"] for r in rows ] == [ "exp", "recip", "rsqrt", "gelu" ]
  assert all( r["max_ulp"] >= 0 for r in rows )


def test_demo_json( capsys, tmp_path, monkeypatch ):
  """The demo on the shipped model, short: its record and nothing else on
  stdout; the appliance's tokens are the reference's, the timing exact
  cycles split by op class; no paper comparison without `dfx report`'s
  steps in the cache."""
  monkeypatch.setenv( "DFX_PERF_CACHE", str( tmp_path ) )
  assert main( [ "demo", "--json", "--prompt", "He", "--new-tokens", "2", "--cores", "2",
                 "--paper", "cached" ] ) == 0
  out = json.loads( capsys.readouterr().out )
  assert out["model"] == "tiny-english" and out["cores"] == 2 and len( out["tokens"] ) == 2
  assert out["same_as_dfx_numerics"] is True
  assert out["cycles"] == sum( out["per_op_class"].values() ) == sum( out["per_stage"].values() )
  assert out["ms_per_generated_token"] > 0
  assert out["paper_scaling"] is None


def test_demo_sets_the_report_beside_the_paper( monkeypatch, tmp_path ):
  """The comparison line, the figure drawn from the same rows, and without
  the steps (only reading the cache) how to get them."""
  from pymtl_dfx import demo
  from pymtl_dfx.perf.sampled import NotCached
  from pymtl_dfx.report import compute
  rows = { c: dict( tokens_per_s=t, ms=64e3 / t, paper_tokens_per_s=p )
           for c, t, p in ( ( 1, 50.0, 93.1 ), ( 4, 150.25, 207.56 ) ) }
  asked = []

  def scaling( cache, compute, jobs, on_done ):
    asked.append( ( compute, jobs ) )
    return rows
  monkeypatch.setattr( compute, "paper_scaling", scaling )
  said = []
  assert demo.paper_comparison( said.append, compute=True, jobs=2, out_dir=tmp_path / "d" ) == rows
  assert asked == [ ( True, 2 ) ]
  assert said[0] == ( "GPT-2 345M 64:64 (input:output tokens; sampled steps, cycles exact to CL), "
                      "tokens/s: 1 card 50.0 (paper 93.10); 4 cards 150.2 (paper 207.56)" )
  assert str( tmp_path / "d" / "scaling.png" ) in said[1]
  assert sorted( p.name for p in ( tmp_path / "d" ).iterdir() ) == [ "scaling.png", "scaling.svg" ]

  def missing( cache, compute, jobs, on_done ):
    raise NotCached( "1 of 6 steps are not in the cache" )
  monkeypatch.setattr( compute, "paper_scaling", missing )
  said.clear()
  assert demo.paper_comparison( said.append ) is None
  assert "dfx report --out build/report" in said[0]


# errors with --json: one JSON object on stdout, the one line on stderr, the exit code

@pytest.mark.parametrize( "argv, code, kind, named", [
  ( GEN + [ "--new-tokens", "0" ], 2, "usage", "argument --new-tokens: 0 must be at least 1" ),
  ( [ "generate", "--model", "tiny" ], 2, "usage", "one of the arguments --prompt --prompt-ids" ),
  ( GEN + [ "--set", "foo=1" ], 2, "usage", "'foo' is not a DFXConfig field" ),
  ( GEN + [ "--cores", "300" ], 2, "usage", "cores=300 is above its bound 255" ),
  ( GEN + [ "--set", "vreg_entries=4" ], 1, "error", "register file" ),
  ( [ "generate", "--model", "gpt5", "--prompt-ids", "1" ], 2, "usage", "neither a checkpoint" ),
  ( [ "perf", "--model", "tiny", "--in", "0", "--out", "1" ], 2, "usage", "--in: 0 must be" ),
  ( [ "verilog", "--out", "x", "--set", "d=3" ], 2, "usage", "d=3 (must be a power of two)" ),
] )
def test_errors_as_json( capsys, tmp_path, monkeypatch, argv, code, kind, named ):
  monkeypatch.chdir( tmp_path )
  got, out, err = _run( capsys, argv + [ "--json" ] )
  assert got == code and err.count( "\n" ) == 1 and named in err, err
  e = json.loads( out )["error"]
  assert ( e["kind"], e["exit_code"] ) == ( kind, code ) and named in e["message"]
  assert os.listdir( tmp_path ) == []


# Ctrl-C with --json: the partial result

def test_ctrl_c_with_json_prints_the_partial_result( capsys, monkeypatch ):
  step = host_mod.Host.step
  calls = [ 0 ]

  def interrupted_step( s, token, want_logits ):
    calls[0] += 1
    if calls[0] == 6:          # 2 prompt steps, then the 4th generated token's step
      raise KeyboardInterrupt
    return step( s, token, want_logits )

  monkeypatch.setattr( host_mod.Host, "step", interrupted_step )
  code, out, err = _run( capsys, GEN + [ "--new-tokens", "10", "--json" ] )
  assert code == cli.EXIT_INTERRUPTED and err == "dfx generate: interrupted\n"
  rec = json.loads( out )        # one object: the partial result, no error object after it
  assert rec["interrupted"] is True and rec["tokens"] == reference( 0, [ 1, 2 ], 4 )
  assert rec["steps"] == 5


@pytest.mark.parametrize( "extra, says", [
  ( [ "--level", "kernel" ], "translates the core (~42 s for the whole core at d=64, l=16)" ),
  ( [ "--level", "cl", "--unit-levels", "mpu=verilog" ], "translates its verilog units" ),
] )
def test_a_verilator_build_is_announced_off_a_terminal_too( capsys, monkeypatch, extra, says ):
  """issue #38: --level kernel built for minutes without a word.  A notice,
  not progress: on stderr wherever it points, never with --json."""
  class Stop( Exception ):
    pass

  def stop( *a, **k ):
    raise Stop
  monkeypatch.setattr( levels_mod, "host_for", stop )
  monkeypatch.setenv( "DFX_VL_CACHE", "/nowhere/vl" )
  with pytest.raises( Stop ):
    main( GEN + [ "--new-tokens", "1", *extra ] )
  err = capsys.readouterr().err
  assert err.startswith( f"dfx generate: building the {extra[1]} appliance as a Verilator model "
                         f"first: pymtl3 " ) and err.count( "\n" ) == 1, err
  assert says in err and err.endswith( "then Verilator and the C++ compiler build it (minutes; "
                                       "skipped when the model is already in /nowhere/vl)\n" ), err
  with pytest.raises( Stop ):
    main( GEN + [ "--new-tokens", "1", *extra, "--json" ] )
  assert capsys.readouterr().err == ""


# progress on stderr: on a terminal only, never with --json

def test_progress_on_a_terminal( capsys, monkeypatch ):
  monkeypatch.setattr( cli.common, "_stderr_is_tty", lambda: True )
  monkeypatch.setattr( cli.common, "SLOW_SECONDS", -1.0 )       # everything counts as slow
  assert main( GEN + [ "--prompt-ids", "1,2,3", "--new-tokens", "3" ] ) == 0
  err = capsys.readouterr().err
  for part in ( "compiling tiny for 1 core(s)", "prompt 1/3", "prompt 2/3", "token 2/3",
                "tokens/s", "3 tokens in" ):
    assert part in err, err
  assert err.endswith( "tokens/s on the host)\n" )


@pytest.mark.parametrize( "tty, extra", [ ( False, [] ), ( True, [ "--json" ] ) ] )
def test_no_progress_off_a_terminal_or_with_json( capsys, monkeypatch, tty, extra ):
  monkeypatch.setattr( cli.common, "_stderr_is_tty", lambda: tty )
  monkeypatch.setattr( cli.common, "SLOW_SECONDS", -1.0 )
  assert main( GEN + [ "--new-tokens", "3" ] + extra ) == 0
  assert capsys.readouterr().err == ""


@pytest.mark.parametrize( "tty, enabled", [ ( True, True ), ( False, True ), ( True, False ) ] )
def test_counted_progress_keeps_its_last_line( capsys, monkeypatch, tty, enabled ):
  """The display perf, report and sweep pass to the library (on_done(k, n)):
  `what k/n` with the time left, the last one kept; nothing off a terminal
  or with --json (enabled=False)."""
  monkeypatch.setattr( cli.common, "_stderr_is_tty", lambda: tty )
  monkeypatch.setattr( cli.common, "SLOW_SECONDS", -1.0 )
  on_done = cli.common.Progress( "dfx perf", enabled ).counter( "timed step" )
  for k in ( 1, 2, 3 ):
    on_done( k, 3 )
  err = capsys.readouterr().err
  if not ( tty and enabled ):
    assert err == ""
    return
  for k in ( 1, 2, 3 ):
    assert f"dfx perf: timed step {k}/3 [" in err, err
  assert err.endswith( "\n" ) and err.count( "\n" ) == 1, repr( err )


def test_every_command_module_is_registered():
  """A command is its module in pymtl_dfx/cli plus its name in COMMANDS:
  a module left out of COMMANDS would be a command nobody can run."""
  import pkgutil
  modules = { m.name for m in pkgutil.iter_modules( cli.__path__ ) } - { "common", "__main__" }
  assert modules == set( cli.COMMANDS ) == set( _subparsers() )


# streamed text: a character split across tokens is printed whole, once

def test_streamed_text_keeps_multibyte_characters( capsys ):
  from pymtl_dfx.gpt2.tokenizer import ByteTokenizer
  prompt = "né 🙂 日本"
  rec = run_json( capsys, "--model", "tiny", "--prompt", prompt, "--new-tokens", "6" )
  assert main( [ "generate", "--model", "tiny", "--prompt", prompt, "--new-tokens", "6" ] ) == 0
  out = capsys.readouterr().out
  assert out == ByteTokenizer( 256 ).decode( rec["prompt_ids"] + rec["tokens"] ) + "\n"
  assert out.startswith( prompt )


# --save-image / --image

def test_save_and_reuse_a_compiled_image( capsys, tmp_path ):
  img = str( tmp_path / "tiny.dfx" )
  first = run_json( capsys, "--model", "tiny", "--prompt-ids", "1,2", "--new-tokens", "3",
                    "--cores", "2", "--save-image", img )
  assert os.path.isfile( img ) and first["saved_image"] == img
  again = run_json( capsys, "--model", "tiny", "--prompt-ids", "1,2", "--new-tokens", "3",
                    "--image", img, "--level", "func" )
  assert again["tokens"] == first["tokens"] == reference( 0, [ 1, 2 ], 3 )
  assert again["cores"] == 2 and again["seconds"]["compile"] < 5
  # compiled for the whole context: a longer generation reuses it too
  longer = run_json( capsys, "--model", "tiny", "--prompt-ids", "5,6,7", "--new-tokens", "6",
                     "--image", img )
  assert longer["tokens"] == reference( 0, [ 5, 6, 7 ], 6 )


@pytest.fixture
def saved_image( tmp_path_factory ):
  img = tmp_path_factory.mktemp( "img" ) / "tiny2.dfx"
  assert main( GEN + [ "--new-tokens", "1", "--cores", "2", "--save-image", str( img ), "--json" ] ) == 0
  return str( img )


def test_image_errors_are_one_line( capsys, tmp_path, monkeypatch, saved_image ):
  junk = tmp_path / "junk.dfx"
  junk.write_bytes( b"not an image" )
  capsys.readouterr()
  cases = [
    ( GEN + [ "--image", saved_image, "--cores", "4" ], 2,
      f"--image {saved_image} was compiled for cores=2" ),
    ( GEN + [ "--image", saved_image, "--set", "d=32" ], 2, "was compiled for" ),
    ( GEN + [ "--image", saved_image, "--save-image", "x.dfx" ], 2,
      "argument --save-image: not allowed with argument --image" ),
    ( GEN + [ "--image", str( junk ) ], 1, "not a DFX image" ),
    ( GEN + [ "--image", str( tmp_path / "absent.dfx" ) ], 1, "absent.dfx: does not exist" ),
    ( [ "generate", "--model", "gpt2", "--prompt-ids", "1", "--image", saved_image ], 2,
      f"--image {saved_image} holds model 'tiny' (n_layer=2, n_embd=128, vocab_size=256), "
      f"not --model gpt2" ),
  ]
  for argv, code, named in cases:
    _check_one_line( capsys, tmp_path, monkeypatch, argv, code, named )


def test_generate_runs_a_head_dim_variant_and_its_image_names_head_dim( capsys, tmp_path,
                                                                        monkeypatch ):
  """A checkpoint whose config.json gives head_dim (a DFX variant: 2 heads
  of 64 inside a 192-wide residual) generates the DFX forward's tokens;
  its image refused for --model tiny names head_dim."""
  from pymtl_dfx.config import GPT2Config
  cfg = GPT2Config( n_layer=1, n_embd=192, n_head=2, head_dim=64, vocab_size=256,
                    n_positions=16, name="narrow" )
  w = random_weights( cfg, 3 )
  save_checkpoint( tmp_path / "narrow", w )
  img = str( tmp_path / "narrow.dfx" )
  rec = run_json( capsys, "--model", str( tmp_path / "narrow" ), "--prompt-ids", "1,2",
                  "--new-tokens", "2", "--cores", "2", "--save-image", img )
  assert rec["tokens"] == generate( DFXForward( w ), [ 1, 2 ], 2 )
  _check_one_line( capsys, tmp_path, monkeypatch, GEN + [ "--image", img ], 2,
                   f"--image {img} holds model 'narrow' (n_layer=1, n_embd=192, "
                   f"vocab_size=256, head_dim=64), not --model tiny" )


# sampling on the host

def test_sampling_is_seeded_and_matches_the_reference_sampler( capsys ):
  from pymtl_dfx.gpt2 import Sampler
  args = ( "--model", "tiny", "--prompt-ids", "1,2", "--new-tokens", "12", "--seed", "5",
           "--temperature", "1.5", "--top-k", "50" )
  a = run_json( capsys, *args )
  assert a["tokens"] == run_json( capsys, *args )["tokens"]
  w = random_weights( TINY, 5 ).to_fp16()
  want = generate( DFXForward( w ), [ 1, 2 ], 12, choose=Sampler( 1.5, 50, seed=5 ) )
  assert a["tokens"] == want != reference( 5, [ 1, 2 ], 12 )
  assert a["decoding"] == { "temperature": 1.5, "top_k": 50, "stop_at_eos": False }


def test_stop_at_eos( capsys, monkeypatch ):
  from pymtl_dfx.gpt2 import tokenizer
  ref = reference( 0, [ 1, 2 ], 8 )
  monkeypatch.setattr( tokenizer.ByteTokenizer, "eot_id", ref[ 2 ] )
  out = run_json( capsys, "--model", "tiny", "--prompt-ids", "1,2", "--new-tokens", "8",
                  "--stop-at-eos" )
  assert out["tokens"] == ref[ :ref.index( ref[ 2 ] ) + 1 ] and out["stopped_at_eos"]


@pytest.mark.parametrize( "extra, named", [
  ( [ "--top-k", "5" ], "--top-k needs --temperature > 0" ),
  ( [ "--top-k", "0", "--temperature", "1" ], "argument --top-k: 0 must be at least 1" ),
  ( [ "--temperature", "-1" ], "argument --temperature: -1 must be a finite number >= 0" ),
  ( [ "--temperature", "nan" ], "argument --temperature: nan must be a finite number >= 0" ),
  ( [ "--temperature", "hot" ], "argument --temperature: 'hot' is not a number" ),
  ( [ "--stop-at-eos" ], "--stop-at-eos: model 'tiny' has no tokenizer with an end-of-text" ),
] )
def test_sampling_usage_errors( capsys, tmp_path, monkeypatch, extra, named ):
  _check_one_line( capsys, tmp_path, monkeypatch, GEN + extra, 2, named )


def test_folder_without_tokenizer_refuses_text_prompts( capsys, tmp_path, monkeypatch, ckpt ):
  _check_one_line( capsys, tmp_path, monkeypatch,
                   [ "generate", "--model", str( ckpt ), "--prompt", "Hello" ], 1,
                   "no tokenizer (tokenizer.json, or vocab.json + merges.txt), so text cannot "
                   "be turned into token ids; give the prompt as ids with --prompt-ids" )
  assert main( [ "generate", "--model", str( ckpt ), "--prompt-ids", "1,2", "--new-tokens",
                 "2" ] ) == 0
  assert capsys.readouterr().out.startswith( "<1><2><" )
