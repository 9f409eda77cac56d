"""A core from any mix of levels.

Scheduling: every unit of `Core.UNIT_NAMES` at FL and at RTL with every
other unit CL, and some all-FL-but-one and all-RTL-but-one mixes, elaborate
and schedule (pymtl3 raises at `DefaultPassGroup` when @update_once blocks
form a loop; a CL or FL unit reads an input port only in @update blocks
whose output depends on that input at RTL too, so a cycle through an RTL
neighbour's block is one pymtl3 iterates to its fixed point).

Running: the first decoder layer of the small model of test_core_e2e.py
(`testing.core_mixing.run_layer`) on one core with one unit swapped, against
the all-CL run: the HBM words the layer wrote (K/V), the residual it leaves
in DDR and the register file must be equal bit for bit.

Cycle equality rule: a CL unit and its RTL counterpart make every handshake
in the same cycle (each unit's tests assert it), so swapping one unit of a
core from CL to RTL must not change the core's cycles: asserted for every
RTL swap below.  FL units are untimed (values only).
"""

import os

import numpy as np
import pytest

from pymtl_dfx.core.Core import UNIT_NAMES
from pymtl_dfx.testing.core_mixing import elaborate_core, run_layer

# Python simulation only (it elaborates mixes, never Verilates one)
pytestmark = pytest.mark.no_verilog

# elaborating the Python RTL MPU and VPU takes about a minute each; the
# all-RTL-but-one mixes below pay for both
RTL_BUT = ( "dma", "rfm", "hbm" )

# make test runs the cases that take seconds; DFX_MIXING_FULL=1 adds those
# that take minutes in pymtl3's Python simulation (elaborating the RTL MPU or
# VPU, a layer on the RTL memories) - about 20 minutes more on 2 cores
SLOW = pytest.mark.skipif( not os.environ.get( "DFX_MIXING_FULL" ),
                           reason="minutes of Python RTL; DFX_MIXING_FULL=1 runs it" )
SLOW_RTL = ( "mpu", "vpu" )


def units( names, slow ):
  return [ pytest.param( u, marks=SLOW ) if u in slow else u for u in names ]


@pytest.fixture( autouse=True )
def _python_only( cmdline_opts ):
  if cmdline_opts.get( "test_verilog" ) or cmdline_opts.get( "test_yosys_verilog" ):
    pytest.skip( "Python simulation only: the plain pass runs it" )


@pytest.mark.parametrize( "level", [ "fl", "rtl" ] )
@pytest.mark.parametrize( "unit", UNIT_NAMES )
def test_one_unit_in_a_cl_core_schedules( unit, level ):
  if level == "rtl" and unit in SLOW_RTL and not os.environ.get( "DFX_MIXING_FULL" ):
    pytest.skip( "elaborating the Python RTL MPU/VPU takes a minute; DFX_MIXING_FULL=1 runs it" )
  core = elaborate_core( { unit: level }, "cl" )
  assert core.levels[ unit ] == level


def test_cl_core_schedules():
  elaborate_core( None, "cl" )


@pytest.mark.parametrize( "unit", units( UNIT_NAMES, SLOW_RTL ) )
def test_one_rtl_unit_in_an_fl_core_schedules( unit ):
  elaborate_core( { unit: "rtl" }, "fl" )


@pytest.mark.parametrize( "unit", UNIT_NAMES )
def test_one_cl_unit_in_an_fl_core_schedules( unit ):
  elaborate_core( { unit: "cl" }, "fl" )


@pytest.mark.parametrize( "unit", units( RTL_BUT, RTL_BUT ) )
def test_one_cl_unit_in_an_rtl_core_schedules( unit ):
  elaborate_core( { unit: "cl" }, "rtl" )


_cl = {}


def cl_layer():
  if not _cl:
    _cl.update( run_layer( None ) )
  return _cl


def _same( r, want ):
  assert np.array_equal( r["hbm"], want["hbm"] ), f"{r['levels']}: K/V in HBM differ from CL's"
  assert np.array_equal( r["ddr"], want["ddr"] ), f"{r['levels']}: the residual in DDR differs"
  if r["rf"] is not None:
    assert np.array_equal( r["rf"].view( np.uint16 ), want["rf"].view( np.uint16 ) ), \
      f"{r['levels']}: the register file differs from CL's"


# the RTL memories in pymtl3's Python simulation take a few minutes each
@pytest.mark.parametrize( "unit", units( [ "ctrl", "wfifo", "router", "ddr", "hbm" ],
                                         ( "ddr", "hbm" ) ) )
def test_layer_with_an_rtl_unit_in_a_cl_core( unit ):
  want = cl_layer()
  r = run_layer( { unit: "rtl" } )
  _same( r, want )
  assert r["cycles"] == want["cycles"], \
    f"RTL {unit}: {r['cycles']} cycles, CL {want['cycles']} (a CL unit and its RTL must agree)"


def test_layer_with_a_late_releasing_rtl_control_unit():
  """done_latency_cycles=2 (an entry freed 2 cycles after its done token):
  the RTL control unit in a CL core keeps the CL core's cycles, which are
  more than at 0, and the values are the same."""
  late = dict( done_latency_cycles=2 )
  cl = run_layer( None, timing=late )
  rtl = run_layer( { "ctrl": "rtl" }, timing=late )
  _same( cl, cl_layer() )
  _same( rtl, cl_layer() )
  assert rtl["cycles"] == cl["cycles"], \
    f"RTL ctrl: {rtl['cycles']} cycles, CL {cl['cycles']} at done_latency_cycles=2"
  assert cl["cycles"] > cl_layer()["cycles"]


@pytest.mark.parametrize( "unit", units( [ u for u in UNIT_NAMES if u != "wfifo" ],
                                         ( "router", "hbm", "ddr", "rfm" ) ) )
def test_layer_with_an_fl_unit_in_a_cl_core( unit ):
  # an FL control unit brings the unbounded FL weight FIFO (resolve_levels)
  _same( run_layer( { unit: "fl" } ), cl_layer() )
