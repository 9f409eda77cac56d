"""FP16 adder and multiplier: one test body at FL, CL, RTL and Verilator.

Outputs are compared with `pymtl_dfx.numerics` bit for bit on the edge-case
set (every pair of special values) and on random pairs drawn over all bit
patterns and over the normal range with close exponents (where cancellation
and rounding carries happen).
"""

import numpy as np
import pytest

from pymtl_dfx.testing.fp16_ops import OPS, edge_pairs, random_pairs, run_fp16_op


@pytest.mark.parametrize( "op", OPS )
def test_edge_cases( op, level, cmdline_opts ):
  a, b = edge_pairs()
  run_fp16_op( op, level, cmdline_opts, a, b )


@pytest.mark.parametrize( "op", OPS )
def test_random_100k( op, level, cmdline_opts ):
  a, b = random_pairs( 100_000, seed=7 if op == "add" else 8 )
  run_fp16_op( op, level, cmdline_opts, a, b, seed=3 )


@pytest.mark.parametrize( "op", OPS )
@pytest.mark.parametrize( "latency", [ 1, 3 ] )
def test_backpressure_and_latency( op, latency, level, cmdline_opts ):
  a, b = random_pairs( 300, seed=latency )
  r = run_fp16_op( op, level, cmdline_opts, a, b, seed=5, max_delay=3, latency=latency )
  assert len( r.arrivals["send"] ) == 300
  if level == "rtl":
    # the CL model's timing must be the RTL's, cycle for cycle, under stalls
    cl = run_fp16_op( op, "cl", {}, a, b, seed=5, max_delay=3, latency=latency )
    assert r.arrivals == cl.arrivals


@pytest.mark.parametrize( "op", OPS )
def test_latency_is_the_parameter( op, level, cmdline_opts ):
  """One message, no stalls: it leaves exactly `latency` cycles after it enters
  (CL and RTL); FL is untimed and only has to deliver it."""
  for latency in ( 1, 4, OPS[op]["latency"] ):
    a, b = np.array( [ 0x3C00 ], np.uint16 ), np.array( [ 0x4000 ], np.uint16 )
    r = run_fp16_op( op, level, cmdline_opts, a, b, latency=latency )
    if level != "fl":
      # the source's message is valid from cycle 1; the pipe takes it in
      # cycle 2; it is on the output `latency` cycles after that, and the
      # sink stamps the cycle in which it takes it
      assert r.arrivals["send"][0] == latency + 2


def test_a_wrong_result_is_caught( cmdline_opts ):
  """The checking sink really checks: corrupt one expected value."""
  from pymtl_dfx.testing import fp16_ops
  a, b = random_pairs( 20, seed=1 )
  real = fp16_ops.golden
  try:
    fp16_ops.golden = lambda *args: real( *args ) ^ np.uint16( 1 )
    with pytest.raises( AssertionError, match="message #0 is wrong" ):
      run_fp16_op( "mul", "rtl", cmdline_opts, a, b )
  finally:
    fp16_ops.golden = real
