"""Project-wide test set-up: the `level` parameter and the build folder.

Every unit test takes `level` (fl, cl, rtl).  Under pymtl3's --test-verilog
(or --test-yosys-verilog) only the tests that can build a Verilator model are
collected: the rtl cases of `level`, and tests without `level` that read
pymtl3's `cmdline_opts` (they choose what to Verilate themselves).  Every
other test is pure Python and has already run in the plain pass; running it
again would only double make test's time.
"""

import os
import pathlib

import pytest

from pymtl_dfx.testing import LEVELS

# records which test ran each RTL component in Verilator (make test's
# Verilator pass prints the table and fails if a component has none)
pytest_plugins = [ "pymtl_dfx.testing.verilated_record" ]

# a test's model runs thousands of cycles, so its build dominates: the 1-core
# appliance built and ran in 81 + 27 s at -O1 against 172 + 33 s at the
# benchmarks' default (-O2 -march=native) and 67 + 56 s at -O0
# (docs/measurements.md, 2026-12-07); DFX_VL_OPT set by the caller wins
os.environ.setdefault( "DFX_VL_OPT", "-O1" )
# Verilator inlines every module instance by default, so an appliance's C++
# holds each lane and core again: with --inline-mult 1 the 1-core appliance's
# C++ was 25.4 MB against 60.4 MB, Verilated in 8 s against 18 s, its run
# as fast (docs/measurements.md, 2026-12-07); DFX_VL_FLAGS set by the caller wins
os.environ.setdefault( "DFX_VL_FLAGS", "--inline-mult 1" )

REPO = pathlib.Path( __file__ ).resolve().parent.parent
BUILD = REPO / "build" / "pytest"

# the CL runs of the small GPT-2 kept for this checkout's next pass: the
# Verilator pass takes its models' cycle references from the plain pass's
# cl cases (`small_gpt2.cl_results`, keyed on the package's source)
os.environ.setdefault( "DFX_CL_RUNS", str( BUILD / "cl_runs" ) )


def _translating( config ):
  return bool( config.getoption( "test_verilog" ) or
               config.getoption( "test_yosys_verilog" ) )


def _may_verilate( item ):
  params = getattr( getattr( item, "callspec", None ), "params", {} )
  if "level" in params:
    return params[ "level" ] == "rtl"
  return "cmdline_opts" in item.fixturenames


@pytest.hookimpl( tryfirst=True )     # before pytest-xdist turns the groups into node ids
def pytest_collection_modifyitems( config, items ):
  # make test runs `--dist loadgroup`: a test file stays on one worker (its
  # module fixtures and Verilator builds are made once), except the cases of
  # a `spread` test, each minutes long, which balance the workers
  for item in items:
    group = item.nodeid if item.get_closest_marker( "spread" ) else item.nodeid.split( "::" )[0]
    item.add_marker( pytest.mark.xdist_group( group ) )
  if not _translating( config ):
    return
  keep = [ i for i in items if _may_verilate( i ) ]
  dropped = [ i for i in items if not _may_verilate( i ) ]
  if dropped:
    config.hook.pytest_deselected( items=dropped )
    items[:] = keep


@pytest.fixture( scope="session", autouse=True )
def build_dir( worker_id ):
  """pymtl3 writes translated Verilog and Verilator objects to the cwd; each
  pytest-xdist worker gets its own folder so no two build one model at once."""
  where = BUILD if worker_id == "master" else BUILD / worker_id
  where.mkdir( parents=True, exist_ok=True )
  old = os.getcwd()
  os.chdir( where )
  yield where
  os.chdir( old )


@pytest.fixture( params=LEVELS )
def level( request ):
  if request.param != "rtl" and _translating( request.config ):
    pytest.skip( "fl/cl run in the plain pass; --test-verilog runs rtl only" )
  return request.param


@pytest.fixture( scope="session" )
def tiny_weights():
  """The tiny preset's random weights (FP32), shared read-only by the
  checkpoint, bad-input and CLI tests."""
  from pymtl_dfx.config import gpt2_preset
  from pymtl_dfx.gpt2 import random_weights
  return random_weights( gpt2_preset( "tiny" ), seed=3 )


@pytest.fixture
def ckpt( tmp_path, tiny_weights ):
  """A fresh checkpoint folder of `tiny_weights`, for a test to damage."""
  from pymtl_dfx.gpt2 import save_checkpoint
  path = tmp_path / "ckpt"
  save_checkpoint( path, tiny_weights )
  return path


def pytest_terminal_summary( terminalreporter ):
  """The fuzz cases this run tried, per category and outcome (the
  `fuzz_cases` property of tests/test_fuzz.py, from every xdist worker)."""
  counts = {}
  for rep in terminalreporter.stats.get( "passed", [] ) + terminalreporter.stats.get( "failed", [] ):
    for name, value in getattr( rep, "user_properties", () ):
      if name == "fuzz_cases":
        for category, outcomes in value.items():
          for what, n in outcomes.items():
            counts.setdefault( category, {} )[ what ] = counts.get( category, {} ).get( what, 0 ) + n
  if counts:
    total = sum( sum( v.values() ) for v in counts.values() )
    terminalreporter.write_line(
      f"fuzz: {total} cases: " + "; ".join(
        f"{c} {sum( v.values() )} ({', '.join( f'{k} {n}' for k, n in sorted( v.items() ) )})"
        for c, v in sorted( counts.items() ) ) )
