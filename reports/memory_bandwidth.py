"""Achieved memory bandwidth of streaming reads on HBM and DDR, from the CL
memory (MemoryCL, cycle-exact with MemoryRTL; --rtl also runs MemoryRTL in
Verilator), against the spec's peak, for the default DFXConfig.

  python reports/memory_bandwidth.py [--reads N] [--rtl] [--few-outstanding K]

Each channel gets N reads of random rows, one offered per cycle, and an
always-ready receiver (after the host has loaded the rows).  words/cycle:
the responses after each channel's first, over the cycles from the first
response to the last (N words take N-1 gaps; counting the first word too
would read slightly above the rate).  Latency: the first response's cycle
minus its request's acceptance cycle.  The last row repeats HBM with only K outstanding requests
per channel (fewer than the latency): then a channel moves K words per
latency + 1 cycles.  "s" is wall time including the
Verilator build.  The table goes to stdout and build/reports/memory_bandwidth.md.
"""

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path( __file__ ).resolve().parent.parent
sys.path.insert( 0, str( ROOT ) )

from pymtl_dfx.atomic import write_text  # noqa: E402
from pymtl_dfx.config import DFXConfig  # noqa: E402
from pymtl_dfx.testing.memory_harness import run_memory, streaming_reads  # noqa: E402
from pymtl_dfx.units.memory.msgs import memory_spec  # noqa: E402

DEPTH = 16      # rows per channel: the reads alias into them (contents are not the point)


def measure( spec, n, level="cl", opts=None ):
  host, dma = streaming_reads( spec, DEPTH, n, seed=1 )
  t0 = time.time()
  r = run_memory( level, spec, DEPTH, host, dma, opts )
  secs = time.time() - t0
  arrived = [ t for c in range( spec.channels ) for t in r.arrived[c] ]
  span = max( arrived ) - min( arrived )
  latency = min( r.arrived[c][0] - r.sent[c][0] for c in range( spec.channels ) )
  return ( len( arrived ) - spec.channels ) / span, latency, r.cycles, secs


def table( cfg, n, rtl, few ):
  few_cfg = cfg.replace( mem_outstanding=few )
  rows = [ ( "HBM", memory_spec( cfg, "hbm" ), cfg.hbm_bytes_per_cycle ),
           ( "DDR", memory_spec( cfg, "ddr" ), cfg.ddr_bytes_per_cycle ),
           ( f"HBM, {few} outstanding", memory_spec( few_cfg, "hbm" ),
             few_cfg.hbm_bytes_per_cycle ) ]
  lines = [
    f"DFXConfig defaults: {cfg.clock_mhz} MHz; HBM {cfg.hbm_channels} x {cfg.hbm_channel_bits} bit, "
    f"latency {cfg.hbm_latency_ns:g} ns; DDR {cfg.ddr_gbps:g} GB/s, latency "
    f"{cfg.ddr_latency_ns:g} ns (public measurements, docs/perf.md); "
    f"{cfg.mem_outstanding} outstanding requests per channel; {n} reads per channel",
    "",
    "| memory | level | channels | rate/channel (words/cycle) | latency (cycles) | "
    "words/cycle | bytes/cycle | peak bytes/cycle | achieved/peak | sim cycles | s |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ]
  for name, spec, peak in rows:
    for level in ( "cl", "rtl" ) if rtl else ( "cl", ):
      opts = { "test_verilog": "zeros" } if level == "rtl" else None
      wpc, lat, cycles, secs = measure( spec, n, level, opts )
      lines.append( f"| {name} | {level}{' (Verilator)' if opts else ''} | {spec.channels} | "
                    f"{spec.words_per_cycle} | {lat} | {wpc:.3f} | {wpc * cfg.mem_word_bytes:.1f} | "
                    f"{peak:g} | {wpc * cfg.mem_word_bytes / peak:.1%} | {cycles} | {secs:.1f} |" )
  return "\n".join( lines )


if __name__ == "__main__":
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--reads", type=int, default=1000, help="reads per channel" )
  ap.add_argument( "--rtl", action="store_true", help="also run MemoryRTL in Verilator" )
  ap.add_argument( "--few-outstanding", type=int, default=16,
                   help="outstanding requests per channel in the last row" )
  a = ap.parse_args()
  out = ROOT / "build" / "reports"
  out.mkdir( parents=True, exist_ok=True )
  import os
  os.chdir( out )          # pymtl3 writes its Verilog and Verilator objects here
  text = table( DFXConfig(), a.reads, a.rtl, a.few_outstanding )
  write_text( out / "memory_bandwidth.md", text + "\n" )
  print( text )
