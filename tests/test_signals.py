"""SIGTERM and SIGHUP (kill, timeout, CI cancellation, a closed terminal)
unwind `dfx` as Ctrl-C does: whatever moment they land, the output's
directory afterwards holds the whole new target or the old one, never a
partial file or folder, and the exit is 128 + the signal with one line.

Each run is a real process.  A moment is pinned by a harness that wraps one
function of the package so that it marks a file and waits there; the test
sees the mark and sends the signal, which lands inside the wait, exactly
where the real function would be running.  The translation of `dfx verilog`
takes seconds by itself: there the test waits for its partial folder (or
for Verilator) to appear, unwrapped.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pymtl_dfx import atomic
from pymtl_dfx.models import TINY_ENGLISH

pytestmark = pytest.mark.skipif( sys.platform == "win32", reason="POSIX signals" )

HARNESS = r'''
import os, sys, time
moment, mark = sys.argv[1], sys.argv[2]

def wait_in( mod, name, skip=0 ):
  real, calls = getattr( mod, name ), [ 0 ]
  def wrapped( *a, **k ):
    calls[0] += 1
    if calls[0] > skip:
      open( mark, "w" ).close()
      time.sleep( 120 )
    return real( *a, **k )
  setattr( mod, name, wrapped )

from pymtl_dfx import cli
if moment == "checking outputs":
  wait_in( cli.common, "check_outputs" )
elif moment == "loading":
  wait_in( cli.common, "load_weights" )
elif moment == "compiling":
  from pymtl_dfx.compiler import build
  wait_in( build, "compile_model" )
elif moment == "writing the image":      # after the first section's bytes
  from pymtl_dfx.compiler import image_file
  wait_in( image_file, "_write_payload", skip=1 )
elif moment == "generating":             # the image is saved
  from pymtl_dfx.appliance.host import Host
  wait_in( Host, "generate" )
elif moment == "timing the report":      # its steps, before any file of the report
  from pymtl_dfx.report import compute
  wait_in( compute, "fill" )
elif moment == "drawing the sweep":      # the points computed (none here), the first file
  from pymtl_dfx.sweep import build, figure
  build.sweep = lambda *a, **k: []
  wait_in( figure, "draw" )
elif moment in ( "linting", "before the rename" ):
  # past the translation (pymtl3's, seconds, stopped unwrapped in the
  # "translating" cases): a one-module core, then the real lint, whose
  # `verilator` the test puts first on PATH, or a wait with every file
  # written into the partial folder
  from pymtl_dfx.hdl import rtlgen
  from pymtl_dfx.core import verilog
  def small( component, out_dir ):
    path = os.path.join( out_dir, "Top.v" )
    with open( path, "w" ) as f:
      f.write( "module Top( input logic a );\nendmodule\n" )
    return path, "Top"
  rtlgen.translate, verilog.fpga_core = small, lambda cfg: None
  verilog.top_ports = lambda core: {}
  if moment == "before the rename":        # the shared all-or-nothing folder's last step
    from pymtl_dfx import atomic
    wait_in( atomic, "_umask" )
sys.exit( cli.main( sys.argv[3:] ) )
'''

NARROW = [ "--set", "d=8", "--set", "l=4", "--set", "hbm_channels=2", "--set", "vreg_entries=64",
           "--set", "mreg_entries=32", "--set", "psum_entries=4" ]


def _default_signals():
  # a suite started in the background or under nohup hands its children
  # these ignored, and dfx (rightly) keeps an ignored signal ignored
  for s in ( signal.SIGINT, signal.SIGTERM, signal.SIGHUP ):
    signal.signal( s, signal.SIG_DFL )


def _start( tmp_path, moment, argv, preexec=_default_signals, env=None ):
  harness = tmp_path / "harness.py"
  harness.write_text( HARNESS )
  mark = tmp_path / "mark"
  if mark.exists():
    mark.unlink()
  cwd = tmp_path / "cwd"
  cwd.mkdir( exist_ok=True )
  p = subprocess.Popen( [ sys.executable, str( harness ), moment, str( mark ), *argv ],
                        cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        preexec_fn=preexec, env=env )
  return p, mark


def _wait_for( p, seen, what, timeout=120 ):
  t0 = time.monotonic()
  while not seen():
    if p.poll() is not None:
      raise AssertionError( f"ended before {what}: {p.returncode} {p.stderr.read()!r}" )
    if time.monotonic() - t0 > timeout:
      p.kill()
      raise AssertionError( f"no {what} in {timeout} s" )
    time.sleep( 0.01 )


def _stop( p, sig ):
  p.send_signal( sig )
  out, err = p.communicate( timeout=60 )
  return p.returncode, out, err


def _partials( d ):
  return [ n for n in os.listdir( d ) if atomic.PARTIAL in n or n.startswith( "." ) ]


def _image_argv( out, extra=() ):
  return [ "generate", "--model", TINY_ENGLISH, "--prompt-ids", "1,2", "--new-tokens", "2",
           "--save-image", str( out / "m.dfx" ), *extra ]


@pytest.fixture( scope="module" )
def old_image( tmp_path_factory ):
  """An image of other weights (seed 3), to be kept by a stopped rewrite."""
  d = tmp_path_factory.mktemp( "old" )
  from pymtl_dfx.cli import main
  assert main( [ "generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "1",
                 "--seed", "3", "--save-image", str( d / "m.dfx" ) ] ) == 0
  return ( d / "m.dfx" ).read_bytes()


# moment, an old image there?, what the directory holds afterwards
IMAGE_MOMENTS = [ ( "checking outputs", False, "nothing" ), ( "loading", True, "old" ),
                  ( "compiling", False, "nothing" ), ( "writing the image", False, "nothing" ),
                  ( "writing the image", True, "old" ), ( "generating", True, "new" ) ]


@pytest.mark.parametrize( "moment, old, left", IMAGE_MOMENTS )
def test_sigterm_during_save_image( tmp_path, old_image, moment, old, left ):
  out = tmp_path / "out"
  out.mkdir()
  if old:
    ( out / "m.dfx" ).write_bytes( old_image )
  p, mark = _start( tmp_path, moment, _image_argv( out ) )
  _wait_for( p, mark.exists, moment )
  if moment == "writing the image":       # the moment is real: a partial image is there
    assert _partials( out ) and all( atomic.is_partial( n ) for n in _partials( out ) )
  code, _, err = _stop( p, signal.SIGTERM )
  assert ( code, err ) == ( 128 + signal.SIGTERM, b"dfx generate: terminated\n" )
  assert _partials( out ) == [] and os.listdir( tmp_path / "cwd" ) == []
  if left == "nothing":
    assert os.listdir( out ) == []
  else:
    assert os.listdir( out ) == [ "m.dfx" ]
    kept = ( out / "m.dfx" ).read_bytes()
    assert ( kept == old_image ) == ( left == "old" )
    if left == "new":
      from pymtl_dfx.compiler.build import load_compiled
      assert load_compiled( out / "m.dfx" ).gpt.name


def test_sigterm_at_once( tmp_path ):
  """Before main has started: Python's own default ends it, nothing written."""
  out = tmp_path / "out"
  out.mkdir()
  p, _ = _start( tmp_path, "none", _image_argv( out ) )
  code, _, err = _stop( p, signal.SIGTERM )
  assert code in ( -signal.SIGTERM, 128 + signal.SIGTERM )
  assert err in ( b"", b"dfx generate: terminated\n" )
  assert os.listdir( out ) == []


def test_sigterm_with_json_prints_the_error_object( tmp_path ):
  out = tmp_path / "out"
  out.mkdir()
  p, mark = _start( tmp_path, "compiling", _image_argv( out, [ "--json" ] ) )
  _wait_for( p, mark.exists, "compiling" )
  code, stdout, err = _stop( p, signal.SIGTERM )
  assert code == 143 and err == b"dfx generate: terminated\n"
  assert json.loads( stdout )["error"] == { "command": "dfx generate", "kind": "interrupted",
                                            "message": "terminated", "exit_code": 143 }
  assert os.listdir( out ) == []


def _children( pid ):
  """The pids and names of a process's children (Linux /proc)."""
  kids = []
  for d in os.listdir( "/proc" ):
    if d.isdigit():
      try:
        with open( f"/proc/{d}/stat" ) as f:
          fields = f.read().rsplit( ")", 1 )
        name = fields[0].split( "(", 1 )[1]
        if int( fields[1].split()[1] ) == pid:
          kids.append( ( int( d ), name ) )
      except ( OSError, IndexError, ValueError ):
        pass
  return kids


# moment, signal, lint?, an empty old --out there?
VERILOG_MOMENTS = [ ( "translating", signal.SIGTERM, False, False ),
                    ( "translating", signal.SIGHUP, False, True ),
                    ( "before the rename", signal.SIGTERM, False, True ),
                    ( "linting", signal.SIGTERM, True, False ) ]


@pytest.mark.parametrize( "moment, sig, lint, old", VERILOG_MOMENTS )
def test_stopped_verilog_leaves_no_folder( tmp_path, moment, sig, lint, old ):
  if lint and not os.path.isdir( "/proc/self" ):
    pytest.skip( "finds Verilator's process in /proc" )
  out = tmp_path / "out"
  out.mkdir()
  if old:
    ( out / "core" ).mkdir()
  argv = [ "verilog", "--out", str( out / "core" ), *NARROW ] + ( [] if lint else [ "--no-lint" ] )
  env = None
  if lint:
    # a `verilator` that marks its start and lints for ever: the signal
    # surely lands while the child runs
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    ( bin_ / "verilator" ).write_text( f"#!/bin/sh\n: > '{tmp_path / 'mark'}'\nexec sleep 120\n" )
    ( bin_ / "verilator" ).chmod( 0o755 )
    env = dict( os.environ, PATH=f"{bin_}{os.pathsep}{os.environ.get( 'PATH', '' )}" )
  p, mark = _start( tmp_path, moment, argv, env=env )
  verilator = []
  if moment == "translating":
    _wait_for( p, lambda: _partials( out ), "partial folder" )
    time.sleep( 0.5 )                       # well into pymtl3's translation
  elif moment == "linting":
    def linting():
      verilator[:] = [ k for k, _ in _children( p.pid ) ]
      return mark.exists() and verilator
    _wait_for( p, linting, "Verilator" )
  else:
    _wait_for( p, mark.exists, moment )
    part = _partials( out )
    assert len( part ) == 1 and "filelist.f" in os.listdir( out / part[0] )
  word = "hangup" if sig == signal.SIGHUP else "terminated"
  code, _, err = _stop( p, sig )
  assert ( code, err ) == ( 128 + sig, f"dfx verilog: {word}\n".encode() )
  assert os.listdir( out ) == ( [ "core" ] if old else [] )
  if old:
    assert os.listdir( out / "core" ) == []
  assert os.listdir( tmp_path / "cwd" ) == []
  # Verilator went with it (subprocess.run kills its child on any exception)
  t0 = time.monotonic()
  while any( os.path.exists( f"/proc/{k}" ) for k in verilator ) and time.monotonic() - t0 < 5:
    time.sleep( 0.05 )
  assert not any( os.path.exists( f"/proc/{k}" ) for k in verilator )


def test_an_ignored_sighup_stays_ignored( tmp_path ):
  """nohup dfx ...: the user asked to survive a hangup."""
  out = tmp_path / "out"
  out.mkdir()

  def nohup():
    _default_signals()
    signal.signal( signal.SIGHUP, signal.SIG_IGN )
  p, mark = _start( tmp_path, "compiling", _image_argv( out ), nohup )
  _wait_for( p, mark.exists, "compiling" )
  p.send_signal( signal.SIGHUP )
  time.sleep( 0.3 )
  assert p.poll() is None               # still waiting in compile
  code, _, err = _stop( p, signal.SIGTERM )
  assert ( code, err ) == ( 143, b"dfx generate: terminated\n" ) and os.listdir( out ) == []


def test_sigterm_to_dfx_alone_stops_its_workers( tmp_path ):
  """`kill PID` (or `timeout`) reaches the main process only: the timing
  workers it started are stopped too, not waited for (a GPT-2 step takes
  them tens of seconds)."""
  p, _ = _start( tmp_path, "none", [ "perf", "--model", "gpt2", "--in", "2", "--out", "1",
                                     "--exact", "--jobs", "2", "--no-cache" ] )
  workers = []

  def working():
    workers[:] = [ k for k, _ in _children( p.pid ) ]
    return len( workers ) == 2
  _wait_for( p, working, "two workers" )
  time.sleep( 0.5 )                 # into their steps
  t0 = time.monotonic()
  code, _, err = _stop( p, signal.SIGTERM )
  assert ( code, err ) == ( 143, b"dfx perf: terminated\n" )
  assert time.monotonic() - t0 < 10
  assert not any( os.path.exists( f"/proc/{k}" ) for k in workers )


def _descendants( pid ):
  """The pids and names of every process below `pid` (Linux /proc)."""
  out, todo = [], [ pid ]
  while todo:
    kids = _children( todo.pop() )
    out += kids
    todo += [ k for k, _ in kids ]
  return out


def _running( pid ):
  try:
    with open( f"/proc/{pid}/stat" ) as f:
      return f.read().rsplit( ")", 1 )[1].split()[0] != "Z"
  except OSError:
    return False


def test_sigterm_during_a_verilator_build_stops_the_compilers( tmp_path ):
  """pymtl3 runs make through a shell, which subprocess alone would kill
  on the way out, leaving make and its compilers to init: the whole build
  goes with dfx (`verilator5.run_in_group`).  The DMA alone is Verilated
  (the whole appliance translates for half a minute first)."""
  if not os.path.isdir( "/proc/self" ):
    pytest.skip( "finds the build's processes in /proc" )
  # nothing cached: Verilator and make surely run, make's compiles for
  # seconds (a ccache hit would end them before a leftover shows)
  env = dict( os.environ, DFX_VL_CACHE="0", DFX_VL_CCACHE="0",
              XDG_CACHE_HOME=str( tmp_path / "cache" ) )
  env.pop( "DFX_VL_SHARED_DIR", None )
  p, _ = _start( tmp_path, "none", [ "generate", "--model", "tiny", "--prompt-ids", "1",
                                     "--new-tokens", "1", "--level", "cl",
                                     "--unit-levels", "dma=verilog" ], env=env )
  build = []

  def building():
    build[:] = _descendants( p.pid )
    return any( name == "make" for _, name in build )
  _wait_for( p, building, "make" )
  code, _, err = _stop( p, signal.SIGTERM )
  # the last line (the build is announced before it)
  assert ( code, err.splitlines()[-1:] ) == ( 143, [ b"dfx generate: terminated" ] )
  # dfx waits for its build's end: a second is slack, not the compile's time
  t0 = time.monotonic()
  while any( _running( k ) for k, _ in build ) and time.monotonic() - t0 < 1:
    time.sleep( 0.05 )
  assert [ b for b in build if _running( b[0] ) ] == []
  assert os.listdir( tmp_path / "cwd" ) == []


def _mapped( pid, name ):
  try:
    with open( f"/proc/{pid}/maps" ) as f:
      return name in f.read()
  except OSError:
    return False


WORDS = { signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hangup" }

# signal, seconds after numpy's extension is mapped: the parser's imports
# (generate's options import numpy, then pymtl3), the first half second of
# a run, where a KeyboardInterrupt once printed the imports' traceback
STARTING = [ ( signal.SIGINT, 0.0 ), ( signal.SIGINT, 0.1 ), ( signal.SIGINT, 0.3 ),
             ( signal.SIGTERM, 0.05 ), ( signal.SIGHUP, 0.2 ) ]


# the real entry point, unwrapped: `python -m pymtl_dfx.cli`
STARTING_ARGV = [ sys.executable, "-m", "pymtl_dfx.cli", "generate", "--model", "tiny",
                  "--prompt-ids", "1", "--new-tokens", "120" ]


@pytest.fixture( scope="module" )
def uninterrupted_text( tmp_path_factory ):
  """What the run prints to its end (its tokens stream as they come)."""
  return subprocess.run( STARTING_ARGV, cwd=tmp_path_factory.mktemp( "whole" ),
                         capture_output=True, check=True ).stdout


@pytest.mark.skipif( not os.path.isdir( "/proc/self" ), reason="reads /proc/PID/maps" )
@pytest.mark.parametrize( "sig, delay", STARTING )
def test_a_signal_while_starting_is_one_line( tmp_path, sig, delay, uninterrupted_text ):
  p = subprocess.Popen( STARTING_ARGV, cwd=tmp_path, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, preexec_fn=_default_signals )
  _wait_for( p, lambda: _mapped( p.pid, "_multiarray_umath" ), "numpy's import" )
  time.sleep( delay )
  code, out, err = _stop( p, sig )
  assert ( code, err ) == ( 128 + sig, f"dfx generate: {WORDS[ sig ]}\n".encode() )
  # a fast machine prints its first tokens within the delay: only those,
  # never a half-written or different text
  assert uninterrupted_text.startswith( out ) and len( out ) < len( uninterrupted_text )
  assert os.listdir( tmp_path ) == []


# command, moment, signal, an empty --out there before?
OUT_MOMENTS = [ ( "report", "timing the report", signal.SIGINT, False ),
                ( "report", "timing the report", signal.SIGTERM, True ),
                ( "sweep", "drawing the sweep", signal.SIGINT, False ),
                ( "sweep", "drawing the sweep", signal.SIGTERM, True ) ]


@pytest.mark.parametrize( "cmd, moment, sig, old", OUT_MOMENTS )
def test_a_stopped_run_leaves_no_empty_out( tmp_path, cmd, moment, sig, old ):
  """A new --out goes again when the run stops before writing into it; one
  that was there stays."""
  out = tmp_path / "out"
  out.mkdir()
  if old:
    ( out / "rep" ).mkdir()
  argv = { "report": [ "report" ],
           "sweep": [ "sweep", "--model", "tiny", "--grid", "d=32" ] }[ cmd ]
  p, mark = _start( tmp_path, moment, argv + [ "--out", str( out / "rep" ), "--no-cache" ] )
  _wait_for( p, mark.exists, moment )
  code, _, err = _stop( p, sig )
  assert ( code, err ) == ( 128 + sig, f"dfx {cmd}: {WORDS[ sig ]}\n".encode() )
  assert os.listdir( out ) == ( [ "rep" ] if old else [] )
  if old:
    assert os.listdir( out / "rep" ) == []
  assert os.listdir( tmp_path / "cwd" ) == []
