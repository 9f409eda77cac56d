"""A cache of built Verilator models, and a record of every build.

pymtl3 rebuilds a model whenever its folder lacks the previous build's
files, so a clean clone, another pytest-xdist worker's folder or a second
CI run re-runs Verilator and re-links every model even when ccache makes
each compile a hit.  This cache keys a built model on what decides its
bits (the lean translated Verilog's hash, pymtl3's import options, the
Verilator command and version, the C++ compiler, its flags, pymtl3's
version) and keeps the three files pymtl3 imports (the shared library and
the C and Python wrappers).  A model found in the cache is copied into the
build folder and pymtl3 takes it as its own cached build: no Verilator, no
compile, no link.

Where: DFX_VL_CACHE, else $XDG_CACHE_HOME/pymtl_dfx/verilated (~/.cache
when unset); DFX_VL_CACHE=0 turns it off.  The least recently used models
go when the cache passes DFX_VL_CACHE_MB (4096 by default).

`BUILDS` records each import (model, whence it came, Verilator and C++
seconds, generated C++ size, and the imported component to read its cycles
from); `verilated_record` prints it as make test's build table.
"""

import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time

from pymtl3.passes.backends.verilog.import_.VerilogVerilatorImportPass import (
  VerilogVerilatorImportPass as _Pass,
)

from ..outputs import cache_home
from .build_flags import opt_level

BUILDS = []           # one dict per import of this process, in order
_FILES = ( "get_shared_lib_path", "get_c_wrapper_path", "get_py_wrapper_path" )


def cache_dir():
  env = os.environ.get( "DFX_VL_CACHE" )
  if env == "0":
    return None
  if env:
    return pathlib.Path( env )
  return cache_home() / "verilated"


def limit_bytes():
  return int( os.environ.get( "DFX_VL_CACHE_MB", 4096 ) ) << 20


_tool_versions = {}


def _version( cmd ):
  if cmd not in _tool_versions:
    try:
      out = subprocess.run( [ cmd, "--version" ], capture_output=True, text=True, timeout=60 )
      _tool_versions[ cmd ] = out.stdout.strip()
    except OSError:
      _tool_versions[ cmd ] = "absent"
  return _tool_versions[ cmd ]


def _cpu():
  try:
    with open( "/proc/cpuinfo" ) as f:
      return next( ( l for l in f if l.startswith( ( "flags", "Features" ) ) ), "" )
  except OSError:
    return ""


def _placeless( text ):
  """`text` with the checkout's and the build folder's absolute paths
  replaced, so a model built in another clone or worker folder hits."""
  repo = str( pathlib.Path( __file__ ).resolve().parents[2] )
  return text.replace( os.getcwd(), "<build>" ).replace( repo, "<repo>" )


def _verilog_hash( path ):
  """The translated Verilog without its comments: pymtl3's own hash keeps
  the indented `// At /abs/path/file.py:line` comments, which differ
  between clones of the same source."""
  h = hashlib.sha256()
  with open( path ) as f:
    for line in f:
      code = line.strip()
      if code and not code.startswith( "//" ):
        h.update( _placeless( code ).encode() + b"\n" )
  return h.hexdigest()


def model_key( ip_cfg, cfg_d ):
  """The hash of everything that decides a built model's bits."""
  import pymtl3
  parts = {
    "verilog": _verilog_hash( ip_cfg.translated_source_file ),
    "top": ip_cfg.translated_top_module,
    # pymtl3's own Verilog hash in its config keeps the source's absolute
    # paths (its comments): the comment-free hash above stands for it
    "import": { k: v for k, v in cfg_d.items() if k != "verilog_hash" },
    "vl_cmd": ip_cfg.create_vl_cmd(),
    "verilator": _version( "verilator" ),
    "cxx": _version( "g++" ),
    "opt": opt_level(),
    "pymtl3": getattr( pymtl3, "__version__", "?" ),
    "python": sys.version_info[ :2 ],
    # -march=native builds for the CPU that compiles
    "cpu": _cpu() if "native" in opt_level() else "",
  }
  text = _placeless( json.dumps( parts, sort_keys=True, default=str ) )
  return hashlib.sha256( text.encode() ).hexdigest()[ :32 ]


def _restore( entry, ip_cfg ):
  for getter in _FILES:
    name = getattr( ip_cfg, getter )()
    tmp = f"{name}.part"
    shutil.copyfile( entry / name, tmp )
    os.replace( tmp, name )
  # pymtl3's own check of a cached build asks for the Verilator folder
  os.makedirs( ip_cfg.vl_mk_dir, exist_ok=True )
  os.utime( entry )


def _store( entry, ip_cfg ):
  entry.parent.mkdir( parents=True, exist_ok=True )
  tmp = entry.parent / f".{entry.name}.{os.getpid()}"
  shutil.rmtree( tmp, ignore_errors=True )
  tmp.mkdir()
  for getter in _FILES:
    name = getattr( ip_cfg, getter )()
    shutil.copyfile( name, tmp / name )
  try:
    os.rename( tmp, entry )           # another process stored it first: keep theirs
  except OSError:
    shutil.rmtree( tmp, ignore_errors=True )
  _prune( entry.parent )


def _prune( root ):
  entries = []
  for e in root.iterdir():
    if e.is_dir() and not e.name.startswith( "." ):
      size = sum( f.stat().st_size for f in e.iterdir() )
      entries.append( ( e.stat().st_mtime, size, e ) )
  total = sum( s for _, s, _ in entries )
  for _, size, e in sorted( entries ):
    if total <= limit_bytes():
      break
    shutil.rmtree( e, ignore_errors=True )
    total -= size


def _cpp_megabytes( ip_cfg ):
  try:
    return sum( f.stat().st_size for f in pathlib.Path( ip_cfg.vl_mk_dir ).glob( "*.cpp" ) ) / 1e6
  except OSError:
    return None


_orig_is_cached = _Pass.is_cached
_orig_verilate = _Pass.create_verilator_model
_orig_compile = _Pass.create_shared_lib
_orig_import = _Pass.get_imported_object


def _stamp( ip_cfg ):
  return pathlib.Path( ip_cfg.vl_mk_dir ) / "dfx_model_key"


def _stamped( ip_cfg, key ):
  try:
    return _stamp( ip_cfg ).read_text() == key
  except OSError:
    return False


def _is_cached( s, m, ip_cfg ):
  cached, config_file, cfg_d = _orig_is_cached( s, m, ip_cfg )
  key = model_key( ip_cfg, cfg_d )
  ip_cfg._dfx_model_key = key
  # pymtl3's own check compares the Verilog and its config only: a library
  # built with other C++ flags or another Verilator must be rebuilt
  cached = cached and _stamped( ip_cfg, key )
  row = { "model": ip_cfg.translated_top_module, "source": "folder" if cached else "built",
          "verilator_s": 0.0, "cxx_s": 0.0, "cxx_mb": None, "component": None }
  BUILDS.append( row )
  root = cache_dir()
  if root is not None:
    ip_cfg._dfx_cache_entry = root / key
    if not cached and ( ip_cfg._dfx_cache_entry / ip_cfg.get_shared_lib_path() ).exists():
      try:
        _restore( ip_cfg._dfx_cache_entry, ip_cfg )
        _stamp( ip_cfg ).write_text( key )
        cached = True
        row[ "source" ] = "model cache"
      except OSError:
        pass                           # a damaged entry: build as if absent
  return cached, config_file, cfg_d


def _timed( original, field ):
  def run( s, m, *args ):
    t0 = time.perf_counter()
    try:
      return original( s, m, *args )
    finally:
      if BUILDS:
        BUILDS[ -1 ][ field ] += time.perf_counter() - t0
  return run


def _get_imported_object( s, m ):
  imp = _orig_import( s, m )
  row = BUILDS[ -1 ] if BUILDS else {}
  row[ "component" ] = imp
  ip_cfg = imp._ip_cfg
  if row.get( "source" ) == "built":
    row[ "cxx_mb" ] = _cpp_megabytes( ip_cfg )
    key = getattr( ip_cfg, "_dfx_model_key", None )
    if key is not None:
      _stamp( ip_cfg ).write_text( key )
    entry = getattr( ip_cfg, "_dfx_cache_entry", None )
    if entry is not None and not entry.exists():
      try:
        _store( entry, ip_cfg )
      except OSError as e:             # a full or read-only cache costs the next run time only
        print( f"verilated model cache: not stored ({e})", file=sys.stderr )
  return imp


_applied = False


def apply():
  global _applied
  if not _applied:
    _Pass.is_cached = _is_cached
    _Pass.create_verilator_model = _timed( _orig_verilate, "verilator_s" )
    _Pass.create_shared_lib = _timed( _orig_compile, "cxx_s" )
    _Pass.get_imported_object = _get_imported_object
    _applied = True
