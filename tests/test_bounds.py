"""A bound on every size (`pymtl_dfx.bounds`): each size past its bound is
refused up front, in one line naming the value, the bound and where it
comes from, by every command it enters; values at the bound are accepted;
a legal slow latency runs to completion; docs/bounds.md is current."""

import json
import os
import time
import types

import pytest

from pymtl_dfx import bounds as B
from pymtl_dfx.compiler import run_estimate as E
from pymtl_dfx.cli import main
from pymtl_dfx.compiler.build import plan
from pymtl_dfx.compiler.limits import CompileError
from pymtl_dfx.config import DFXConfig, GPT2Config

DOC = os.path.join( os.path.dirname( __file__ ), "..", "docs", "bounds.md" )
# generous: only a hang or a minutes-long run fails it, not a slow machine
FAST_S = 10


def _model( tmp_path, name, **cfg ):
  """A checkpoint folder holding only config.json (what every command reads
  before the weights); raw JSON text so that 10**400 and 1e6 are as a user
  would write them."""
  base = dict( model_type="gpt2", n_layer=2, n_embd=128, n_head=2, vocab_size=256,
               n_positions=128 )
  base.update( cfg )
  d = tmp_path / name
  d.mkdir()
  text = "{" + ", ".join( f'"{k}": {v if isinstance( v, str ) and k != "model_type" else json.dumps( v )}'
                          for k, v in base.items() ) + "}"
  ( d / "config.json" ).write_text( text )
  return str( d )


PERF = [ "perf", "--model", "tiny", "--in", "2", "--out", "2", "--no-cache" ]
GEN = [ "generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "1" ]

# (argv, or a function of tmp_path giving it; exit code; what the line names)
REFUSED = [
  ( PERF + [ "--cores", "256" ], 2, [ "cores=256", "bound 255", "8 bits" ] ),
  ( PERF + [ "--cores", "10000000000000000000000000000" ], 2, [ "cores=", "bound 255" ] ),
  ( GEN + [ "--cores", "256" ], 2, [ "cores=256", "bound 255" ] ),
  ( PERF + [ "--set", "cores=300" ], 2, [ "cores=300", "bound 255" ] ),
  ( [ "demo", "--cores", "256", "--paper", "skip" ], 2, [ "cores=256", "bound 255" ] ),
  ( PERF + [ "--set", "hbm_channels=64" ], 2, [ "hbm_channels=64", "bound 32", "pseudo-channels" ] ),
  ( PERF + [ "--set", "hbm_channel_mb=512" ], 2, [ "hbm_channel_mb=512", "bound 256" ] ),
  ( PERF + [ "--set", "router_words=8192" ], 2, [ "router_words=8192", "bound 4486", "jumbo" ] ),
  ( PERF + [ "--set", "psum_entries=1073741824" ], 2, [ "psum_entries=1073741824", "on-chip RAM" ] ),
  ( PERF + [ "--set", "mreg_entries=1073741824" ], 2, [ "mreg_entries=", "on-chip RAM" ] ),
  ( PERF + [ "--set", "weight_fifo_entries=1000000" ], 2, [ "weight_fifo_entries=", "tile" ] ),
  ( PERF + [ "--set", "inst_buffer_entries=100000000" ], 2, [ "inst_buffer_entries=", "bound" ] ),
  ( PERF + [ "--set", "scoreboard_entries=100000" ], 2, [ "scoreboard_entries=", "flip-flops" ] ),
  ( PERF + [ "--set", "mem_outstanding=100000" ], 2, [ "mem_outstanding=", "response slot" ] ),
  ( PERF + [ "--set", "fp_add_latency=100000" ], 2, [ "fp_add_latency=100000", "bound 2546", "flip-flops" ] ),
  ( PERF + [ "--set", "sfu_rom_latency=5000" ], 2, [ "sfu_rom_latency=5000", "bound 2546" ] ),
  ( PERF + [ "--set", "d=1024" ], 2, [ "d=1024", "bound 255", "ELEMS_BITS" ] ),
  ( [ "verilog", "--no-lint", "--set", "d=256", "--out", "{tmp}/v" ], 2, [ "d=256", "bound 255" ] ),
  ( [ "verilog", "--no-lint", "--set", "d=1048576", "--out", "{tmp}/v" ], 2,
    [ "d=1048576", "translat", "and 9 more" ] ),
  # the RTL core's own bound: what translates on this machine
  ( [ "verilog", "--no-lint", "--set", "d=4096", "--set", "vreg_entries=64", "--out", "{tmp}/v" ],
    2, [ "d=4096", f"bound {B.max_verilog_macs() // 16}", "translation measured" ] ),
  ( GEN + [ "--level", "rtl", "--set", "d=4096", "--set", "vreg_entries=64" ], 2,
    [ "d=4096", "translation measured" ] ),
  ( [ "sweep", "--model", "tiny", "--grid", "cores=2,256", "--out", "{tmp}/s" ], 2,
    [ "--grid cores=256", "bound 255" ] ),
  ( [ "sweep", "--model", "tiny", "--grid", "fp_mul_latency=6,9000", "--out", "{tmp}/s" ], 2,
    [ "fp_mul_latency=9000", "bound 2546" ] ),
  ( [ "sweep", "--model", "tiny", "--out", "{tmp}/s" ]
    + [ a for k in ( "d", "l", "vreg_entries", "mreg_entries", "psum_entries" )
        for a in ( "--grid", f"{k}=" + ",".join( str( 2**i ) for i in range( 1, 14 ) ) ) ], 2,
    [ f"--grid: 371293 points is above the bound of {B.MAX_SWEEP_POINTS:,}" ] ),
  ( [ "sweep", "--model", "tiny", "--out", "{tmp}/s", "--grid",
      "hbm_latency_ns=" + ",".join( str( v ) for v in range( 100, 401 ) ), "--grid",
      "ddr_latency_ns=" + ",".join( str( v ) for v in range( 100, 401 ) ) ], 2,
    [ f"--grid: 90601 points is above the bound of {B.MAX_SWEEP_POINTS:,}" ] ),
  ( [ "perf", "--model", "gpt2-xl-dfx-1600", "--cores", "1", "--in", "1", "--out", "1" ], 1,
    [ "lm_head needs vecs=1257600 on 1 core(s)", "use 2 or more cores" ] ),
  ( [ "report", "--out", "{tmp}/r", "--set", "psum_entries=1073741824" ], 2,
    [ "psum_entries=1073741824", "bound" ] ),
  # the model's sizes, from a checkpoint's config.json
  ( lambda t: [ "perf", "--model", _model( t, "m6", n_layer=10**6 ), "--in", "2", "--out", "2" ],
    1, [ "HBM capacity", "n_layer=1000000 is above its bound", "8 GB" ] ),
  # past 64 bits, config.json's reader refuses the number itself (files.load_json)
  ( lambda t: [ "perf", "--model", _model( t, "m400", n_layer=10**400 ), "--in", "2", "--out", "2" ],
    1, [ "config.json", "the integer 1000", "(401 digits) is out of range" ] ),
  ( lambda t: [ "perf", "--model", _model( t, "m18", n_layer=10**18 ), "--in", "2", "--out", "2" ],
    1, [ "n_layer=1000000000000000000 is above its bound" ] ),
  ( lambda t: [ "generate", "--model", _model( t, "g18", n_layer=10**18 ), "--prompt-ids", "1" ],
    1, [ "n_layer=1000000000000000000" ] ),
  ( lambda t: [ "perf", "--model", _model( t, "f6", n_layer="1e6" ), "--in", "2", "--out", "2" ],
    1, [ "n_layer=1000000.0 (must be an integer)" ] ),
  ( lambda t: [ "perf", "--model", _model( t, "e20", n_embd=2**20, n_head=2**14 ), "--in", "2",
                "--out", "2" ], 1, [ "n_embd=1048576 is above its bound 16384", "register file" ] ),
  ( lambda t: [ "perf", "--model", _model( t, "e18", n_embd=2 * 10**18, n_head=10**18 ), "--in",
                "2", "--out", "2" ], 1, [ "n_embd=2000000000000000000 is above its bound" ] ),
  ( lambda t: [ "perf", "--model", _model( t, "v12", vocab_size=10**12 ), "--in", "2", "--out", "2" ],
    1, [ "HBM capacity", "DDR capacity" ] ),
  ( lambda t: [ "perf", "--model", _model( t, "p18", n_positions=10**18 ), "--in", "2", "--out",
                "2" ], 1, [ "DDR capacity" ] ),
  ( lambda t: [ "sweep", "--model", _model( t, "s18", n_layer=10**18 ), "--grid", "d=64",
                "--out", f"{t}/s", "--no-cache", "--json" ], 0, [] ),
  ( PERF + [ "--in", str( 10**30 ) ], 2, [ "n_positions=128" ] ),
  ( PERF + [ "--set", "hbm_latency_ns=1e12" ], 2, [ "hbm_latency_ns=1000000000000.0", "32 bits" ] ),
  ( PERF + [ "--set", "ring_latency_ns=1e13" ], 2, [ "ring_latency_ns=", "32 bits" ] ),
  # legal for the hardware, not simulable here: refused by its estimate
  ( PERF + [ "--set", "hbm_latency_ns=1e9", "--jobs", "1" ], 1, [ "estimated ~", "h (3 steps",
                                                                "24 h a run may take" ] ),
  ( GEN + [ "--level", "cl", "--set", "hbm_latency_ns=1e9" ], 1, [ "estimated ~", "steps at cl" ] ),
]


@pytest.mark.parametrize( "argv, code, named", REFUSED,
                          ids=[ f"case{i}" for i in range( len( REFUSED ) ) ] )
def test_refused_up_front( argv, code, named, tmp_path, capsys ):
  argv = argv( tmp_path ) if callable( argv ) else [ a.format( tmp=tmp_path ) for a in argv ]
  t0 = time.monotonic()
  got = main( argv )
  took = time.monotonic() - t0
  out, err = capsys.readouterr()
  assert got == code, err
  assert took < FAST_S, f"{took:.1f} s"
  if code == 0:
    # a sweep reports the point that does not fit, and finishes
    rec = json.loads( out )
    assert "n_layer=1000000000000000000 is above its bound" in rec["points"][0]["reason"]
    return
  lines = err.strip().splitlines()
  assert len( lines ) == 1, err
  for part in named:
    assert part in lines[0], lines[0]
  assert "Traceback" not in err
  assert len( lines[0] ) < 1200          # a big int is shown by its size
  assert not os.path.exists( tmp_path / "v" )


def _fields( **changes ):
  """A DFXConfig's fields as a plain object, so that a bound can be tried
  one past its limit where DFXConfig itself wants a power of two."""
  dfx = DFXConfig()
  ns = types.SimpleNamespace( **dfx.to_dict(), mem_word_bits=dfx.mem_word_bits )
  for k, v in changes.items():
    setattr( ns, k, v )
  return ns


@pytest.mark.parametrize( "bound", B.DFX_BOUNDS + B.RTL_BOUNDS, ids=lambda b: b.field )
def test_each_bound_at_and_past_its_limit( bound ):
  lim = bound.limit( _fields() )
  assert bound.error( _fields( **{ bound.field: lim } ) ) is None
  why = bound.error( _fields( **{ bound.field: lim + 1 } ) )
  assert why.startswith( f"{bound.field}={lim + 1} is above its bound {lim} (" ), why


def test_values_at_the_bound_are_accepted():
  B.check_dfx( DFXConfig( cores=255 ) )
  B.check_dfx( DFXConfig( fp_add_latency=2546, router_words=4096, hbm_channels=32,
                          hbm_channel_mb=256 ) )
  B.check_dfx( DFXConfig( d=128, l=16 ), rtl=True )     # 2,048 MACs translate
  with pytest.raises( ValueError ):
    B.check_dfx( DFXConfig( fp_add_latency=2547 ) )


def test_n_layer_at_its_bound_compiles_and_one_more_does_not():
  dfx = DFXConfig( hbm_channel_mb=4, hbm_channels=4 )      # 16 MiB of HBM: a short layout
  with pytest.raises( CompileError ) as e:
    plan( GPT2Config( n_layer=10**6, n_embd=128, n_head=2, vocab_size=256, n_positions=16 ),
          dfx, 1, 16 )
  lim = int( str( e.value ).split( "is above its bound " )[1].split()[0] )
  assert 10 < lim < 1000
  layout = plan( GPT2Config( n_layer=lim, n_embd=128, n_head=2, vocab_size=256, n_positions=16 ),
                 dfx, 1, 16 )
  # the O(1) rule and the layout agree: at the bound it fits, one more does not
  assert layout["hbm"]["words"] <= dfx.hbm_bytes // dfx.mem_word_bytes
  with pytest.raises( CompileError, match="HBM capacity" ):
    plan( GPT2Config( n_layer=lim + 1, n_embd=128, n_head=2, vocab_size=256, n_positions=16 ),
          dfx, 1, 16 )


def test_a_slow_legal_latency_runs_to_completion( tmp_path, capsys ):
  """fp_add_latency=300 is legal: the step's cycle limit grows with the
  units' latencies (it was a StepTimeout); the cycles grow with it."""
  model = _model( tmp_path, "small", n_layer=1, n_embd=64, n_head=1, vocab_size=64, n_positions=8 )
  cycles = {}
  for lat in ( 11, 300 ):
    argv = [ "perf", "--model", model, "--cores", "2", "--in", "1", "--out", "1", "--no-cache",
             "--jobs", "1", "--json", "--set", f"fp_add_latency={lat}" ]
    assert main( argv ) == 0
    cycles[ lat ] = json.loads( capsys.readouterr().out )["cycles"]
  assert cycles[ 300 ] > 2 * cycles[ 11 ], cycles


def test_a_slow_legal_latency_runs_in_a_sweep( tmp_path, capsys ):
  """The sweep times its points with the same steps: no StepTimeout."""
  model = _model( tmp_path, "small", n_layer=1, n_embd=64, n_head=1, vocab_size=64, n_positions=8 )
  argv = [ "sweep", "--model", model, "--grid", "fp_add_latency=300", "--context", "1",
           "--set", "cores=2", "--no-cache", "--jobs", "1", "--out", str( tmp_path / "s" ), "--json" ]
  assert main( argv ) == 0
  point, = json.loads( capsys.readouterr().out )["points"]
  assert point["reason"] is None and point["step"]["cycles"] > 10_000, point


def test_cycle_limit_grows_with_the_latencies():
  from pymtl_dfx.appliance.liveness import cycle_limit
  from pymtl_dfx.compiler.emit import StepEmitter
  from pymtl_dfx.config import gpt2_preset
  from pymtl_dfx.units.dma.msgs import mk_dma_types
  gpt = gpt2_preset( "tiny" )
  limits = []
  for lat in ( 11, 300 ):
    dfx = DFXConfig( fp_add_latency=lat )
    progs = [ StepEmitter( plan( gpt, dfx, 1, 4 ), gpt ).step( 0, 1, 2, True )[0] ]
    limits.append( cycle_limit( dfx, mk_dma_types( dfx ), progs ) )
  # 300 needed ~9x the default's cycles on tiny (351,568 against 39,107)
  assert limits[1] > 9 * limits[0] / 2, limits


def test_estimates_are_announced_once_and_not_with_json( capsys ):
  B.announce( "dfx perf", 30, "x" )
  assert capsys.readouterr().err == ""
  B.announce( "dfx perf", 4000, "3 steps", enabled=False )
  assert capsys.readouterr().err == ""
  B.announce( "dfx perf", 4000, "3 steps" )
  assert capsys.readouterr().err == "dfx perf: estimate: ~67 min (3 steps)\n"


@pytest.mark.parametrize( "preset, cores, measured", [
  # exactly timed steps (docs/perf.md; tiny: dfx perf 2:2, the mean of its 3 steps)
  ( "tiny", 4, 14_725 ), ( "tiny", 32, 39_118 ), ( "gpt2", 1, 246_244 ),
  ( "gpt2-medium", 4, 279_611 ), ( "gpt2-xl-dfx", 4, 859_611 ) ] )
def test_step_estimate_is_within_its_stated_error( preset, cores, measured ):
  from pymtl_dfx.config import gpt2_preset
  est = E.step_cycles( gpt2_preset( preset ), DFXConfig( cores=cores ), cores )
  assert 0.75 < est / measured < 1.3, est


def test_the_estimate_before_a_long_perf_run( capsys, monkeypatch ):
  """--cores 255 is legal (the router's 8-bit source) but takes hours: the
  estimate comes before any step is timed, on stderr."""
  from pymtl_dfx.perf import sampled

  class Stop( Exception ):
    pass

  def no_timing( *a, **k ):
    raise Stop
  monkeypatch.setattr( sampled, "_time_one", no_timing )
  with pytest.raises( Stop ):
    main( PERF + [ "--cores", "255", "--jobs", "1", "--debug" ] )
  err = capsys.readouterr().err
  assert err.startswith( "dfx perf: estimate: ~" ) and " h (3 steps to time" in err, err


def test_a_sweep_is_estimated_before_its_points_are_laid_out( capsys, monkeypatch, tmp_path ):
  """issue #38: 90,601 points were laid out before any word; now the
  estimate (of an even sample past ESTIMATE_MODELS points) comes first."""
  class Stop( Exception ):
    pass

  def no_layout( *a, **k ):
    raise Stop
  monkeypatch.setattr( "pymtl_dfx.perf.planned", no_layout )
  grid = "hbm_latency_ns=" + ",".join( str( v ) for v in range( 100, 100 + 2 * E.ESTIMATE_MODELS ) )
  with pytest.raises( Stop ):
    main( [ "sweep", "--model", "tiny", "--grid", grid, "--no-cache", "--jobs", "2",
            "--out", str( tmp_path / "s" ) ] )
  err = capsys.readouterr().err
  assert err.startswith( "dfx sweep: estimate: ~" ) and err.count( "\n" ) == 1, err
  assert f"({2 * E.ESTIMATE_MODELS} steps to time, estimated from {E.ESTIMATE_MODELS} of its " \
         f"{2 * E.ESTIMATE_MODELS} configs, ~" in err, err


def test_the_estimate_counts_the_processes_started_and_the_cpus( capsys, monkeypatch ):
  """issue #38: --jobs past the steps or the CPUs runs no faster."""
  from pymtl_dfx import perf
  from pymtl_dfx.config import gpt2_preset
  monkeypatch.setattr( E, "cpu_count", lambda: 2 )
  m = perf.planned( gpt2_preset( "tiny" ), DFXConfig(), 1, 4 )
  each = E.perf_step_seconds( m.gpt, m.dfx, 1 )
  n = int( 4 * B.ANNOUNCE_S / each )
  E.perf_tasks( "dfx perf", [ ( m, ) ] * n, 8 )
  assert capsys.readouterr().err == (
    f"dfx perf: estimate: ~{B.duration( n * each / 2 )} ({n} steps to time, ~{each:.0f} CPU s "
    f"each at most, on 8 process(es) sharing 2 CPU(s))\n" )
  E.perf_tasks( "dfx perf", [ ( m, ) ] * 3, 8 )     # 3 processes: under a minute, no line
  assert capsys.readouterr().err == ""


def test_doc_table_is_current():
  with open( DOC ) as f:
    text = f.read()
  assert B.BEGIN + "\n" + B.doc_table() + B.END in text, \
    "docs/bounds.md is stale: python -c 'from pymtl_dfx import bounds; bounds.update(\"docs/bounds.md\")'"


def test_refused_in_a_real_process_too( tmp_path ):
  """`python -m pymtl_dfx.cli`: a subcommand's usage error (raised as the
  package's UsageError) is the one line, not a traceback."""
  import subprocess
  import sys
  t0 = time.monotonic()
  p = subprocess.run( [ sys.executable, "-m", "pymtl_dfx.cli", "sweep", "--model", "tiny",
                        "--grid", "cores=2,256", "--out", str( tmp_path / "s" ) ],
                      capture_output=True, text=True, timeout=60 )
  assert time.monotonic() - t0 < FAST_S + 20
  assert p.returncode == 2, p.stderr
  assert p.stderr.splitlines() == [ "dfx sweep: error: --grid cores=256: cores=256 is above its "
                                    "bound 255 (cores <= 255: the ring packet carries its source "
                                    "core in 8 bits (RingPacket.src))" ], p.stderr


def test_the_estimate_before_a_long_functional_run( capsys, monkeypatch ):
  """255 cores at the functional level: legal, and about a minute of CPU for
  tiny's one step, announced before anything is loaded."""
  from pymtl_dfx.appliance import host

  class Stop( Exception ):
    pass

  def stop( *a, **k ):
    raise Stop()

  monkeypatch.setattr( host, "Host", stop )
  monkeypatch.setattr( "pymtl_dfx.compiler.build.compile_model", stop )
  monkeypatch.setattr( "pymtl_dfx.cli.common.load_weights", stop )
  with pytest.raises( Stop ):
    main( [ "generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "1",
            "--cores", "255" ] )
  assert capsys.readouterr().err == \
    "dfx generate: estimate: ~64 s (1 steps at func on 255 core(s))\n"
