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
   1-core appliance takes ~40 s to translate and ~5 min to build cold) are built in one folder for all pytest-xdist workers, each name
   under a file lock, so two test files that run the same model on two
   workers build it once (the second waits, then finds it cached).
5. `apply()` also installs `verilated_cache`: a built model is kept outside
   the build folder, keyed on its Verilog and flags, so a clean clone or a
   second run imports it without Verilator, compiler or linker.
"""

import contextlib
import fcntl
import os
import pathlib
import shutil

from pymtl3.passes.backends.verilog import VerilogTranslationPass
from pymtl3.passes.backends.verilog.import_.VerilogVerilatorImportConfigs import (
  VerilogVerilatorImportConfigs,
)
from pymtl3.passes.backends.verilog.util.utility import get_component_unique_name
from pymtl3.passes.rtlir import RTLIRGetter

from . import verilated_cache

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


def opt_level():
  """g++ optimisation of the per-cycle code: DFX_VL_OPT (e.g. -O0, -O1).
  The default's -march=native ran the d=32 1-core appliance 1.6x faster
  than -O1 or -O2 alone (37k -> 60-62k cycles/s, 2026-12-01, on a CPU with
  AVX-512: wide words in vector registers) in about the same build time,
  while the 4-core appliance, whose code is far past the caches, ran 16 %
  slower (3,253 -> 2,740 cycles/s); the library then runs only on CPUs
  like the one that built it, and ccache keys on the flag's text, so a
  ccache shared between different CPUs needs an explicit -march."""
  return os.environ.get( "DFX_VL_OPT", "-O2 -march=native" )


def jobs():
  """Parallel compiles of one model: DFX_VL_JOBS, else the CPU count."""
  return int( os.environ.get( "DFX_VL_JOBS", 0 ) ) or os.cpu_count() or 1


def compiler():
  """`ccache g++` when ccache is installed and DFX_VL_CCACHE is not 0, else
  g++.  ccache keys an object on the preprocessed source and the flags, so a
  hit is the same object g++ would build."""
  if os.environ.get( "DFX_VL_CCACHE", "1" ) != "0" and shutil.which( "ccache" ):
    return "ccache g++"
  return "g++"


def verilator_flags():
  """Flags added to pymtl3's `verilator --cc` (DFX_VL_FLAGS; none by
  default).  -fno-inline would cut the 1-core appliance's generated C++
  from 89 MB to 28 MB (the ROM tables' initial values are repeated per
  inlined lane), but Verilator 5.006 then emits C++ that does not compile
  (a trigger on an unpacked-array port of a DMA reader, `.neq` on a C
  array), and its code is still one function per instance."""
  return os.environ.get( "DFX_VL_FLAGS", "" )


def _vl_cmd_with_flags( cfg ):
  return f"{_pymtl_vl_cmd( cfg )} {verilator_flags()}".strip()


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


def apply():
  global _applied
  verilated_cache.apply()
  if not _applied:
    VerilogVerilatorImportConfigs._get_c_src_files = _separate_c_src_files
    VerilogVerilatorImportConfigs.create_cc_cmd = _parallel_cc_cmd
    VerilogVerilatorImportConfigs.create_vl_cmd = _vl_cmd_with_flags
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
  the sibling folder `shared`; else None (build in the cwd)."""
  env = os.environ.get( "DFX_VL_SHARED_DIR" )
  if env:
    return pathlib.Path( env )
  worker = os.environ.get( "PYTEST_XDIST_WORKER" )
  cwd = pathlib.Path.cwd()
  if worker and cwd.name == worker:
    return cwd.parent / "shared"
  return None


@contextlib.contextmanager
def shared_build( names ):
  """Translate, build and import the models `names` in `shared_dir()` (the
  cwd is switched there), holding a lock file per name; a no-op where
  there is no shared folder."""
  where = shared_dir()
  if where is None or not names:
    yield
    return
  where.mkdir( parents=True, exist_ok=True )
  locks = []
  old = os.getcwd()
  try:
    for name in sorted( set( names ) ):
      f = open( where / f"{name}.lock", "w" )
      locks.append( f )
      fcntl.flock( f, fcntl.LOCK_EX )
    os.chdir( where )
    yield
  finally:
    os.chdir( old )
    for f in locks:
      fcntl.flock( f, fcntl.LOCK_UN )
      f.close()
