"""`--wave`, `--wave-cycles` and `--trace` (`appliance.waves`): a VCD and a
line trace of exactly the window's cycles, at every simulated level.

  fl, cl     `dfx generate` end to end on the small d=32 config (seconds);
  fl-rtl     the same probe on a StreamBackend at d=8 moving a few words
             through the host ports (a whole generation in pymtl3's Python
             RTL takes hours; 60 cycles take seconds);
  verilog    `dfx generate --level verilog` on the d=8 config, Verilator's
             own VCD switched on at the window (a traced build of the
             whole appliance: minutes cold, so under --test-verilog only).
"""

import json
import os
import re

import numpy as np
import pytest

from pymtl_dfx.appliance.backend import StreamBackend
from pymtl_dfx.appliance.waves import DEFAULT_WINDOW, Probe, WaveError, parse_window
from pymtl_dfx.cli import main
from pymtl_dfx.testing.core_mixing import dfx_config

SMALL32 = [ "--set", "d=32", "--set", "l=8", "--set", "hbm_channels=4", "--set", "vreg_entries=512",
            "--set", "mreg_entries=32", "--set", "psum_entries=16" ]
SMALL8 = [ "--set", "d=8", "--set", "l=4", "--set", "mreg_entries=128", "--set", "ddr_gbps=12.8",
           "--set", "hbm_channels=4", "--set", "vreg_entries=512", "--set", "psum_entries=16" ]
GEN = [ "generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "1" ]


def vcd_facts( path ):
  """(variable names per scope path, rising-edge times, the last time)."""
  names, stack, rises, last, clk = set(), [], [], None, None
  t = None
  with open( path ) as f:
    for line in f:
      w = line.split()
      if not w:
        continue
      if w[0] == "$scope":
        stack.append( w[2] )
      elif w[0] == "$upscope":
        stack.pop()
      elif w[0] == "$var":
        names.add( ".".join( stack + [ w[4] ] ) )
        if w[4] == "clk" and clk is None:
          clk = w[3]
      elif line[0] == "#":
        t = last = int( line[1:] )
      elif clk is not None and line.strip() == f"1{clk}":
        rises.append( t )
  return names, rises, last


def trace_cycles( path ):
  with open( path ) as f:
    return [ int( line.split( ":" )[0] ) for line in f ]


# -- the window -----------------------------------------------------------------------

@pytest.mark.parametrize( "text, window", [
  ( "0:100000", ( 0, 100_000 ) ), ( "5:6", ( 5, 6 ) ), ( "7:", ( 7, None ) ), ( ":9", ( 0, 9 ) ),
] )
def test_window_parses( text, window ):
  assert parse_window( text ) == window


@pytest.mark.parametrize( "text, named", [
  ( "5:3", "the window is empty (B=3 must be greater than A=5)" ),
  ( "4:4", "the window is empty" ),
  ( "-2:5", "the first cycle -2 is negative" ),
  ( "100", "is not A:B" ),
  ( "a:b", "A and B must be integers" ),
  ( "1.5:3", "A and B must be integers" ),
] )
def test_bad_window_is_refused( text, named ):
  with pytest.raises( WaveError, match=re.escape( named ) ):
    parse_window( text )


def test_default_window_is_bounded():
  lo, hi = DEFAULT_WINDOW
  assert lo == 0 and hi == 10_000
  assert Probe( wave="x.vcd" ).window == DEFAULT_WINDOW


# -- fl and cl: dfx generate end to end ---------------------------------------------------

@pytest.mark.parametrize( "level", [ "fl", "cl" ] )
def test_generate_writes_the_window( level, tmp_path, capsys, monkeypatch ):
  """cl writes the trace to a file, fl to stderr (--trace without FILE)."""
  monkeypatch.chdir( tmp_path )
  wave, trace = tmp_path / "run.vcd", tmp_path / "run.txt"
  lo, hi = 300, 420
  to = [ "--trace", str( trace ) ] if level == "cl" else [ "--trace" ]
  assert main( GEN + SMALL32 + [ "--level", level, "--wave", str( wave ), *to,
                                 "--wave-cycles", f"{lo}:{hi}", "--json" ] ) == 0
  out, err = capsys.readouterr()
  rec = json.loads( out )["debug"]
  assert rec["window"] == [ lo, hi ] and rec["run_cycles"] > 10 * hi
  assert rec["wave_cycles"] == rec["trace_lines"] == hi - lo
  # the step began after the memory loads, and the run went on past it
  starts = rec["step_start_cycles"]
  assert len( starts ) == 1 and 0 < starts[0] < rec["run_cycles"]
  names, rises, last = vcd_facts( wave )
  # the clock, the core's instruction port, its status, a unit inside the core
  for name in ( "top.clk", "top.dut.inst(0).msg", "top.dut.inst(0).val", "top.dut.inst(0).rdy",
                "top.dut.idle(0)", "top.dut.issued(0)", "top.dut.cores(0).ctrl.clk" ):
    assert name in names, name
  # one rising edge per cycle of the window, at the cycle's ns, nothing after
  assert rises == [ 10 * k for k in range( lo, hi ) ]
  assert last == 10 * ( hi - 1 ) + 5
  if level == "cl":
    assert trace_cycles( trace ) == list( range( lo, hi ) )
  else:
    lines = [ l for l in err.splitlines() if re.match( r"\s+\d+: ", l ) ]
    assert [ int( l.split( ":" )[0] ) for l in lines ] == list( range( lo, hi ) )
  written = [ "run.vcd" ] + ( [ "run.txt" ] if level == "cl" else [] )
  assert sorted( os.listdir( tmp_path ) ) == sorted( written )


# -- fl, cl, rtl: the probe on a backend moving words through the host ports --------------

def host_port_run( level, tmp_path, window, words=4, trace=True ):
  """A 1-core d=8 StreamBackend writing `words` HBM words and reading them
  back (tens of cycles: pymtl3's Python RTL of a whole core runs ~10 a
  second, so a generation at rtl takes hours), probed over `window`."""
  cfg = dfx_config( 1, d=8 )
  wave, text = tmp_path / f"{level}.vcd", tmp_path / f"{level}.txt"
  with open( text, "w" ) as t:
    probe = Probe( wave=str( wave ), trace=t if trace else None, window=window )
    b = StreamBackend( cfg, 1, level, None, 64, 64, probe=probe )
    E = cfg.mem_word_elems
    data = ( np.arange( words * E ) % 1000 ).astype( np.float16 ).reshape( words, E )
    b.write( [ { "hbm": [ ( 0, data ) ] } ] )
    got = b.read( "hbm", [ [ ( 0, words ) ] ] )
    b.close()
  assert np.array_equal( got[0][0], data )
  return b, probe, wave, text


@pytest.mark.parametrize( "level", [ "fl", "cl", "rtl" ] )
def test_backend_writes_the_window( level, tmp_path ):
  lo, hi = 3, 15
  b, probe, wave, trace = host_port_run( level, tmp_path, ( lo, hi ) )
  assert b.cycle > hi and probe.vcd.cycles == probe.lines == hi - lo
  names, rises, _ = vcd_facts( wave )
  for name in ( "top.clk", "top.dut.inst(0).msg", "top.dut.hbm_host_req(0).val",
                "top.dut.cores(0).hbm.clk" ):
    assert name in names, name
  assert rises == [ 10 * k for k in range( lo, hi ) ]
  assert trace_cycles( trace ) == list( range( lo, hi ) )


def test_the_window_bounds_the_file( tmp_path ):
  """The same run with a window 10x longer writes ~10x the bytes past the
  header; the window, not the run, sets the size."""
  size = {}
  for n in ( 0, 20, 200 ):
    b, probe, wave, _ = host_port_run( "fl", tmp_path, ( 40, 40 + n ) if n else ( 10 ** 7, None ),
                                       words=256, trace=False )
    assert b.cycle > 240 and probe.vcd.cycles == n
    size[n] = os.path.getsize( wave )
  head = size[0]                       # a window past the run: the header only
  assert 5 * ( size[20] - head ) < size[200] - head < 20 * ( size[20] - head ), size


def test_a_window_past_the_run_writes_the_header_only( tmp_path ):
  b, probe, wave, trace = host_port_run( "fl", tmp_path, ( 10 ** 7, None ) )
  names, rises, last = vcd_facts( wave )
  assert "top.dut.inst(0).msg" in names and rises == [] and last is None
  assert probe.vcd.cycles == probe.lines == 0 and os.path.getsize( trace ) == 0


def test_a_step_that_times_out_keeps_its_wave( tmp_path ):
  """The wave of a failed run is the one that shows why: a step stopped
  after 50 cycles leaves a VCD and trace up to its last cycle."""
  from pymtl_dfx.appliance.host import Host
  from pymtl_dfx.appliance.liveness import StepTimeout
  from pymtl_dfx.compiler.build import compile_model
  from pymtl_dfx.config import DFXConfig, gpt2_preset
  from pymtl_dfx.gpt2 import random_weights
  dfx = DFXConfig( d=32, l=8, hbm_channels=4, vreg_entries=512, mreg_entries=32, psum_entries=16 )
  cm = compile_model( random_weights( gpt2_preset( "tiny" ), 0 ).to_fp16(), dfx, 1, max_tokens=2 )
  start = Host( cm, "cl" ).backend.cycle      # the cycles of the memory loads
  wave, text = tmp_path / "t.vcd", tmp_path / "t.txt"
  with open( text, "w" ) as t:
    host = Host( cm, "cl", max_cycles_per_step=50,
                 probe=Probe( wave=str( wave ), trace=t, window=( start - 5, None ) ) )
    assert host.backend.cycle == start
    with pytest.raises( StepTimeout, match="did not finish in 50 cycles" ):
      host.generate( [ 1 ], 1 )
    host.close()
  _, rises, last = vcd_facts( wave )
  assert rises == [ 10 * k for k in range( start - 5, start + 50 ) ]
  assert last == 10 * ( start + 49 ) + 5
  assert trace_cycles( text ) == list( range( start - 5, start + 50 ) )


# -- verilog: Verilator's VCD ---------------------------------------------------------------

def test_verilog_writes_verilators_wave( tmp_path, capsys, cmdline_opts ):
  if not ( cmdline_opts.get( "test_verilog" ) or cmdline_opts.get( "test_yosys_verilog" ) ):
    pytest.skip( "builds the whole appliance in Verilator with its VCD (minutes cold): "
                 "run with --test-verilog" )
  wave = tmp_path / "v.vcd"
  # the memory loads (pymtl3's tick), then the token step (the tight loop),
  # with one build: the second window starts 50 cycles into the step
  recs = []
  for window in ( lambda r: ( 1, 40 ), lambda r: ( r + 50, r + 110 ) ):
    lo, hi = window( recs[0]["step_start_cycles"][0] if recs else 0 )
    assert main( GEN + SMALL8 + [ "--level", "verilog", "--wave", str( wave ),
                                  "--wave-cycles", f"{lo}:{hi}", "--json" ] ) == 0
    rec = json.loads( capsys.readouterr().out )["debug"]
    recs.append( rec )
    assert rec["wave_cycles"] == hi - lo
    names, rises, last = vcd_facts( wave )
    # Verilator's names: the top's ports, then every instance's signals
    for name in ( "TOP.clk", "TOP.inst__msg[0]", "TOP.inst__val[0]", "TOP.idle[0]" ):
      assert name in names, name
    assert any( ".cores__0.ctrl." in n for n in names )
    assert rises == [ 10 * k for k in range( lo, hi ) ], ( rises[:3], rises[-3:] )
    assert last == 10 * ( hi - 1 )
  # the same run both times; the step's window inside it
  assert recs[0]["run_cycles"] == recs[1]["run_cycles"] > recs[1]["window"][1]


# -- bad input: one line, the exit code, nothing written ---------------------------------

@pytest.mark.parametrize( "extra, code, named", [
  # the window's syntax (argparse: usage, exit 2)
  ( [ "--wave", "w.vcd", "--wave-cycles", "5:3" ], 2,
    "the window is empty (B=3 must be greater than A=5)" ),
  ( [ "--wave", "w.vcd", "--wave-cycles", "4:4" ], 2, "the window is empty" ),
  ( [ "--trace", "--wave-cycles=-1:3" ], 2, "the first cycle -1 is negative" ),
  ( [ "--wave", "w.vcd", "--wave-cycles", "100" ], 2, "'100' is not A:B" ),
  ( [ "--wave", "w.vcd", "--wave-cycles", "a:b" ], 2, "A and B must be integers" ),
  # what the options need
  ( [ "--wave-cycles", "0:10" ], 2, "--wave-cycles bounds --wave and --trace; give one of them" ),
  ( [ "--level", "func", "--wave", "w.vcd" ], 2, "--wave needs a simulated level" ),
  ( [ "--level", "func", "--wave", "w.vcd", "--trace" ], 2,
    "--wave and --trace need a simulated level" ),
  ( [ "--level", "kernel", "--wave", "w.vcd", "--wave-cycles", "0:" ], 2,
    "must end by cycle 429,496,728" ),
  ( [ "--level", "verilog", "--wave", "w.vcd", "--wave-cycles", "0:" ], 2,
    "must end by cycle 429,496,728 (pymtl3's Verilator wrapper counts the dump time in 32 bits" ),
  ( [ "--level", "verilog", "--wave", "w.vcd", "--wave-cycles", "0:500000000" ], 2,
    "not at 499,999,999" ),
  ( [ "--wave", "same", "--trace", "./same" ], 2, "--wave and --trace name the same file same" ),
  # the files (outputs.check_file: exit 1)
  ( [ "--wave", "no/such/dir/w.vcd" ], 1, "--wave no/such/dir/w.vcd: directory" ),
  ( [ "--trace", "no/such/t.txt" ], 1, "--trace no/such/t.txt: directory" ),
  ( [ "--wave", "." ], 1, "--wave .: is a directory, not a regular file" ),
  ( [ "--wave", "w/" ], 1, "ends in '/'" ),
  ( [ "--wave", "" ], 1, "--wave" ),
] )
def test_bad_debug_options_are_one_line( extra, code, named, tmp_path, capsys, monkeypatch ):
  monkeypatch.chdir( tmp_path )
  try:
    got = main( GEN + [ "--level", "cl" ] + extra )
  except SystemExit as e:
    got = e.code
  out, err = capsys.readouterr()
  assert got == code, err
  assert err.count( "\n" ) == 1 and named in err, err
  assert "Traceback" not in err and out == ""
  assert os.listdir( tmp_path ) == []
