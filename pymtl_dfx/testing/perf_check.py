"""The check that `pymtl_dfx.perf` gives a CL run's cycles exactly: every
step's total and op-class cycles, every unit's busy cycles, the totals per
stage and class.  Shared by tests/perf (extra configs) and
tests/core/test_core_e2e.py (whose CL runs it reuses rather than repeats)."""

import time

from .. import perf


def assert_perf_equals_cl( compiled, prompt, new, tokens, cl ):
  """`cl` is a CL Host's results() after generating `tokens` from `prompt`;
  perf replays the same steps (the generated tokens but the last)."""
  t0 = time.perf_counter()
  got = perf.run( compiled, prompt, new, tokens=tokens[:-1] )
  seconds = time.perf_counter() - t0
  assert got["step_cycles"] == cl["step_cycles"]
  for k, ( p, c ) in enumerate( zip( got["step_classes"], cl["step_classes"] ) ):
    assert p == c, f"step {k}: op-class cycles differ"
  assert got["unit_busy"] == cl["unit_busy"]
  for key in ( "cycles", "stage_cycles", "class_cycles" ):
    assert got[ key ] == cl[ key ], key
  return seconds


def step_rows( step, cl ):
  """(what, perf, CL) for one step: `step` a `perf.steps.time_step` record,
  `cl` a CL Host's results() after that one step; the step's cycles, its
  cycles per op class and every core's busy cycles per unit."""
  rows = [ ( "cycles", step["cycles"], cl["step_cycles"][0] ) ]
  rows += [ ( f"class {c}", n, cl["step_classes"][0].get( c ) ) for c, n in step["classes"].items() ]
  for i, ( pb, cb ) in enumerate( zip( step["busy"], cl["unit_busy"] ) ):
    rows += [ ( f"core {i} {u} busy", n, cb[u] ) for u, n in pb.items() ]
  return rows
