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
