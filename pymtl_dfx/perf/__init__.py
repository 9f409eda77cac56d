"""Cycle counts of the CL appliance without simulating data: the same
cycles as the CL simulation, in a fraction of its time.

The compiled per-step programs are replayed through the units' own timing
objects (`units/<unit>/timing.py`, which the CL models call), joined as the
core and the appliance join the CL units: see docs/perf.md.
"""

from .steps import Planned, planned, run, schedule, unplanned   # noqa: F401
