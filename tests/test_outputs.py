"""Output paths: every path a command writes is checked before anything is
loaded or compiled, and a refusal is one line naming the path and the
reason, with nothing written (pymtl_dfx/outputs.py, docs/outputs.md)."""

import os
import shutil
import stat
import sys

import pytest

from pymtl_dfx import atomic, cli, outputs
from pymtl_dfx.cli import main
from pymtl_dfx.models import TINY_ENGLISH
from pymtl_dfx.testing.disk import tree

pytestmark = pytest.mark.skipif( sys.platform == "win32", reason="FIFOs, devices, links" )


@pytest.fixture( scope="module" )
def model( tmp_path_factory ):
  """A checkpoint directory of its own (the shipped model's files), whose
  files the runs read and must never be written."""
  d = tmp_path_factory.mktemp( "model" ) / "tiny-english"
  shutil.copytree( TINY_ENGLISH, d )
  return d


@pytest.fixture
def nothing_runs( monkeypatch, tmp_path ):
  """Every command's body raises if reached: a refusal must come first."""
  from pymtl_dfx.cli import demo, generate, perf, report, sweep, verilog

  def reached( *a, **k ):
    raise AssertionError( "the command started before its outputs were checked" )
  for mod in ( generate, verilog, demo, perf, report, sweep ):
    monkeypatch.setattr( mod, "run", reached )
  # the default step cache: somewhere of the test's own
  monkeypatch.setenv( "DFX_PERF_CACHE", str( tmp_path / "default-cache" ) )


def _argv( cmd, option, value, model, tmp_path ):
  """The command line with `option` set to `value`, the other outputs legal."""
  out = [ "--out", str( tmp_path / "out" ) ]
  base = dict(
    generate=[ "generate", "--model", str( model ), "--prompt-ids", "1", "--new-tokens", "1" ],
    perf=[ "perf", "--model", str( model ), "--in", "1", "--out", "1" ],
    sweep=[ "sweep", "--model", str( model ), "--grid", "d=32,64" ] + out,
    report=[ "report" ] + out, demo=[ "demo" ], verilog=[ "verilog" ] + out,
    fpga=[ "fpga" ] + out )[ cmd ]
  if option == "--out":
    base = [ a for a in base if a not in out ]
  return base + [ option, value ]


# (command, option, is the output a file?)
OUTPUTS = [ ( "generate", "--save-image", True ), ( "verilog", "--out", False ),
            ( "fpga", "--out", False ),
            ( "report", "--out", False ), ( "sweep", "--out", False ), ( "demo", "--out", False ),
            ( "perf", "--cache", False ), ( "report", "--cache", False ),
            ( "sweep", "--cache", False ), ( "demo", "--cache", False ) ]
READS_A_MODEL = { "generate", "perf", "sweep", "demo" }

KINDS = [ "empty", "devnull", "fifo", "wrong type", "symlink", "dangling symlink",
          "model config.json", "model model.safetensors", "model tokenizer.json",
          "model vocab.json", "model merges.txt", "hard link to the model's config.json",
          "../ spelling of the model's config.json", "missing parent", "parent is a file",
          "non-empty directory", "symlink loop on the way", "NUL byte" ]


def _applies( kind, cmd, is_file ):
  if kind.startswith( ( "model ", "../" ) ):
    return cmd in READS_A_MODEL
  if kind.startswith( "hard link" ):
    return cmd in READS_A_MODEL and cmd != "demo"    # demo's model is in the package
  if kind == "missing parent":
    return is_file      # directories are made with their parents (test_dirs_are_made_...)
  if kind == "non-empty directory":
    return cmd in ( "verilog", "fpga" )
  return True


CASES = [ ( cmd, option, is_file, kind ) for cmd, option, is_file in OUTPUTS for kind in KINDS
          if _applies( kind, cmd, is_file ) ]


def _make( kind, is_file, cmd, model, tmp_path ):
  """(the value to pass, the words the one line must hold) for `kind`."""
  t = tmp_path
  model_dir = model if cmd != "demo" else TINY_ENGLISH
  if kind == "empty":
    return "", "the path is empty"
  if kind == "devnull":
    return os.devnull, f"{os.devnull}: is a character device, not a " + \
      ( "regular file" if is_file else "directory" )
  if kind == "fifo":
    os.mkfifo( t / "pipe" )
    return str( t / "pipe" ), "is a named pipe (FIFO)"
  if kind == "wrong type":
    if is_file:
      ( t / "adir" ).mkdir()
      return str( t / "adir" ), "adir: is a directory, not a regular file"
    ( t / "afile" ).write_text( "someone's\n" )
    return str( t / "afile" ), "afile: is a regular file, not a directory"
  if kind == "symlink":
    if is_file:
      ( t / "real.dfx" ).write_text( "old\n" )
    else:
      ( t / "real.dfx" ).mkdir()
    os.symlink( "real.dfx", t / "link" )
    return str( t / "link" ), "link: is a symbolic link (to real.dfx); give the real path"
  if kind == "dangling symlink":
    os.symlink( "nowhere", t / "link" )
    return str( t / "link" ), "link: is a symbolic link (to nowhere)"
  if kind.startswith( "model " ):
    name = kind.split()[1]
    p = os.path.join( model_dir, name )
    return p, f"{p}: is the model's {name}, which this run reads"
  if kind.startswith( "hard link" ):
    os.link( model / "config.json", t / "hard.json" )
    return str( t / "hard.json" ), "hard.json: is the model's config.json, which this run reads"
  if kind.startswith( "../" ):
    p = os.path.join( model_dir, "..", os.path.basename( model_dir ), "config.json" )
    return p, "is the model's config.json, which this run reads"
  if kind == "missing parent":
    return str( t / "no" / "such" / "x.dfx" ), f"directory {t / 'no' / 'such'} does not exist"
  if kind == "parent is a file":
    ( t / "afile" ).write_text( "someone's\n" )
    return str( t / "afile" / "sub" / "x" ), f"{t / 'afile'} is a regular file, not a directory"
  if kind == "non-empty directory":
    ( t / "used" ).mkdir()
    ( t / "used" / "keep.v" ).write_text( "// someone's\n" )
    return str( t / "used" ), "used: is a directory that is not empty"
  if kind == "symlink loop on the way":
    os.symlink( "loop", t / "loop" )
    return str( t / "loop" / "x" ), "loop/x: is a symlink loop"
  if kind == "NUL byte":
    return "a\0b", "the path contains a NUL character"
  raise AssertionError( kind )


@pytest.mark.parametrize( "cmd, option, is_file, kind", CASES )
def test_refused_before_anything_runs( capsys, tmp_path, monkeypatch, nothing_runs, model,
                                       cmd, option, is_file, kind ):
  value, words = _make( kind, is_file, cmd, model, tmp_path )
  monkeypatch.chdir( tmp_path )
  before = tree( tmp_path, model, TINY_ENGLISH )
  argv = _argv( cmd, option, value, model, tmp_path )
  try:
    code = main( argv )
  except SystemExit as e:
    code = e.code
  out, err = capsys.readouterr()
  assert code == cli.EXIT_ERROR, err
  assert err.startswith( f"dfx {cmd}: {option}" ) and err.count( "\n" ) == 1, err
  assert words in err, err
  assert "Traceback" not in err and out == ""
  assert tree( tmp_path, model, TINY_ENGLISH ) == before
  assert stat.S_ISCHR( os.stat( os.devnull ).st_mode )


@pytest.mark.parametrize( "cmd, option, is_file", OUTPUTS[ :2 ] + OUTPUTS[ 5:6 ] )
def test_refusal_with_json_is_an_error_object( capsys, tmp_path, nothing_runs, model,
                                               cmd, option, is_file ):
  import json
  code = main( _argv( cmd, option, os.devnull, model, tmp_path ) + [ "--json" ] )
  out, err = capsys.readouterr()
  assert code == 1 and err.count( "\n" ) == 1
  e = json.loads( out )["error"]
  assert e["exit_code"] == 1 and e["kind"] == "error" and os.devnull in e["message"]
  assert e["message"] in err


def test_the_default_step_cache_is_checked_too( capsys, tmp_path, monkeypatch, nothing_runs,
                                                model ):
  ( tmp_path / "cachefile" ).write_text( "x" )
  monkeypatch.setenv( "DFX_PERF_CACHE", str( tmp_path / "cachefile" ) )
  assert main( [ "perf", "--model", "tiny", "--in", "1", "--out", "1" ] ) == 1
  assert capsys.readouterr().err == ( f"dfx perf: the step cache at {tmp_path / 'cachefile'}: "
                                      f"is a regular file, not a directory\n" )
  # --no-cache writes no cache: nothing to check (the command itself runs)
  with pytest.raises( AssertionError, match="before its outputs were checked" ):
    main( [ "perf", "--model", "tiny", "--in", "1", "--out", "1", "--no-cache" ] )


@pytest.mark.skipif( hasattr( os, "geteuid" ) and os.geteuid() == 0,
                     reason="root may write into any directory" )
def test_a_directory_without_write_permission( capsys, tmp_path, nothing_runs, model ):
  ro = tmp_path / "ro"
  ro.mkdir( mode=0o500 )
  try:
    assert main( _argv( "generate", "--save-image", str( ro / "x.dfx" ), model, tmp_path ) ) == 1
    assert f"directory {ro} is not writable" in capsys.readouterr().err
    assert main( _argv( "report", "--out", str( ro / "new" / "r" ), model, tmp_path ) ) == 1
    assert f"cannot create it: directory {ro} is not writable" in capsys.readouterr().err
  finally:
    ro.chmod( 0o700 )
  assert os.listdir( ro ) == []


def test_save_image_and_image_cannot_be_one_file( capsys, tmp_path, model ):
  # argparse keeps them apart; the check itself also knows --image as an input
  with pytest.raises( SystemExit ) as e:
    main( _argv( "generate", "--save-image", "m.dfx", model, tmp_path ) + [ "--image", "m.dfx" ] )
  assert e.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
  ( tmp_path / "m.dfx" ).write_bytes( b"image" )
  ( tmp_path / "sub" ).mkdir()
  with pytest.raises( outputs.OutputPathError, match="m.dfx: is --image, which this run reads" ):
    outputs.check_file( str( tmp_path / "sub" / ".." / "m.dfx" ), "--save-image",
                        { str( tmp_path / "m.dfx" ): "--image" } )


# --- what stays legal ---------------------------------------------------------------------

def _gen( model, image, seed="0" ):
  return [ "generate", "--model", "tiny", "--prompt-ids", "1,2", "--new-tokens", "1",
           "--seed", seed, "--save-image", str( image ) ]


def test_an_existing_image_is_replaced( capsys, tmp_path, model ):
  from pymtl_dfx.compiler.build import load_compiled
  image = tmp_path / "m.dfx"
  assert main( _gen( model, image, "1" ) ) == 0
  old = image.read_bytes()
  assert main( _gen( model, image, "2" ) ) == 0       # other weights: another image
  assert image.read_bytes() != old and load_compiled( image ).gpt.name
  assert os.listdir( tmp_path ) == [ "m.dfx" ]
  # only the last component must not be a link: a linked directory is where it points
  os.symlink( tmp_path, tmp_path.parent / f"{tmp_path.name}-link" )
  try:
    assert main( _gen( model, tmp_path.parent / f"{tmp_path.name}-link" / "m.dfx", "1" ) ) == 0
  finally:
    os.unlink( tmp_path.parent / f"{tmp_path.name}-link" )
  assert image.read_bytes() == old and os.listdir( tmp_path ) == [ "m.dfx" ]
  capsys.readouterr()


def test_dirs_are_made_with_their_parents( tmp_path ):
  # `mkdir -p`: a missing directory and its missing parents are fine
  assert outputs.check_dir( str( tmp_path / "a" / "b" / "c" ), "--out" )
  assert outputs.check_dir( str( tmp_path ), "--out" )      # an existing one too
  assert not ( tmp_path / "a" ).exists()                     # checking makes nothing


# --- Verilator's builds: in the user's cache, not the current directory --------------------

# a Verilated unit inside CL cores (seconds), the whole appliance (its
# translation alone takes half a minute; a cold build, minutes)
VERILATED = [ [ "--level", "cl", "--unit-levels", "ctrl=verilog" ],
              [ "--level", "verilog", "--set", "d=8", "--set", "l=4", "--set", "hbm_channels=2" ] ]


@pytest.fixture
def in_empty_dir( tmp_path, monkeypatch ):
  """An empty current directory, and a build folder of the test's own
  (XDG_CACHE_HOME) beside the suite's model cache, which stays where it was."""
  from pymtl_dfx.hdl import verilated_cache
  cache = verilated_cache.cache_dir()
  monkeypatch.setenv( "DFX_VL_CACHE", str( cache ) if cache is not None else "0" )
  monkeypatch.setenv( "XDG_CACHE_HOME", str( tmp_path / "cache" ) )
  monkeypatch.delenv( "DFX_VL_SHARED_DIR", raising=False )
  cwd = tmp_path / "cwd"
  cwd.mkdir()
  monkeypatch.chdir( cwd )
  return cwd


@pytest.mark.parametrize( "build", VERILATED, ids=[ "unit", "appliance" ] )
def test_a_verilator_build_leaves_the_current_directory_empty( capsys, tmp_path, in_empty_dir,
                                                               build, cmdline_opts ):
  translating = bool( cmdline_opts.get( "test_verilog" ) or cmdline_opts.get( "test_yosys_verilog" ) )
  if translating != ( build[1] == "verilog" ):
    pytest.skip( "the unit's case runs in the plain pass" if translating else
                 "builds the whole appliance (minutes cold): run with --test-verilog" )
  assert main( [ "generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "1",
                 *build ] ) == 0
  capsys.readouterr()
  assert os.listdir( in_empty_dir ) == []
  assert any( n.startswith( "lib" ) for n in os.listdir( tmp_path / "cache/pymtl_dfx/build" ) )


def test_a_build_folder_that_cannot_be_made_is_one_line( capsys, in_empty_dir, monkeypatch ):
  monkeypatch.setenv( "XDG_CACHE_HOME", os.devnull )
  assert main( [ "generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "1",
                 *VERILATED[0] ] ) == 1
  # the last line (a long build may be announced before it)
  assert capsys.readouterr().err.splitlines()[-1] == (
    f"dfx generate: the Verilator build folder {os.devnull}/pymtl_dfx/build: is not reachable: "
    f"{os.devnull} is not a directory (XDG_CACHE_HOME or DFX_VL_SHARED_DIR moves it)" )
  assert os.listdir( in_empty_dir ) == []


# --- atomic writes: the same rules, recognisable partial files ------------------------------

@pytest.mark.parametrize( "writer", [ "text", "path" ] )
def test_atomic_writes_refuse_what_is_not_a_regular_file( tmp_path, writer ):
  os.mkfifo( tmp_path / "pipe" )
  os.symlink( "elsewhere", tmp_path / "link" )
  ( tmp_path / "adir" ).mkdir()
  for target, why in ( ( os.devnull, "is a character device" ),
                       ( tmp_path / "pipe", "is a named pipe" ),
                       ( tmp_path / "link", "is a symbolic link" ),
                       ( tmp_path / "adir", "is a directory" ), ( "", "the path is empty" ) ):
    with pytest.raises( outputs.OutputPathError, match=why ):
      if writer == "text":
        atomic.write_text( target, "x" )
      else:
        with atomic.atomic_path( target ):
          pass
  assert stat.S_ISCHR( os.stat( os.devnull ).st_mode )
  assert sorted( os.listdir( tmp_path ) ) == [ "adir", "link", "pipe" ]
  assert os.listdir( tmp_path / "adir" ) == []


def test_partial_files_are_named_after_their_target( tmp_path ):
  seen = []
  with atomic.atomic_open( tmp_path / "model.dfx", "wb" ) as f:
    f.write( b"x" )
    seen = os.listdir( tmp_path )
  assert len( seen ) == 1 and seen[0].startswith( "model.dfx.dfx-partial-" )
  assert atomic.is_partial( seen[0] ) and not atomic.is_partial( "model.dfx" )
  assert os.listdir( tmp_path ) == [ "model.dfx" ]


@pytest.mark.parametrize( "where", [ "create", "write", "replace" ] )
def test_an_error_names_the_target_not_the_partial_file( tmp_path, monkeypatch, where ):
  import errno
  target = tmp_path / "m.dfx"
  if where == "create":
    def fails( tmp ):
      raise PermissionError( errno.EACCES, "Permission denied", tmp )
    monkeypatch.setattr( atomic, "_create", fails )
  elif where == "replace":
    def fails( src, dst ):
      raise OSError( errno.EXDEV, "Invalid cross-device link", src, dst )
    monkeypatch.setattr( atomic.os, "replace", fails )
  with pytest.raises( OSError ) as e:
    with atomic.atomic_open( target, "wb" ) as f:
      f.write( b"x" )
      if where == "write":
        raise OSError( errno.ENOSPC, "No space left on device" )     # as f.write raises it
  monkeypatch.undo()
  assert "partial" not in str( e.value ) and str( target ) in str( e.value )
  assert e.value.filename == str( target )
  if where == "create":
    assert isinstance( e.value, PermissionError )
  assert os.listdir( tmp_path ) == []
