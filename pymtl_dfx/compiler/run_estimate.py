"""How long a run takes on this machine, estimated from a model's layout
before it starts: `announce`d on stderr from a minute, refused past
`bounds.RUN_BUDGET_S`."""

from ..bounds import announce, cpu_count
from ..config import CompileError
from .checks import linear_layout, model_errors


# Simulated core-cycles per CPU second of each way of running a step: the one
# definition every estimate uses.
#   perf: 1.5B on 4 cards, 3.9 k appliance cycles per CPU s (docs/perf.md "Speed")
#   cl, fl: the default core's appliance, as `dfx generate` builds it (tiny;
#     2 CPUs, busy; 2026-12-07): cl one 14,953-cycle step on 4 cores in 31
#     CPU s (1,930 core-cycles per CPU s) and 13,772 cycles on 1 in 5.6 s
#     (2,470); fl 20 steps on 4 cores in ~290 CPU s (~3,080).  sim/bench_core.py's
#     2,047 appliance cycles per CPU s on 4 cores (docs/measurements.md) are of
#     its small test appliance, and made `dfx generate --model tiny --cores 4
#     --level cl` announce "~2 min" for 20 steps that take ~10 min.
#   rtl: ~1.8 k cycles/s on 1 core (docs/core.md)
#   verilog: 4 cores, 2,741 cycles per CPU s (docs/core.md)
#   kernel: 1 card, ~5.8 k kernel cycles per s (the co-simulation of the small
#     model's 3 steps, ~37 k cycles in ~6.4 s after its build; pymtl3 ticks
#     the Verilated cards with the host's drivers in Python; 2026-12-02)
CORE_CYCLES_PER_CPU_S = dict( perf=4 * 3_900, cl=2_000, fl=3_000, rtl=1_800,
                              verilog=4 * 2_741, kernel=5_800 )
# The functional appliance (`--level func`) runs instructions, not cycles:
# CPU seconds per core, decoder layer and token step, measured with
# `dfx generate --model tiny --prompt-ids 1 --new-tokens 1 --json` (2
# layers): 0.85 s of CPU on 1 core, 32.2 s on 128 (cores padded with zero
# heads and columns: the per-core work barely shrinks).  gpt2 on 8 cores took
# 8.9 s against the 12 s this gives.
FUNC_CORE_LAYER_STEP_S = 0.125
# Cycles a decoder layer costs besides streaming its weights and its syncs
# (pipeline fills, LayerNorm, softmax): fitted, with the 2x on the weight
# stream, to the exactly timed steps of docs/perf.md (tiny on 4, 16 and 32
# cards; 124M on 1; 345M on 1 and 4; 1.5B on 4): within 25 % of each.
LAYER_FIXED_CYCLES = 4_200
SYNCS_PER_LAYER = 4
# dependent memory round trips per layer (a DMA instruction waiting for its
# data), so that a long memory latency lengthens the estimate
MEM_TRIPS_PER_LAYER = 20
# Past this many models (a sweep's points), a run's estimate is taken from
# an even sample of them: each costs ~1 ms (four layouts), and 4,096
# points' took ~10 s on a busy 2-CPU machine before its line appeared.
ESTIMATE_MODELS = 256


def step_cycles( gpt, dfx, cores ):
  """~ the cycles of one token step on `cores` cards (see LAYER_FIXED_CYCLES)."""
  hbm, _, per_layer = linear_layout( gpt, dfx, cores, 1 )
  words = hbm      # weights, and K/V of one token
  stream = words / ( dfx.hbm_channels * float( dfx.hbm_words_per_channel_cycle ) )
  hop = dfx.ring_latency_cycles + dfx.router_words / float( dfx.ring_packet_words_per_cycle )
  sync = gpt.n_layer * SYNCS_PER_LAYER * cores * hop
  trips = MEM_TRIPS_PER_LAYER * ( dfx.hbm_latency_cycles + dfx.ddr_latency_cycles )
  return 2 * stream + sync + ( LAYER_FIXED_CYCLES + trips ) * gpt.n_layer


def perf_step_seconds( gpt, dfx, cores ):
  """~ CPU seconds perf takes for one step: the folded layers are not
  simulated (`perf.fold`: about 4 layer bodies are)."""
  simulated = min( 1.0, 4 / gpt.n_layer )
  return step_cycles( gpt, dfx, cores ) * simulated * cores / CORE_CYCLES_PER_CPU_S["perf"]


def _step_seconds( m ):
  """perf_step_seconds of a planned (or `perf.unplanned`) model; None for
  one the compiler refuses, which has no step to time (a sweep estimates
  its points before laying them out, and reports such a point as not
  fitting)."""
  try:
    if model_errors( m.gpt, m.dfx, m.cores, m.layout["max_tokens"] ):
      return None
    return perf_step_seconds( m.gpt, m.dfx, m.cores )
  except CompileError:      # a shape that does not partition
    return None


def perf_tasks( prog, tasks, jobs, enabled=True ):
  """`announce` the timing of perf's [(model, ...)] on `jobs` processes
  (`sampled.time_many`'s on_start): as many as it starts (no more than
  the steps), running at once on at most the CPU count.  Past
  ESTIMATE_MODELS models, from an even sample of them, scaled."""
  per_model = {}      # id: [model, its tasks] (a sweep's or report's tasks share models)
  for m, *_ in tasks:
    per_model.setdefault( id( m ), [ m, 0 ] )[1] += 1
  models = list( per_model.values() )
  stride = max( 1, -( -len( models ) // ESTIMATE_MODELS ) )     # rounded up
  sample = models[ ::stride ]
  scale = len( models ) / max( 1, len( sample ) )
  each = [ ( s, n ) for s, n in ( ( _step_seconds( m ), n ) for m, n in sample ) if s is not None ]
  if not each:
    return
  steps = round( scale * sum( n for _, n in each ) )
  procs = max( 1, min( jobs, steps ) )
  cpus = min( procs, cpu_count() )
  shared = f" sharing {cpus} CPU(s)" if cpus < procs else ""
  sampled = f", estimated from {len( sample )} of its {len( models )} configs" if scale > 1 else ""
  announce( prog, scale * sum( s * n for s, n in each ) / cpus,
            f"{steps} steps to time{sampled}, ~{max( s for s, _ in each ):.0f} CPU s each at "
            f"most, on {procs} process(es){shared}", enabled )


def level_seconds( gpt, dfx, cores, steps, level ):
  """~ CPU seconds `steps` token steps take at an appliance level."""
  if level == "func":
    return FUNC_CORE_LAYER_STEP_S * cores * gpt.n_layer * steps
  return step_cycles( gpt, dfx, cores ) * steps * cores / CORE_CYCLES_PER_CPU_S[ level ]
