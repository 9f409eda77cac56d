"""The multi-level test harness: one test body for FL, CL, RTL and Verilator."""

from .levels import LEVELS, select, select_or_skip
from .harness import StreamHarness, run_stream_test
