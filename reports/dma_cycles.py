"""DMA cycles at the paper's config (d=64, l=16, 32 HBM channels), from the
CL DMA with CL memories (DMACL + MemoryCL, cycle-exact with DMARTL +
MemoryRTL: tests/units/dma/test_dma_stream.py asserts it).

  python reports/dma_cycles.py [--skip-matrix] [--rtl]

Each row runs one instruction alone: the command source and every sink are
always ready (rf_rd_resp offers each entry at once), the memories hold
zeros (timing does not depend on the data; the tests check the data).
cycles: from the cycle the instruction is accepted to the cycle its done
arrives.  first: cycles to the first output (reads).  per unit: the
steady gap between outputs (last - first) / (units - 1).  B/cycle: the
instruction's FP16 payload (a transposed write moves one element per word
write) over its cycles, against HBM's peak of hbm_channels x 64 B (DDR
rows in parentheses).  RTL: with --rtl, the same run of DMARTL + MemoryRTL
in Verilator (asserted equal to the CL's cycles and output stamps).  The table goes to stdout and build/reports/dma_cycles.md.
"""

import argparse
import os
import pathlib
import sys
import time

ROOT = pathlib.Path( __file__ ).resolve().parent.parent
sys.path.insert( 0, str( ROOT ) )

from pymtl3 import *  # noqa: E402,F403
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL  # noqa: E402

from pymtl_dfx.atomic import write_text  # noqa: E402
from pymtl_dfx.config import FP16_BYTES, DFXConfig  # noqa: E402
from pymtl_dfx.isa import DmaOp as D, encode, make  # noqa: E402
from pymtl_dfx.testing.harness import _plain_opts, elaborate_for, run_until_done  # noqa: E402
from pymtl_dfx.hdl.wide_ports import WidePortsRTL, connect_stream  # noqa: E402
from pymtl_dfx.testing.src_sink import DelaySourceRTL  # noqa: E402
from pymtl_dfx.units.control.msgs import DoneMsg, InstMsg  # noqa: E402
from pymtl_dfx.units.dma.DMACL import DMACL  # noqa: E402
from pymtl_dfx.units.dma.msgs import VregT, mk_dma_types  # noqa: E402
from pymtl_dfx.units.dma.streams import geometry  # noqa: E402
from pymtl_dfx.testing.dma_top import DMAWithMemories  # noqa: E402
from pymtl_dfx.units.dma.DMARTL import DMARTL  # noqa: E402
from pymtl_dfx.units.memory.MemoryCL import MemoryCL  # noqa: E402
from pymtl_dfx.units.memory.MemoryRTL import MemoryRTL  # noqa: E402
from pymtl_dfx.units.memory.ports import mk_host_types  # noqa: E402

DEPTH = 16      # rows per channel: addresses alias into them (contents are not the point)
MODELS = { "cl": ( DMACL, MemoryCL ), "rtl": ( DMARTL, MemoryRTL ) }


class CountSink( Component ):
  """Always ready; stamps each arrival (the cycle count CheckSinkRTL uses)."""

  def construct( s, Type, n ):
    s.recv = RecvIfcRTL( Type )
    s.n = n
    s.arrivals = []
    s.cycle = 0

    @update_ff
    def up_count_sink():
      if s.reset:
        s.cycle = 0
        s.arrivals = []
        s.recv.rdy <<= 0
        return
      s.cycle += 1
      if s.recv.val & s.recv.rdy:
        s.arrivals.append( s.cycle )
      s.recv.rdy <<= 1

  def done( s ):
    return len( s.arrivals ) >= s.n

  def line_trace( s ):
    return f"{s.recv}"


class Bench( Component ):

  def construct( s, cfg, inst, n_out, port, level ):
    T = mk_dma_types( cfg )
    dut = DMAWithMemories( cfg, *MODELS[ level ], DEPTH )
    s.dut = WidePortsRTL( dut ) if level == "rtl" else dut
    vecs = int( inst.vecs )
    s.src_inst = DelaySourceRTL( InstMsg, [ InstMsg( encode( inst ) ) ] )
    writes = inst.hdr.op in ( D.HBM_WRITE, D.DDR_WRITE )
    s.src_rd = DelaySourceRTL( T["Entry"], [ T["Entry"]() for _ in range( vecs if writes else 0 ) ] )
    connect_stream( s.src_inst.send, s.dut.inst )
    connect_stream( s.src_rd.send, s.dut.rf_rd_resp )
    counts = { "done": 1, "rf_wr": 0, "w": 0, "rf_rd": vecs if writes else 0 }
    if port:
      counts[ port ] = n_out
    types = { "done": DoneMsg, "rf_wr": T["RFWrite"], "w": T["W"], "rf_rd": VregT }
    s.sinks = {}
    for p, n in counts.items():
      k = CountSink( types[p], n )
      setattr( s, f"sink_{p}", k )
      connect_stream( k.recv, getattr( s.dut, p ) )
      s.sinks[p] = k
    for m in ( "hbm", "ddr" ):
      H = mk_host_types( T[m] )
      h_src = DelaySourceRTL( H["Req"], [] )
      h_sink = CountSink( H["Resp"], 0 )
      setattr( s, f"src_{m}_host", h_src )
      setattr( s, f"sink_{m}_host", h_sink )
      connect_stream( h_src.send, getattr( s.dut, f"{m}_host_req" ) )
      connect_stream( h_sink.recv, getattr( s.dut, f"{m}_host_resp" ) )

  def done( s ):
    return all( k.done() for k in s.sinks.values() )

  def line_trace( s ):
    return s.dut.line_trace()


def run( cfg, inst, n_out=0, port=None, level="cl" ):
  """(cycles, output arrival stamps); level "rtl" runs DMARTL + MemoryRTL in
  Verilator."""
  opts = _plain_opts( { "test_verilog": "zeros" } if level == "rtl" else {} )
  th = elaborate_for( Bench( cfg, inst, n_out, port, level ), level, opts )
  run_until_done( th, 100_000 + 10 * n_out, "DMA", lambda: "" )
  done = th.sinks["done"].arrivals[0]
  start = 1        # the source offers the instruction in cycle 1 and it is taken
  out = th.sinks[ port ].arrivals if port else []
  return done - start, out


def rows( cfg, skip_matrix, rtl_max ):
  d, l = cfg.d, cfg.l
  hd = 64                                 # GPT-2's head width
  peak = cfg.hbm_bytes_per_cycle
  out = []

  def add( what, inst, units, port, elems, on_hbm=True ):
    t0 = time.time()
    cycles, arr = run( cfg, inst, units, port )
    rtl = ""
    if units <= rtl_max:
      r_cycles, r_arr = run( cfg, inst, units, port, "rtl" )
      assert ( r_cycles, r_arr ) == ( cycles, arr ), f"{what}: RTL {r_cycles} != CL {cycles}"
      rtl = r_cycles
    first = ( arr[0] - 1 ) if arr else None
    gap = ( arr[-1] - arr[0] ) / ( len( arr ) - 1 ) if len( arr ) > 1 else None
    bpc = elems * FP16_BYTES / cycles
    out.append( ( what, cycles, rtl, first, gap, f"{bpc:,.0f}" if on_hbm else f"({bpc:,.0f} DDR)",
                  f"{bpc / peak:.0%}" if on_hbm else "", time.time() - t0 ) )

  for n in ( 1, 8, 64, 512 ):
    add( f"hbm_read mpu, {n} tile{'s' if n > 1 else ''} of {d}x{l} (1 x {n} grid)",
         make( D.HBM_READ, mpu=1, addr=3, vecs=n * l, rows=d ), n, "w", n * d * l )
  if not skip_matrix:
    tiles = ( 1024 // d ) * ( 4096 // l )
    add( f"hbm_read mpu, 1024 x 4096 matrix ({tiles} tiles, row-major grid)",
         make( D.HBM_READ, mpu=1, addr=0, vecs=tiles * l, rows=1024 ), tiles, "w", tiles * d * l )
  T = 1024
  kt = ( hd // d ) * ( T // l )
  add( f"K^T read: {hd} x {T} tokens (hbm_read mpu cmajor, {kt} tiles)",
       make( D.HBM_READ, mpu=1, addr=3, vecs=kt * l, rows=hd, cmajor=1 ), kt, "w", kt * d * l )
  vt = ( T // d ) * ( hd // l )
  add( f"V read: {T} tokens x {hd} (hbm_read mpu, {vt} tiles)",
       make( D.HBM_READ, mpu=1, addr=3, vecs=vt * l, rows=T ), vt, "w", vt * d * l )
  for T in ( 64, 1024 ):
    add( f"K/V read: {T} tokens x {hd} (hbm_read, {T * hd // d} entries)",
         make( D.HBM_READ, rf=0, addr=5, vecs=T * hd // d ), T * hd // d, "rf_wr", T * hd )
  add( f"K row write: 1 token x {hd} (hbm_write)",
       make( D.HBM_WRITE, rf=0, addr=5, vecs=hd // d ), 0, None, hd )
  add( f"V row write, transposed: 1 token x {hd} (hbm_write tr)",
       make( D.HBM_WRITE, rf=0, addr=64, vecs=hd // d, tr=1, pos=37 ), 0, None, hd )
  add( "V rows, transposed: 1 token x 768 (12 heads, one hbm_write tr)",
       make( D.HBM_WRITE, rf=0, addr=64, vecs=768 // d, tr=1, pos=37 ), 0, None, 768 )
  for n in ( 1, 12, 48 ):
    add( f"ddr_read, {n} entr{'ies' if n > 1 else 'y'}",
         make( D.DDR_READ, rf=0, addr=1, vecs=n ), n, "rf_wr", n * d, on_hbm=False )
  add( "ddr_write, 12 entries", make( D.DDR_WRITE, rf=0, addr=1, vecs=12 ), 0, None, 12 * d,
       on_hbm=False )
  return out


def table( cfg, skip_matrix=False, rtl_max=-1 ):
  g = geometry( cfg )
  lines = [
    f"config: d={cfg.d}, l={cfg.l}, {cfg.hbm_channels} HBM channels x {cfg.mem_word_bytes} B "
    f"(peak {cfg.hbm_bytes_per_cycle:,} B/cycle), HBM latency {cfg.hbm_latency_cycles} cycles, "
    f"DDR {cfg.ddr_channels} ports at {cfg.ddr_words_per_channel_cycle} words/cycle, latency "
    f"{cfg.ddr_latency_cycles}; entry {g.entry_words} words, tile {g.tile_words} words",
    "",
    "| instruction | cycles | RTL | first out | cycles/unit | B/cycle | of HBM peak | s |",
    "|---|--:|--:|--:|--:|--:|--:|--:|",
  ]
  for what, cycles, rtl, first, gap, bpc, frac, secs in rows( cfg, skip_matrix, rtl_max ):
    lines.append( f"| {what} | {cycles} | {rtl} | {first if first is not None else ''} | "
                  f"{f'{gap:.2f}' if gap is not None else ''} | {bpc} | {frac} | {secs:.1f} |" )
  return "\n".join( lines )


if __name__ == "__main__":
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--skip-matrix", action="store_true",
                   help="leave out the 4,096-tile matrix (the slowest row)" )
  ap.add_argument( "--rtl", action="store_true",
                   help="also run DMARTL + MemoryRTL in Verilator on the rows of at most "
                        "--rtl-max-units units (one build of about 2 minutes here), asserting "
                        "the CL's cycles" )
  ap.add_argument( "--rtl-max-units", type=int, default=64,
                   help="with --rtl: the largest row run in Verilator (4096 includes the "
                        "1024 x 4096 matrix)" )
  a = ap.parse_args()
  out = ROOT / "build" / "reports"
  vdir = out / "verilator"
  vdir.mkdir( parents=True, exist_ok=True )
  os.chdir( vdir )       # pymtl3 writes the translated model to the cwd
  text = table( DFXConfig(), a.skip_matrix, a.rtl_max_units if a.rtl else -1 )
  write_text( out / "dma_cycles.md", text + "\n" )
  print( text )
