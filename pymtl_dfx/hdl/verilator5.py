"""Two fixes that make pymtl3 3.1.17's Verilator import work with Verilator 5,
and a faster C++ build.

1. Verilator 5 escapes a double underscore in the top module name
   (`Adder__nbits_16` -> `VAdder___05Fnbits_16`), so pymtl3 cannot find its
   own outputs.  `name_without_double_underscores` gives the imported
   component an explicit module name that has none.
2. pymtl3 #includes Verilator's runtime sources into one translation unit;
   with --trace (VCD) they clash.  `apply()` makes the import compile them
   as separate files.
3. pymtl3 compiles every Verilated file in one g++ call at -O0, so a large
   model builds on one core and runs slowly (at -O0 every array index and
   wide-word access is a function call).  `apply()` makes the import build
   through a generated makefile instead: one object per file, `jobs()` in
   parallel, the per-cycle ("fast") files at `opt_level()` (-O2
   -march=native unless DFX_VL_OPT says otherwise), the run-once files (constructor, initial
   values, settle, symbol table) at -O0, then one link.  Each compile goes
   through ccache when it is installed (`compiler()`), so a model whose
   generated C++ is unchanged (a clean clone, another worker's folder, a
   second CI run) compiles in seconds instead of minutes.
4. `shared_build(names)`: the models `core.prepare_sim` imports (a whole
   1-core appliance takes ~40 s to translate and ~5 min to build cold) are
   built in one folder (`shared_dir()`), each name under a file lock: for
   all pytest-xdist workers, so two test files that run the same model on
   two workers build it once (the second waits, then finds it cached), and
   for `dfx` in the user's cache, since pymtl3 would leave its tens of MB
   of Verilog, Verilator folders and libraries wherever the user stands.
5. `apply()` also installs `verilated_cache`: a built model is kept outside
   the build folder, keyed on its Verilog and flags, so a clean clone or a
   second run imports it without Verilator, compiler or linker.
6. pymtl3 runs Verilator and the C++ build with `subprocess.check_output(
   shell=True )`, which on Ctrl-C or the CLI's Terminated kills the shell
   only: make and its compilers, re-parented to init, would compile on.
   `apply()` gives that module a `subprocess` whose `check_output` is
   `run_in_group`'s, which ends the command's whole process group first.
"""

import contextlib
import fcntl
import importlib
import os
import pathlib
import shutil
import signal
import subprocess
import time
import types

from pymtl3.passes.backends.verilog import VerilogTranslationPass, VerilogVerilatorImportPass
from pymtl3.passes.backends.verilog.import_.VerilogVerilatorImportConfigs import (
  VerilogVerilatorImportConfigs,
)
from pymtl3.passes.backends.verilog.util.utility import get_component_unique_name
from pymtl3.passes.rtlir import RTLIRGetter

from ..files import describe_os_error, os_error_cause
from ..outputs import OutputPathError, cache_home
from . import verilated_cache
from .build_flags import jobs, opt_level  # noqa: F401 (named here)

_applied = False
_pymtl_vl_cmd = VerilogVerilatorImportConfigs.create_vl_cmd


def _separate_c_src_files( cfg ):
  top = cfg.translated_top_module
  mk_dir = cfg.vl_mk_dir
  with open( f"{mk_dir}/V{top}_classes.mk" ) as class_mk:
    lines = class_mk.readlines()
  srcs = list( cfg.c_srcs ) + [ cfg.get_c_wrapper_path() ]
  for label in ( "VM_CLASSES_FAST", "VM_SUPPORT_FAST", "VM_CLASSES_SLOW",
                 "VM_SUPPORT_SLOW" ):
    srcs += cfg._get_srcs_from_vl_class_mk( lines, mk_dir, label )
  for label in ( "VM_GLOBAL_FAST", "VM_GLOBAL_SLOW" ):
    srcs += cfg._get_srcs_from_vl_class_mk( lines, cfg.vl_include_dir, label )
  return srcs


def compiler():
  """`ccache g++` when ccache is installed and DFX_VL_CCACHE is not 0, else
  g++.  ccache keys an object on the preprocessed source and the flags, so a
  hit is the same object g++ would build."""
  if os.environ.get( "DFX_VL_CCACHE", "1" ) != "0" and shutil.which( "ccache" ):
    return "ccache g++"
  return "g++"


def verilator_flags():
  """Flags added to pymtl3's `verilator --cc` (DFX_VL_FLAGS; none by
  default, `--inline-mult 1` in the tests, tests/conftest.py: most modules
  then stay classes of their own, 1-core appliance 25.4 MB of C++ against
  60.4 MB).  -fno-inline would cut the 1-core appliance's generated C++
  from 89 MB to 28 MB (the ROM tables' initial values are repeated per
  inlined lane), but Verilator 5.006 then emits C++ that does not compile
  (a trigger on an unpacked-array port of a DMA reader, `.neq` on a C
  array), and its code is still one function per instance."""
  return os.environ.get( "DFX_VL_FLAGS", "" )


# top module -> the Verilator warnings its components declare harmless
_waivers = {}


def record_waivers( comp, name ):
  """Note, for the build of `comp` as top module `name`, every warning a
  component inside it names in its class's `verilator_waivers` (with
  --inline-mult 1 an inner module's port, such as the kernel's Vitis-named
  `interrupt`, becomes a C++ member, and Verilator 5.006 stops on one that
  is a C++ word).  Only that model's command, and so its cache key, gains
  the -Wno flags."""
  declaring = comp.get_all_object_filter( lambda x: hasattr( type( x ), "verilator_waivers" ) )
  found = { w for c in declaring for w in type( c ).verilator_waivers }
  if found:
    _waivers[ name ] = sorted( found )


def _vl_cmd_with_flags( cfg ):
  wno = " ".join( f"-Wno-{w}" for w in _waivers.get( cfg.translated_top_module, () ) )
  return f"{_pymtl_vl_cmd( cfg )} {verilator_flags()} {wno}".strip()


def _slow_files( cfg ):
  """The sources pymtl3 lists that run once (Verilator's *_SLOW classes)."""
  top, mk_dir = cfg.translated_top_module, cfg.vl_mk_dir
  with open( f"{mk_dir}/V{top}_classes.mk" ) as class_mk:
    lines = class_mk.readlines()
  return set( cfg._get_srcs_from_vl_class_mk( lines, mk_dir, "VM_CLASSES_SLOW" ) +
              cfg._get_srcs_from_vl_class_mk( lines, mk_dir, "VM_SUPPORT_SLOW" ) +
              cfg._get_srcs_from_vl_class_mk( lines, cfg.vl_include_dir, "VM_GLOBAL_SLOW" ) )


def _parallel_cc_cmd( cfg ):
  """A `make -jN` over a generated makefile: each source its own object."""
  includes = " ".join( "-I" + p for p in cfg._get_all_includes() if p )   # sets vl_include_dir
  srcs = _separate_c_src_files( cfg )
  slow = _slow_files( cfg )
  out = cfg.get_shared_lib_path()
  obj_dir = f"{cfg.vl_mk_dir}/pic"
  extra = cfg.c_flags if not cfg.is_default( "c_flags" ) else ""
  common = f"-fPIC -fno-gnu-unique {includes} {extra}".strip()
  objs, rules = [], []
  cc = compiler()
  for src in srcs:
    obj = f"{obj_dir}/{os.path.basename( src )[:-4]}.o"
    opt = "-O0" if src in slow else opt_level()
    objs.append( obj )
    rules.append( f"{obj}: {src}\n\t@mkdir -p {obj_dir}\n\t{cc} {opt} {common} -c -o $@ $<\n" )
  mk = f"{cfg.vl_mk_dir}/pymtl_dfx_build.mk"
  with open( mk, "w" ) as f:
    f.write( f"{out}: {' '.join( objs )}\n"
             f"\tg++ -shared -fPIC {cfg.ld_flags} -o $@ $^ {cfg.ld_libs}\n\n" )
    f.write( "\n".join( rules ) )
  # paths under the build folder enter ccache's key relative to it, so the
  # same model built in another folder (clone, worker) hits
  return f"CCACHE_BASEDIR={os.getcwd()} make -s -j{jobs()} -f {mk}"


def run_in_group( cmd, check=False, **popen ):
  """subprocess.run( cmd, check=check, **popen ), with `cmd` in a session
  (and so a process group) of its own, ended whole (`_end_group`) on any
  exception while it runs: Ctrl-C, the CLI's Terminated, SystemExit.
  subprocess would kill its direct child only: a shell, or Debian's perl
  `verilator`, whose children (make and its compilers, verilator_bin)
  would run on."""
  if popen.pop( "capture_output", False ):
    popen.update( stdout=subprocess.PIPE, stderr=subprocess.PIPE )
  with subprocess.Popen( cmd, start_new_session=True, **popen ) as p:
    try:
      out, err = p.communicate()
    except BaseException:
      _end_group( p )
      raise
  if check and p.returncode:
    raise subprocess.CalledProcessError( p.returncode, p.args, out, err )
  return subprocess.CompletedProcess( p.args, p.returncode, out, err )


def _end_group( p, grace=2.0 ):
  """SIGTERM to p's process group (make removes its half-built target),
  SIGKILL to whatever of it still runs after `grace` seconds, p reaped
  (the others, orphaned, are init's to reap)."""
  def signal_group( sig ):
    try:
      os.killpg( p.pid, sig )
    except OSError:               # the group is gone
      pass
  signal_group( signal.SIGTERM )
  deadline = time.monotonic() + grace
  while _group_runs( p.pid ) and time.monotonic() < deadline:
    time.sleep( 0.02 )
  signal_group( signal.SIGKILL )
  p.wait()


def _group_runs( pgid ):
  """Whether a process of the group still runs.  A zombie does not: init
  reaps orphans when it gets to it (a second later, in some containers).
  Without /proc: whether the group has a process at all."""
  try:
    pids = [ d for d in os.listdir( "/proc" ) if d.isdigit() ]
  except OSError:
    try:
      os.killpg( pgid, 0 )
      return True
    except OSError:
      return False
  for pid in pids:
    try:
      with open( f"/proc/{pid}/stat" ) as f:
        state, _, pgrp = f.read().rsplit( ")", 1 )[1].split()[:3]
    except ( OSError, ValueError ):
      continue                    # gone meanwhile
    if int( pgrp ) == pgid and state != "Z":
      return True
  return False


# what pymtl3's import module uses of subprocess, its commands run by `run_in_group`
_group_subprocess = types.SimpleNamespace(
  check_output=lambda cmd, **popen: run_in_group( cmd, True, stdout=subprocess.PIPE,
                                                  **popen ).stdout,
  STDOUT=subprocess.STDOUT, CalledProcessError=subprocess.CalledProcessError )


def apply():
  global _applied
  verilated_cache.apply()
  if not _applied:
    VerilogVerilatorImportConfigs._get_c_src_files = _separate_c_src_files
    VerilogVerilatorImportConfigs.create_cc_cmd = _parallel_cc_cmd
    VerilogVerilatorImportConfigs.create_vl_cmd = _vl_cmd_with_flags
    importlib.import_module( VerilogVerilatorImportPass.__module__ ).subprocess = _group_subprocess
    _applied = True


def name_without_double_underscores( component, suffix="" ):
  """Set an explicit Verilog module name: pymtl3's own, minus any `__`,
  plus `suffix` (a build variant, e.g. traced, in its own folder).
  A `WidePortsRTL` wrapper is named after the component it wraps (its own
  parameter, a component object, would not tell two designs apart)."""
  inner = getattr( component, "dut", None ) if type( component ).__name__ == "WidePortsRTL" else None
  rtype = RTLIRGetter( cache=False ).get_component_ifc_rtlir( inner or component )
  name = get_component_unique_name( rtype )
  if inner is not None:
    name = f"Ports_{name}"
  while "__" in name:
    name = name.replace( "__", "_" )
  name += suffix
  component.set_metadata( VerilogTranslationPass.explicit_module_name, name )
  return name


def shared_dir():
  """Where `shared_build` builds: DFX_VL_SHARED_DIR, else, in a pytest-xdist
  worker whose folder is the cwd (tests/conftest.py's build_dir: build/pytest/gwN),
  the sibling folder `shared`; else `build` in the user's cache
  (`outputs.cache_home()`, beside `verilated_cache`'s models)."""
  env = os.environ.get( "DFX_VL_SHARED_DIR" )
  if env:
    return pathlib.Path( env )
  worker = os.environ.get( "PYTEST_XDIST_WORKER" )
  cwd = pathlib.Path.cwd()
  if worker and cwd.name == worker:
    return cwd.parent / "shared"
  return cache_home() / "build"


@contextlib.contextmanager
def shared_build( names ):
  """Translate, build and import the models `names` in `shared_dir()` (the
  cwd is switched there), holding a lock file per name.  A folder that
  cannot be made or locked in is an `OutputPathError` naming it."""
  if not names:
    yield
    return
  where = shared_dir()
  locks = []
  old = os.getcwd()
  try:
    try:
      where.mkdir( parents=True, exist_ok=True )
      for name in sorted( set( names ) ):
        f = open( where / f"{name}.lock", "w" )
        locks.append( f )
        fcntl.flock( f, fcntl.LOCK_EX )
    except OSError as e:
      # the path that failed, when it is not the folder itself (a parent, a lock)
      why = os_error_cause( e, e.filename ) if str( e.filename ) == str( where ) \
        else describe_os_error( e )
      raise OutputPathError( f"the Verilator build folder {where}: {why} "
                             f"(XDG_CACHE_HOME or DFX_VL_SHARED_DIR moves it)" ) from None
    os.chdir( where )
    yield
  finally:
    os.chdir( old )
    for f in locks:
      fcntl.flock( f, fcntl.LOCK_UN )
      f.close()
