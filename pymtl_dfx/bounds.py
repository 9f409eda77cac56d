"""A bound on every size a user can give, each derived from the hardware
(the Alveo U280 card, the core's fields and buffers) or from this machine,
and checked before anything is loaded, compiled or simulated.

`DFX_BOUNDS` and `RTL_BOUNDS` (DFXConfig fields, applied by `check_dfx`)
and `compiler.checks.model_errors` (the model on N cores, applied by
`check_model`, which `compiler.build.plan` runs before the layout) are the one definition;
docs/bounds.md's table is generated from them and `OTHER_BOUNDS` (the
limits other modules check) by `doc_table`, and a test checks the file is
current.  Regenerate with
  python -c 'from pymtl_dfx import bounds; bounds.update("docs/bounds.md")'

Each refusal is one line: the value, the bound and where the bound comes
from.  The model's bounds are O(1) in its sizes (the layouts of 1 and 2
layers, scaled), so a config.json with n_layer = 10**400 is refused at
once instead of looping (past 64 bits, config.json's reader refuses the
number itself).  Runs that are legal but long are announced with
an estimate (`announce`), and refused past RUN_BUDGET_S.
"""

from dataclasses import dataclass
from typing import Callable

from .config import FP16_BITS, ConfigError
from .isa.fields import ELEMS

ELEMS_MAX = ELEMS.max

# The Alveo U280 (AMD DS963 / UG1314): one core per card.
U280_HBM_CHANNELS = 32                  # HBM2: 2 stacks x 16 pseudo-channels
U280_HBM_CHANNEL_MB = 256               # 8 GB / 32 pseudo-channels
U280_DDR_BYTES = 2 * 16 * 2**30         # two DDR4 channels of 16 GB
U280_FF = 2_607_360                     # flip-flops of the XCU280 (resources.estimate.U280)
U280_RAM_BITS = 2_016 * 36 * 1024 + 960 * 288 * 1024   # BRAM36 + URAM bits
# A ring packet is one UDP/IPv4 frame (ring_frame_overhead_bytes counts its
# headers); the 100G MAC carries jumbo frames of 9,000 bytes of IP packet.
JUMBO_PAYLOAD_BYTES = 9_000 - 20 - 8    # minus the IPv4 and UDP headers
# The router's packet carries its source core in 8 bits (units/router/msgs.py
# `src: Bits8`, `check_router_params`): cores 0..254, 255 cores.
MAX_CORES = 255

# A run estimated to take longer than this is refused: a day of this
# machine (the longest run the project measures, 1.5B 128:256 timed
# exactly, takes an hour: docs/perf.md), so that a size which is legal for
# the hardware but not simulable here (a 10**9 ns memory latency: ~140 h)
# ends at once instead of running for days.
RUN_BUDGET_S = 24 * 3600
# A run estimated to take longer than this is announced on stderr first.
ANNOUNCE_S = 60
# A sweep's grid, refused past this before its points are enumerated.  Its
# points are one table (sweep.md) and one figure, which past a few thousand
# rows nobody reads (several sweeps read better); and each point is checked,
# looked up in the step cache and laid out (~2 ms of CPU) before it is
# timed, so that a 301 x 301 grid (90,601 points) spent minutes before its
# first word.  At the bound the estimate comes within ~5 s (ESTIMATE_MODELS)
# and the layouts after it take ~10 s on a busy 2-CPU machine; the cheapest
# point (tiny on one card, ~0.5 CPU s a step) makes ~35 min on 2 CPUs.
MAX_SWEEP_POINTS = 4096

# Local processes timing steps (--jobs).  Timing is CPU-bound, so past the
# CPU count the workers only take turns (each holding its own model, ~60 MB
# for gpt2-medium on 4 cards); a few times the count still lets a user
# oversubscribe a machine shared by time, and `--jobs 100000` is refused
# instead of starting a process for each of the run's steps.
MAX_JOBS_PER_CPU = 4


def cpu_count():
  """The CPUs --jobs' default and bound count (os.cpu_count(), at least 1)."""
  import os
  return os.cpu_count() or 1


def max_jobs():
  """The largest --jobs: MAX_JOBS_PER_CPU per CPU."""
  return MAX_JOBS_PER_CPU * cpu_count()


# What `dfx verilog` (and the RTL levels, which elaborate the same core)
# costs on this machine, measured with `/usr/bin/time dfx verilog --no-lint`
# (default config but d and l; 2 CPUs, 23 GiB RAM; 2026-12-07, idle), and
# fitted as a cost per MAC (d x l, the MFU's size):
#   d=16 l=4: 6.9 s, 266 MB;  d=32 l=16: 21.9 s, 681 MB
#   d=64 l=16: 42.0 s, 1,222 MB (the paper's core)
# Peak memory grows about VERILOG_MB_PER_MAC per MAC and time
# VERILOG_S_PER_MAC; a core whose translation would need more than
# MACHINE_RAM_MB, or longer than VERILOG_MAX_S, is refused.
VERILOG_MB_PER_MAC = 1.0
VERILOG_S_PER_MAC = 0.036
VERILOG_BASE_MB = 150
VERILOG_BASE_S = 5
MACHINE_RAM_MB = 24 * 1024
VERILOG_MAX_S = 3600


def verilog_cost( dfx ):
  """(seconds, MB) this machine needs to translate the core: the fit above."""
  macs = dfx.d * dfx.l
  return VERILOG_BASE_S + VERILOG_S_PER_MAC * macs, VERILOG_BASE_MB + VERILOG_MB_PER_MAC * macs


def max_verilog_macs():
  """The largest d x l that translates within MACHINE_RAM_MB and VERILOG_MAX_S."""
  return int( min( ( MACHINE_RAM_MB - VERILOG_BASE_MB ) / VERILOG_MB_PER_MAC,
                   ( VERILOG_MAX_S - VERILOG_BASE_S ) / VERILOG_S_PER_MAC ) )


@dataclass( frozen=True )
class Bound:
  """`field` may be at most `limit(config)`; `source` says why."""
  field: str
  limit: Callable
  limit_doc: str
  source: str

  def error( s, cfg ):
    v, lim = getattr( cfg, s.field ), s.limit( cfg )
    if v > lim:
      return f"{s.field}={show( v )} is above its bound {lim} ({s.limit_doc}: {s.source})"
    return None


def show( v ):
  """An integer for a message: a JSON big int (10**400) by its size, not
  400 digits."""
  text = str( v )
  return text if len( text ) <= 24 else f"{text[:4]}...({len( text )} digits)"


def _size( nbytes ):
  for unit, k in ( ( "GiB", 2**30 ), ( "MiB", 2**20 ), ( "KiB", 2**10 ) ):
    if nbytes >= k:
      return f"{nbytes / k:.2f} {unit}"
  return f"{nbytes} bytes"


def _join( errors, limit=3 ):
  more = len( errors ) - limit
  return "; ".join( errors[:limit] ) + ( f"; and {more} more" if more > 0 else "" )


def _pipe_bound( name ):
  return Bound( name, lambda c: U280_FF // ( c.d * FP16_BITS ),
                "latency <= U280 flip-flops / (d x 16)",
                "each stage of a d-wide FP16 pipeline is d x 16 flip-flops, and one "
                "pipeline must fit the card's 2,607,360" )


def _stamp_bound( name ):
  return Bound( name, lambda c: STAMP_MAX * 1000 // c.clock_mhz,
                f"{name.replace( '_ns', '' )} in cycles <= 2^32 - 1",
                "the rate queue's cycle stamps are 32 bits (lib/rate_queue.py StampT), so a "
                "memory's or link's latency is a 32-bit difference" )


STAMP_MAX = 2**32 - 1

# DFXConfig: checked on every config a user gives (--set, --cores, --grid).
DFX_BOUNDS = [
  Bound( "d", lambda c: ELEMS_MAX // c.vreg_entries, "d <= (2^19 - 1) / vreg_entries",
         "the ISA's 19-bit element counts (ELEMS_BITS) hold a vector filling the register "
         "file" ),
  Bound( "cores", lambda c: MAX_CORES, f"cores <= {MAX_CORES}",
         "the ring packet carries its source core in 8 bits (RingPacket.src)" ),
  Bound( "hbm_channels", lambda c: U280_HBM_CHANNELS, f"hbm_channels <= {U280_HBM_CHANNELS}",
         "the U280's HBM2 has 32 pseudo-channels, one DMA port each" ),
  Bound( "hbm_channel_mb", lambda c: U280_HBM_CHANNEL_MB,
         f"hbm_channel_mb <= {U280_HBM_CHANNEL_MB}",
         "a U280 pseudo-channel holds 256 MB (8 GB over 32)" ),
  Bound( "vreg_entries", lambda c: U280_RAM_BITS // ( c.d * FP16_BITS ),
         "vreg_entries <= U280 RAM bits / (d x 16)",
         "the register file is block RAM and URAM: 2,016 BRAM36 + 960 URAM" ),
  Bound( "mreg_entries", lambda c: U280_RAM_BITS // ( 2 * c.d * FP16_BITS ),
         "mreg_entries <= U280 RAM bits / (2 x d x 16)",
         "the two matrix-input buffers are on-chip RAM" ),
  Bound( "psum_entries", lambda c: U280_RAM_BITS // ( c.l * FP16_BITS ),
         "psum_entries <= U280 RAM bits / (l x 16)",
         "the partial-sum buffer is on-chip RAM" ),
  Bound( "weight_fifo_entries", lambda c: U280_RAM_BITS // ( c.d * c.l * FP16_BITS ),
         "weight_fifo_entries <= U280 RAM bits / (d x l x 16)",
         "each entry is a d x l FP16 tile of on-chip RAM" ),
  Bound( "inst_buffer_entries", lambda c: U280_RAM_BITS // 128,
         "inst_buffer_entries <= U280 RAM bits / 128",
         "each entry is a 128-bit instruction of on-chip RAM" ),
  Bound( "scoreboard_entries", lambda c: U280_FF // 128,
         "scoreboard_entries <= U280 flip-flops / 128",
         "each entry holds at least an instruction's 128 bits in flip-flops, compared "
         "every cycle" ),
  Bound( "mem_outstanding", lambda c: U280_RAM_BITS // ( c.hbm_channels * c.mem_word_bits ),
         "mem_outstanding <= U280 RAM bits / (hbm_channels x word bits)",
         "every outstanding read needs a response slot of one memory word per channel" ),
  Bound( "router_words", lambda c: JUMBO_PAYLOAD_BYTES // ( FP16_BITS // 8 ),
         f"router_words <= {JUMBO_PAYLOAD_BYTES // 2}",
         "a ring packet is one UDP/IPv4 frame: 9,000-byte jumbo MTU minus 28 bytes of headers" ),
] + [ _stamp_bound( n ) for n in ( "hbm_latency_ns", "ddr_latency_ns", "ring_latency_ns" )
] + [ _pipe_bound( n ) for n in ( "fp_add_latency", "fp_mul_latency", "fp_max_latency",
                                  "fp_recip_latency", "fp_rsqrt_latency",
                                  "fp_invpow2_latency", "sfu_rom_latency" ) ]

# Only for what translates or elaborates the RTL core (dfx verilog, the rtl
# and verilog levels).
RTL_BOUNDS = [
  Bound( "d", lambda c: max_verilog_macs() // c.l, "d x l <= the largest MFU that translates",
         f"translation measured on this machine: ~{VERILOG_MB_PER_MAC} MB and "
         f"~{VERILOG_S_PER_MAC} s per MAC, within {MACHINE_RAM_MB // 1024} GB and "
         f"{VERILOG_MAX_S // 60} min (docs/bounds.md)" ),
]


def _errors( bounds, cfg ):
  return [ e for e in ( b.error( cfg ) for b in bounds ) if e ]


def check_dfx( dfx, rtl=False ):
  """Raise ConfigError naming every DFXConfig bound `dfx` breaks (and, with
  `rtl`, the bounds of translating its RTL core), and the ISA's field widths."""
  from .isa import check_config_fits
  errors = _errors( ( RTL_BOUNDS if rtl else [] ) + DFX_BOUNDS, dfx )
  if errors:
    raise ConfigError( _join( errors ) )
  check_config_fits( dfx )


# -- the table in docs/bounds.md --------------------------------------------------------

BEGIN = "<!-- BEGIN GENERATED by pymtl_dfx.bounds.doc_table() -->"
END = "<!-- END GENERATED -->"

# Bounds checked elsewhere, by their own rule, listed for the table.
OTHER_BOUNDS = [
  ( "d, vreg_entries", "vreg_entries x d <= 2^19, vreg_entries <= 4096",
    "the ISA's field widths (`isa.check_config_fits`, docs/isa.md)" ),
  ( "hbm_channels x hbm_channel_mb", "<= 2^32 memory words",
    "the ISA's 32-bit external address (EXT_BITS)" ),
  ( "l", "l <= d", "an MPU output slice lies in one register entry (`limits`)" ),
  ( "n_head, head_dim", "head_dim (n_embd / n_head unless given) a multiple of d",
    "each head starts on a register entry (`limits`); so n_head <= n_embd / d in GPT-2 itself" ),
  ( "n_inner", "4 x n_embd", "GPT-2's MLP (`checkpoint.read_config` refuses others)" ),
  ( "compiled context (--in + --out, --new-tokens + prompt)", "<= 2^16 and <= n_positions",
    "the ISA's 16-bit pos field (POS_BITS) and wpe's rows (`limits`, `gpt2.decoding.context_problem`); "
    "n_positions itself only sizes wpe in DDR" ),
  ( "n_embd", "<= vreg_entries x d / 8", "the register file holds 8 vectors of n_embd" ),
  ( "n_layer", "layers x (weights + K/V per layer) <= HBM per card",
    "the compiled layout on N cores; 8 GB per U280" ),
  ( "vocab_size", "DDR contents <= 2^32 memory words and <= 32 GiB",
    "the ISA's 32-bit external address and the U280's two 16 GB DDR4 channels (`limits`, "
    "after the layout, which n_layer's bound keeps short)" ),
  ( "sweep points (the --grid product)", f"<= {MAX_SWEEP_POINTS:,}",
    "one table and one figure a person reads; each point is laid out and estimated (~1 ms) "
    "before any is timed (MAX_SWEEP_POINTS)" ),
  ( "--jobs (perf, report, sweep, demo)", f"<= {MAX_JOBS_PER_CPU} x the CPU count",
    "timing is CPU-bound: past the CPU count workers only take turns (MAX_JOBS_PER_CPU)" ),
  ( "a whole run (perf, sweep, report, generate at any level)", "estimated <= 24 h",
    "this machine's measured simulation rates (CORE_CYCLES_PER_CPU_S, FUNC_CORE_LAYER_STEP_S); "
    "announced on stderr from 1 min" ),
  ( "integers from config.json", "JSON integers of at most 64 bits",
    "1e6 or 1.5 are refused as non-integers (`GPT2Config`), 10**400 by the file reader "
    "(`files.load_json`)" ),
]


def doc_table():
  rows = [ ( f"`{b.field}`", b.limit_doc, b.source, f"{b.limit( _default() ):,}" )
           for b in DFX_BOUNDS + RTL_BOUNDS ]
  rows += [ ( f"`{f}`", lim, src, "" ) for f, lim, src in OTHER_BOUNDS ]
  lines = [ "| size | bound | where it comes from | at the defaults |", "|---|---|---|---|" ]
  lines += [ "| " + " | ".join( r ) + " |" for r in rows ]
  return "\n".join( lines ) + "\n"


def _default():
  from .config import DFXConfig
  return DFXConfig()


def update( path ):
  from .atomic import write_text
  text = open( path ).read()
  head, _, rest = text.partition( BEGIN )
  _, _, tail = rest.partition( END )
  write_text( path, head + BEGIN + "\n" + doc_table() + END + tail )


# -- estimates of long runs --------------------------------------------------------------

def duration( s ):
  """`s` seconds in words, as the estimates print them: s, min or h."""
  if s < 90:
    return f"{s:.0f} s"
  if s < 5400:
    return f"{s / 60:.0f} min"
  return f"{s / 3600:.1f} h"


def announce( prog, seconds, what, enabled=True ):
  """One line on stderr before a run estimated to take ANNOUNCE_S or more
  (not with --json: the caller passes enabled=False); ConfigError for one
  estimated past RUN_BUDGET_S.  A notice of a slow run, not progress: it
  is printed whether or not stderr is a terminal, so that a log says why
  the run took long."""
  import sys
  if seconds > RUN_BUDGET_S:
    raise ConfigError( f"estimated ~{duration( seconds )} ({what}), above the "
                       f"{RUN_BUDGET_S // 3600} h a run may take on this machine "
                       f"(bounds.RUN_BUDGET_S); use a smaller size" )
  if enabled and seconds >= ANNOUNCE_S:
    print( f"{prog}: estimate: ~{duration( seconds )} ({what})", file=sys.stderr, flush=True )
