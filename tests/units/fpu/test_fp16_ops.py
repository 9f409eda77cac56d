"""Every FP16 operator: one test body at FL, CL, RTL and Verilator.

Outputs are compared with `pymtl_dfx.numerics` bit for bit: unary operators
(exp, recip, rsqrt, GELU, inv_pow2) on all 65,536 input patterns; binary ones (add/sub,
mul, max) on every pair of edge values and on 100,000 random pairs drawn over
all bit patterns and over close exponents (cancellation, carries, ties).
"""

import numpy as np
import pytest

from pymtl_dfx.testing import fp16_ops
from pymtl_dfx.testing.levels import python_rtl, run_matching_cl
from pymtl_dfx.testing.fp16_ops import (BINARY, OPS, UNARY, all_patterns, edge_operands,
                                        random_operands, run_fp16_op)


@pytest.mark.parametrize( "op", OPS )
def test_edge_cases( op, level, cmdline_opts ):
  run_fp16_op( op, level, cmdline_opts, edge_operands( op ) )


@pytest.mark.parametrize( "op", UNARY )
def test_every_input( op, level, cmdline_opts ):
  """All 65,536 inputs (every 8th in the Python RTL simulation: every
  exponent and sign, a spread of mantissas; Verilator runs them all)."""
  x = all_patterns()[ ::8 ] if python_rtl( level, cmdline_opts ) else all_patterns()
  r = run_fp16_op( op, level, cmdline_opts, ( x, ) )
  assert len( r.arrivals["send"] ) == x.size


@pytest.mark.parametrize( "op", BINARY )
def test_random_100k( op, level, cmdline_opts ):
  seed = { "add": 7, "mul": 8, "max": 11 }[ op ]
  n = 20_000 if python_rtl( level, cmdline_opts ) else 100_000
  run_fp16_op( op, level, cmdline_opts, random_operands( op, n, seed ), seed=3 )


@pytest.mark.parametrize( "op", OPS )
@pytest.mark.parametrize( "latency", [ 1, 3 ] )
def test_backpressure_and_latency( op, latency, level, cmdline_opts ):
  x = random_operands( op, 300, seed=latency )
  # the CL model's timing must be the RTL's, cycle for cycle, under stalls
  r = run_matching_cl( level, cmdline_opts, lambda lv, opts: run_fp16_op(
    op, lv, opts, x, seed=5, max_delay=3, latency=latency ), key=lambda r: r.arrivals )
  assert len( r.arrivals["send"] ) == 300


@pytest.mark.parametrize( "op", OPS )
def test_latency_is_the_parameter( op, level, cmdline_opts ):
  """One message, no stalls: it leaves exactly `latency` cycles after it enters
  (CL and RTL); FL is untimed and only has to deliver it."""
  for latency in sorted( { 1, 4, OPS[op]["latency"] } ):
    x = random_operands( op, 1, seed=0 )
    r = run_fp16_op( op, level, cmdline_opts, x, latency=latency )
    if level != "fl":
      # the source's message is valid from cycle 1; the pipe takes it in
      # cycle 2; it is on the output `latency` cycles after that, and the
      # sink stamps the cycle in which it takes it
      assert r.arrivals["send"][0] == latency + 2


def test_a_wrong_result_is_caught( cmdline_opts ):
  """The checking sink really checks: corrupt one expected value."""
  real = fp16_ops.golden
  try:
    fp16_ops.golden = lambda *args: real( *args ) ^ np.uint16( 1 )
    with pytest.raises( AssertionError, match="message #0 is wrong" ):
      run_fp16_op( "mul", "rtl", cmdline_opts, random_operands( "mul", 20, seed=1 ) )
  finally:
    fp16_ops.golden = real
