"""Liveness of a step: the cycle limit every simulation of a step derives
from its programs, and the report it gives when a step hits it.  The host
(every level) and the performance model share both, so a deadlock is a
clear error naming each core's stuck instruction, never a hang."""

from ..isa import Kind, format_inst, op_of
from ..lib.arith import ceil_div
from ..units.control.msgs import UNITS


class StepTimeout( RuntimeError ):
  pass


def cycle_limit( cfg, specs, progs ):
  """A generous bound from the work in the programs (per core, decoded
  instructions) and the units' latencies: every entry, tile and packet a
  few cycles plus the longest wait one can cause (a VPU chunk waits for the
  accumulator, an MPU row chunk for the partial-sum adder), every
  instruction a memory or ring round trip and a trip through the deepest
  pipelines (MPU tile, VPU element-wise, GELU with `vpu_gelu`, and tree),
  so that any legal latency setting finishes (`bounds` bounds the latency
  fields)."""
  lat = max( specs["hbm"].latency, specs["ddr"].latency, cfg.ring_latency_cycles )
  item = 4 + max( cfg.vpu_accum_latency, cfg.fp_add_latency )
  pipe = cfg.mpu_tile_latency + cfg.vpu_elementwise_latency + cfg.vpu_tree_latency
  if cfg.vpu_gelu:
    pipe += cfg.vpu_gelu_latency
  work = 0
  for prog in progs:
    n = 0
    for inst in prog:
      kind, op = Kind( int( inst.hdr.kind ) ), op_of( inst )
      if kind == Kind.DMA:
        n += int( inst.vecs ) * cfg.entry_words
      elif kind == Kind.ROUTER:
        n += cfg.cores * int( inst.len ) // cfg.router_words + cfg.cores * lat
      elif op.on_vpu:
        n += ceil_div( int( inst.len ), cfg.d )
      else:
        n += ceil_div( int( inst.rows ), cfg.d ) * ceil_div( int( inst.cols ), cfg.l )
    work = max( work, item * n + ( 2 * lat + pipe + 100 ) * len( prog ) )
  return work + 10_000


def stuck_report( what, limit, tracks, inst_at, traces, left ):
  """`what` did not finish in `limit` cycles: per core, its units' state
  (`traces[i]`), its oldest incomplete instruction (`inst_at(i, pc)`, the
  decoded instruction), instructions issued/completed per unit and the
  program words not yet taken (`left[i]`)."""
  parts = []
  for i, t in enumerate( tracks ):
    if t.oldest is None:
      where = "all instructions completed"
    else:
      where = f"oldest incomplete pc {t.oldest}: {format_inst( inst_at( i, t.oldest ) )}"
    inflight = ", ".join( f"{u} {t.issued[k]}/{t.retired[k]}" for k, u in enumerate( UNITS ) )
    parts.append( f"core {i}: {traces[i]}; {where}; issued/done {inflight}; "
                  f"{left[i]} words not yet taken" )
  return f"{what} did not finish in {limit} cycles; " + "; ".join( parts )


def top_stuck_report( what, limit, top, tracks, inst_at, left=None ):
  """`stuck_report` for the host's `HostTop`: each core's line trace ("-"
  in a Verilated appliance, which has no inner objects) and, unless the
  caller streams the words itself (`left`), the words still in its source."""
  traces = []
  for i in range( len( tracks ) ):
    try:
      traces.append( top.dut.cores[i].line_trace().strip() )
    except Exception:
      traces.append( "-" )
  if left is None:
    left = [ len( top.src[i].q ) for i in range( len( tracks ) ) ]
  return stuck_report( what, limit, tracks, inst_at, traces, left )
