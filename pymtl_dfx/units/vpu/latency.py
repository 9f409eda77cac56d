"""The VPU engine's no-stall timing, from DFXConfig: the one formula the
tests check the CL and RTL against and the latency report prints."""

from ...isa import ComputeOp
from .msgs import REDUCTIONS
from .streams import n_chunks

# cycles from the sources' first valid cycle to the first chunk entering a
# pipe: the command register takes the command, the next cycle the chunk
# issues; the sink stamps the cycle it takes the result
ISSUE_CYCLES = 3


def no_stall_latency( cfg, op, length ):
  """Sink cycle of the first out message of a lone instruction (cmd, a, b
  all valid from cycle 1, sink always ready)."""
  if ComputeOp( op ) in REDUCTIONS:
    # chunks pass the tree back to back; each waits for the accumulator
    return ISSUE_CYCLES + cfg.vpu_tree_latency + n_chunks( length, cfg.d ) * cfg.vpu_accum_latency
  return ISSUE_CYCLES + cfg.vpu_elementwise_latency


def chunks_per_cycle( cfg, op ):
  """Steady-state throughput of one long instruction."""
  return 1 / cfg.vpu_accum_latency if ComputeOp( op ) in REDUCTIONS else 1.0
