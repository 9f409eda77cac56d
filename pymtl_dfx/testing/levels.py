"""Abstraction levels and how a test picks the component for one."""

LEVELS = ( "fl", "cl", "rtl" )


def select( level, **by_level ):
  """`select(level, fl=AFL, cl=ACL, rtl=ARTL)` -> the class for `level`."""
  if level not in LEVELS:
    raise ValueError( f"unknown level {level!r}; levels are {', '.join(LEVELS)}" )
  if level not in by_level:
    raise ValueError( f"no {level.upper()} model given (have {sorted(by_level)})" )
  return by_level[ level ]


def select_or_skip( level, **by_level ):
  """Like `select`, but a level whose model is not built yet skips the test,
  so a unit's tests already carry its CL and RTL cases."""
  import pytest
  if level not in by_level:
    pytest.skip( f"no {level.upper()} model yet" )
  return select( level, **by_level )


def python_rtl( level, cmdline_opts ):
  """True when the RTL runs in pymtl3's Python simulation (not Verilator).
  That simulation runs hundreds of cycles per second, so exhaustive and
  long streams take a sample there; the same test runs them whole in
  Verilator under --test-verilog."""
  opts = cmdline_opts or {}
  return level == "rtl" and not ( opts.get( "test_verilog" ) or opts.get( "test_yosys_verilog" ) )


def run_matching_cl( level, cmdline_opts, run, key=lambda r: r, cl_run=None,
                     why="CL and RTL differ" ):
  """`run( level, cmdline_opts )`, and at rtl (pymtl3's simulation or, with
  --test-verilog, Verilator) also `run( "cl", {} )` (or `cl_run`), asserting
  `key` of both equal: the CL model's timing is the RTL's, cycle for cycle.
  `key` picks what is compared (e.g. arrival cycles, or (cycles, arrivals));
  returns the first run's result."""
  r = run( level, cmdline_opts )
  if level == "rtl":
    cl = ( cl_run or run )( "cl", {} )
    assert key( r ) == key( cl ), why
  return r
