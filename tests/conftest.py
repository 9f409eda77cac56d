"""Project-wide test set-up: the `level` parameter and the build folder.

Every unit test takes `level` (fl, cl, rtl).  Under pymtl3's --test-verilog
(or --test-yosys-verilog) only the rtl cases run, as Verilator models: the fl
and cl cases have already run in the plain pass and translate nothing.
"""

import os
import pathlib

import pytest

from pymtl_dfx.testing import LEVELS

REPO = pathlib.Path( __file__ ).resolve().parent.parent
BUILD = REPO / "build" / "pytest"


def _translating( config ):
  return bool( config.getoption( "test_verilog" ) or
               config.getoption( "test_yosys_verilog" ) )


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
