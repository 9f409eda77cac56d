"""The VPU engine's no-stall timing, from DFXConfig: the one formula the
tests check the CL and RTL against and the latency report prints."""

from ...isa import ComputeOp
from .msgs import MAX_REDUCTIONS, REDUCTIONS
from .streams import n_chunks

# cycles from the sources' first valid cycle to the first chunk entering a
# pipe: the command register takes the command, the next cycle the chunk
# issues; the sink stamps the cycle it takes the result
ISSUE_CYCLES = 3


def partials_cycles( chunks, partials, latency ):
  """With P interleaved partials (`VPUAccumPartialsRTL`): cycles from the
  first chunk entering the accumulator to the result leaving it, the chunks
  arriving back to back.  A chunk enters at most one a cycle and not before
  its partial's previous value leaves the adder (forwarded in that cycle);
  then the pairwise combine passes, in order, each when its two partials
  are there."""
  ready, t = [ 0 ] * partials, -1         # the cycle each partial can be read
  for i in range( chunks ):
    j = i % partials
    t = max( t + 1, ready[j] )
    ready[j] = t + latency
  live, stride = min( chunks, partials ), 1
  while live > 1:
    for m in range( live // 2 ):
      a = 2 * m * stride
      t = max( t + 1, ready[a], ready[ a + stride ] )
      ready[a] = t + latency
    live, stride = ( live + 1 ) // 2, 2 * stride
  return t + latency


def no_stall_latency( cfg, op, length ):
  """Sink cycle of the first out message of a lone instruction (cmd, a, b
  all valid from cycle 1, sink always ready)."""
  if ComputeOp( op ) in REDUCTIONS:
    C = n_chunks( length, cfg.d )
    if cfg.vpu_max_tree and ComputeOp( op ) in MAX_REDUCTIONS:   # the comparator pipes
      return ISSUE_CYCLES + cfg.vpu_max_tree_latency + C * cfg.vpu_max_accum_latency
    if cfg.reduce_partials > 1:
      return ISSUE_CYCLES + cfg.vpu_tree_latency + partials_cycles(
        C, cfg.reduce_partials, cfg.vpu_accum_latency )
    # chunks pass the tree back to back; each waits for the accumulator
    return ISSUE_CYCLES + cfg.vpu_tree_latency + C * cfg.vpu_accum_latency
  if cfg.vpu_gelu and ComputeOp( op ) == ComputeOp.GELU:       # its own pipe
    return ISSUE_CYCLES + cfg.vpu_gelu_latency
  return ISSUE_CYCLES + cfg.vpu_elementwise_latency


def chunks_per_cycle( cfg, op ):
  """Steady-state throughput of one long instruction (its chunks; with
  interleaved partials the combine passes come on top, once)."""
  if cfg.vpu_max_tree and ComputeOp( op ) in MAX_REDUCTIONS:
    return 1 / cfg.vpu_max_accum_latency
  if ComputeOp( op ) in REDUCTIONS:
    return min( 1.0, cfg.reduce_partials / cfg.vpu_accum_latency )
  return 1.0
