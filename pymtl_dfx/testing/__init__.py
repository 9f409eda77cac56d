"""The multi-level test harness: one test body for FL, CL, RTL and Verilator."""

from .levels import LEVELS, select
from .harness import StreamHarness, run_stream_test
