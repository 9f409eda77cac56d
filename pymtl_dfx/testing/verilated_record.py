"""A pytest plugin: which test ran each RTL component in Verilator.

Every Verilator model in the project is built by pymtl3's
VerilogTranslationImportPass (unit harnesses through
config_model_with_cmdline_opts, cores and appliances through
core.Core.prepare_sim).  The plugin wraps that pass: before a translation it
walks the components marked for it and records the class of each component
beneath them against the running test.  At the end of a --test-verilog
session it prints every RTL component of pymtl_dfx with the first test that
Verilated it, and every design option (`config.DESIGN_FIELDS`) with the
first test that Verilated a model built with it on, writes the table to
build/verilated_components.json, and with --require-all-verilated fails the
session when a component has none (an option that only changes the
program, such as the read-ahead, is listed but not required).

It also prints the table of every Verilator import of the session
(`verilated_cache.BUILDS`: the model, the test, whence it came, Verilator and
C++ seconds, the generated C++'s size, the cycles its simulation ran and the
test's seconds outside the builds) and writes it to build/test/verilator_builds.json.

With pytest-xdist each worker records its own tests and hands the tables to
the controller in `workeroutput`.
"""

import importlib
import inspect
import json
import pathlib
import pkgutil
import time

import pytest

from ..atomic import atomic_open

REPO = pathlib.Path( __file__ ).resolve().parents[ 2 ]
OUT = REPO / "build" / "verilated_components.json"
BUILDS_OUT = REPO / "build" / "test" / "verilator_builds.json"

# Modules whose components are stimulus, not hardware: the host's drivers
# stay in Python at every level.
NOT_HARDWARE = ( "pymtl_dfx.testing", "pymtl_dfx.appliance.host", "pymtl_dfx.appliance.drivers",
                 "pymtl_dfx.cli", "pymtl_dfx.kernel.cosim" )

_current = { "test": None }
_seen = {}        # class name -> first test that Verilated it
_builds = []      # rows of the build table (verilated_cache.BUILDS, made plain)


def rtl_components():
  """{class name: module} of every component of pymtl_dfx that describes
  hardware at RTL: all but the FL/CL models and the host's stimulus."""
  import pymtl_dfx
  from pymtl3 import Component
  found = {}
  for m in pkgutil.walk_packages( pymtl_dfx.__path__, "pymtl_dfx." ):
    if m.name.startswith( NOT_HARDWARE ):
      continue
    mod = importlib.import_module( m.name )
    for name, c in vars( mod ).items():
      if ( inspect.isclass( c ) and issubclass( c, Component ) and c.__module__ == m.name
           and not name.endswith( ( "FL", "CL" ) ) ):
        found[ name ] = m.name
  return found


def _classes_below( comp ):
  # a base class (e.g. lib.comb_pipe.CombPipeRTL under the FP16 operators)
  # is Verilated as part of every subclass
  out = { c.__name__ for c in type( comp ).__mro__ if c.__module__.startswith( "pymtl_dfx." ) }
  for child in comp.get_child_components():
    out |= _classes_below( child )
  return out


OPTION = "option "     # the table's names of design options: `option NAME`


def _is_component( name ):
  return not name.startswith( OPTION )


def _options_below( comp ):
  """`option NAME` for every design option (`config.DESIGN_FIELDS`) that is
  on (away from the paper's value, the field's default) in a DFXConfig some
  component beneath `comp` was built with."""
  from ..config import DESIGN_FIELDS, DFXConfig
  paper = DFXConfig()
  out = set()
  dsl = getattr( comp, "_dsl", None )
  for arg in list( getattr( dsl, "args", () ) ) + list( getattr( dsl, "kwargs", {} ).values() ):
    if isinstance( arg, DFXConfig ):
      out |= { OPTION + f for f in DESIGN_FIELDS if getattr( arg, f ) != getattr( paper, f ) }
  for child in comp.get_child_components():
    out |= _options_below( child )
  return out


def _marked( top, flag ):
  if top.has_metadata( flag ) and top.get_metadata( flag ):
    return [ top ]
  return [ c for child in top.get_child_components() for c in _marked( child, flag ) ]


def _wrap_translation_pass():
  from pymtl3.passes.backends.verilog import VerilogTranslationImportPass as Pass
  if getattr( Pass.__call__, "_records", False ):
    return
  original = Pass.__call__

  def recording( self, top ):
    for comp in _marked( top, Pass.enable ):
      for name in _classes_below( comp ) | _options_below( comp ):
        _seen.setdefault( name, _current[ "test" ] )
    return original( self, top )

  recording._records = True
  Pass.__call__ = recording


def pytest_addoption( parser ):
  parser.addoption( "--require-all-verilated", action="store_true",
                    help="fail the session when an RTL component of pymtl_dfx was "
                         "not run in Verilator by any selected test" )


def _translating( config ):
  return bool( config.getoption( "test_verilog", None ) or
               config.getoption( "test_yosys_verilog", None ) )


def pytest_configure( config ):
  if _translating( config ):
    _wrap_translation_pass()


def _cycles( comp ):
  top = comp
  try:
    while top.get_parent_object() is not None:
      top = top.get_parent_object()
    return top.sim_cycle_count() + getattr( top, "cycles_outside_sim", 0 )
  except Exception:                  # not simulated (lint, translation only)
    return None


@pytest.hookimpl( hookwrapper=True )
def pytest_runtest_protocol( item ):
  from ..hdl.verilated_cache import BUILDS
  _current[ "test" ] = item.nodeid
  first = len( BUILDS )
  t0 = time.perf_counter()
  yield
  seconds = time.perf_counter() - t0
  rows = BUILDS[ first: ]
  built = sum( r[ "verilator_s" ] + r[ "cxx_s" ] for r in rows )
  for r in rows:
    _builds.append( { "model": r[ "model" ], "test": item.nodeid, "source": r[ "source" ],
                      "verilator_s": round( r[ "verilator_s" ], 1 ),
                      "cxx_s": round( r[ "cxx_s" ], 1 ),
                      "cxx_mb": None if r[ "cxx_mb" ] is None else round( r[ "cxx_mb" ], 1 ),
                      "cycles": _cycles( r[ "component" ] ) if r[ "component" ] else None,
                      "test_s_outside_builds": round( seconds - built, 1 ) } )
    r[ "component" ] = None           # let the model go with its test
  _current[ "test" ] = None


def pytest_sessionfinish( session ):
  config = session.config
  if not _translating( config ):
    return
  if hasattr( config, "workeroutput" ):        # an xdist worker
    config.workeroutput[ "verilated" ] = json.dumps( _seen )
    config.workeroutput[ "builds" ] = json.dumps( _builds )
    return
  BUILDS_OUT.parent.mkdir( parents=True, exist_ok=True )
  with atomic_open( BUILDS_OUT ) as f:
    f.write( json.dumps( _builds, indent=1 ) + "\n" )
  from ..config import DESIGN_FIELDS
  components = sorted( rtl_components() ) + [ OPTION + f for f in DESIGN_FIELDS ]
  table = { name: _seen.get( name ) for name in components }
  OUT.parent.mkdir( parents=True, exist_ok=True )
  with atomic_open( OUT ) as f:
    f.write( json.dumps( table, indent=1 ) + "\n" )
  missing = [ n for n, t in table.items() if t is None ]
  config._verilated_table = ( table, missing )
  # a design option that only reorders the program (e.g. the read-ahead)
  # has no RTL of its own: only components are required
  if any( map( _is_component, missing ) ) and config.getoption( "require_all_verilated" ):
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_testnodedown( node, error ):
  got = getattr( node, "workeroutput", {} ).get( "verilated" )
  for name, test in json.loads( got or "{}" ).items():
    _seen.setdefault( name, test )
  _builds.extend( json.loads( getattr( node, "workeroutput", {} ).get( "builds" ) or "[]" ) )


def _write_builds( tr ):
  # the costliest first: build time, then the test's own time
  rows = sorted( _builds, key=lambda r: ( -( r[ "verilator_s" ] + r[ "cxx_s" ] ),
                                          -r[ "test_s_outside_builds" ] ) )
  tr.section( "Verilator builds" )
  tr.write_line( f"{'model':44s} {'whence':11s} {'vl s':>6s} {'C++ s':>6s} {'C++ MB':>7s} "
                 f"{'cycles':>9s} {'run s':>6s}  test" )
  for r in rows:
    mb = "" if r[ "cxx_mb" ] is None else f"{r['cxx_mb']:.1f}"
    cyc = "" if r[ "cycles" ] is None else str( r[ "cycles" ] )
    tr.write_line( f"{r['model'][:44]:44s} {r['source']:11s} {r['verilator_s']:6.1f} "
                   f"{r['cxx_s']:6.1f} {mb:>7s} {cyc:>9s} {r['test_s_outside_builds']:6.1f}  {r['test']}" )
  built = [ r for r in rows if r[ "source" ] == "built" ]
  tr.write_line( f"{len( rows )} imports: {len( built )} built "
                 f"(Verilator {sum( r['verilator_s'] for r in built ):.0f} s, "
                 f"C++ {sum( r['cxx_s'] for r in built ):.0f} s), "
                 f"{sum( r['source'] == 'model cache' for r in rows )} from the model cache, "
                 f"{sum( r['source'] == 'folder' for r in rows )} already in their folder; "
                 f"table in {BUILDS_OUT.relative_to( REPO )}" )


def pytest_terminal_summary( terminalreporter, config ):
  got = getattr( config, "_verilated_table", None )
  if got is None:
    return
  table, missing = got
  tr = terminalreporter
  _write_builds( tr )
  tr.section( "RTL components and design options run in Verilator" )
  for name, test in table.items():
    tr.write_line( f"{name:26s} {test or 'NONE: no test Verilates it'}" )
  tr.write_line( f"{len( table ) - len( missing )} of {len( table )} RTL components and "
                 f"design options Verilated; table in {OUT.relative_to( REPO )}" )
  if missing:
    tr.write_line( "not Verilated by any selected test: " + ", ".join( missing ),
                   red=any( map( _is_component, missing ) ) )
