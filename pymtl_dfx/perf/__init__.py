"""Cycle counts of the CL appliance without simulating data (issue #12).

The compiled per-step programs are replayed through the units' own timing
objects (`units/<unit>/timing.py`, which the CL models call), joined as the
core and the appliance join the CL units: see docs/perf.md.
"""

from .steps import Planned, planned, run, schedule   # noqa: F401
