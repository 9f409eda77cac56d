"""The DMA and the register file manager of the same level connected on
their shared contract (`dma.msgs`: rf_wr, rf_rd -> rf_rd_resp).

test_dma_stream checks the DMA against golden rf_wr / rf_rd messages and
test_rfm_stream checks the manager against its own; neither shows that the
two agree with each other (message layout, entry numbering, timing of a
write reaching the storage before a later rf_rd reads it).  Here the DUT is
[DMA + HBM + DDR + manager] in one component (one Verilated model under
--test-verilog) and data goes memory -> manager -> memory: the final
memories, read back word by word through the host ports, must be what
`dma_op` leaves with a `VectorRegisterFile` standing for the manager.  The
manager's engine and router ports face empty sources and strict sinks (a
stray message fails).  At RTL the CL runs the same program and the done
arrival cycles must match.
"""

import numpy as np
from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import DmaOp as D, encode, make, op_of
from pymtl_dfx.testing import select_or_skip
from pymtl_dfx.testing.harness import _plain_opts, elaborate_for, run_until_done, translating
from pymtl_dfx.testing.levels import python_rtl, run_matching_cl
from pymtl_dfx.testing.src_sink import received
from pymtl_dfx.hdl.wide_ports import WidePortsRTL
from pymtl_dfx.units.control.msgs import DoneMsg, InstMsg
from pymtl_dfx.units.dma.msgs import mk_dma_types
from pymtl_dfx.units.dma.semantics import dma_op
from pymtl_dfx.testing.dma_top import DMAWithMemories
from pymtl_dfx.units.memory.ports import mk_host_types
from pymtl_dfx.units.regfile.ports import DMA_SIDE, rfm_ports
from pymtl_dfx.units.regfile.models import MODELS as RFMS
from pymtl_dfx.units.regfile.state import VectorRegisterFile

from test_dma_stream import DMAS, MEMS, DMAHarness, busy_words, host_msgs, random_images

# test_dma_stream's d=32 config (an entry is one word, a tile two) with
# test_rfm_stream's small manager sizes, so the Verilator build stays short
CFG = DFXConfig( d=32, l=2, hbm_channels=4, mem_outstanding=32, vreg_entries=64,
                 mreg_entries=16, psum_entries=2, router_words=4 )
DEPTH = 64       # memory rows per channel: 256 words
TR_ADDR = 160    # the transposed writes' region (2 row chunks: 64 words)


def rfm_side_ports( cfg ):
  """The manager's ports other than the DMA's: port -> (is_recv, Type)."""
  return { p: v for p, v in rfm_ports( cfg ).items() if p not in DMA_SIDE }


class DMAWithRFM( Component ):
  """DMAWithMemories and the manager of one level, DMA <-> manager inside;
  the DMA's inst/done/w, the host ports and the manager's other ports out."""

  def construct( s, level, cfg, depth ):
    T = mk_dma_types( cfg )
    s.top = DMAWithMemories( cfg, DMAS[ level ], MEMS[ level ], depth )
    s.rfm = RFMS[ level ]( cfg )
    s.rfm.core_id //= 0          # its ring position (no sync runs here)
    s.top.rf_wr //= s.rfm.rf_wr
    s.top.rf_rd //= s.rfm.rf_rd
    s.rfm.rf_rd_resp //= s.top.rf_rd_resp

    s.inst = RecvIfcRTL( InstMsg )
    s.done = SendIfcRTL( DoneMsg )
    s.w = SendIfcRTL( T["W"] )
    s.inst //= s.top.inst
    s.done //= s.top.done
    s.w //= s.top.w
    for m in ( "hbm", "ddr" ):
      H = mk_host_types( T[m] )
      setattr( s, f"{m}_host_req", RecvIfcRTL( H["Req"] ) )
      setattr( s, f"{m}_host_resp", SendIfcRTL( H["Resp"] ) )
      connect( getattr( s, f"{m}_host_req" ), getattr( s.top, f"{m}_host_req" ) )
      connect( getattr( s, f"{m}_host_resp" ), getattr( s.top, f"{m}_host_resp" ) )
    for p, ( is_recv, Type ) in rfm_side_ports( cfg ).items():
      setattr( s, p, ( RecvIfcRTL if is_recv else SendIfcRTL )( Type ) )
      connect( getattr( s, p ), getattr( s.rfm, p ) )

  def line_trace( s ):
    return f"{s.top.line_trace()} | wr:{s.rfm.rf_wr} rd:{s.rfm.rf_rd} resp:{s.rfm.rf_rd_resp}"


def program( cfg, rng ):
  """Reads into the register file, then plain, transposed and DDR writes
  of exactly the entries just read.  Returns (insts, hbm0, ddr0)."""
  d = cfg.d
  hbm0, ddr0 = random_images( CFG, DEPTH, rng, 64, 64 )
  insts = [
    make( D.DDR_READ, rf=3, addr=7, vecs=5 ),                  # DDR -> v3..v7
    make( D.HBM_READ, rf=20, addr=13, vecs=6 ),                # HBM -> v20..v25
    make( D.HBM_WRITE, rf=4, addr=101, vecs=4 ),               # v4..v7 -> HBM
    make( D.HBM_WRITE, rf=21, addr=TR_ADDR, vecs=1, tr=1, pos=3 ),
    make( D.HBM_WRITE, rf=7, addr=TR_ADDR, vecs=1, tr=1, pos=d + 2 ),
    make( D.DDR_WRITE, rf=20, addr=90, vecs=6 ),               # v20..v25 -> DDR
  ]
  return insts, hbm0, ddr0


def golden( cfg, insts, hbm0, ddr0 ):
  """The memories `dma_op` leaves, the manager's register file starting at
  zero (its reset value; the program only writes back entries it read)."""
  hbm, ddr = hbm0.copy(), ddr0.copy()
  rf = VectorRegisterFile( cfg.vreg_entries, cfg.d )
  for inst in insts:
    assert dma_op( op_of( inst ), inst, rf, hbm, ddr, cfg.l ) is None
  return hbm, ddr


def run_program( level, cmdline_opts, insts, hbm0, ddr0, max_delay, seed, changed_only=False ):
  T = mk_dma_types( CFG )
  hbm1, ddr1 = golden( CFG, insts, hbm0, ddr0 )
  sources = { "inst": ( InstMsg, [ InstMsg( encode( i ) ) for i in insts ], [ 1 ] * len( insts ) ) }
  sinks = { "done": ( DoneMsg, [ DoneMsg( 1 ) ] * len( insts ) ), "w": ( T["W"], [] ) }
  for p, ( is_recv, Type ) in rfm_side_ports( CFG ).items():
    if is_recv:
      sources[ p ] = ( Type, [], [] )
    else:
      sinks[ p ] = ( Type, [] )
  n_load = {}
  for m, m0, m1 in ( ( "hbm", hbm0, hbm1 ), ( "ddr", ddr0, ddr1 ) ):
    H = mk_host_types( T[m] )
    reqs, phases, resps, n_load[m] = host_msgs( H, m0, m1, changed_only, busy_words( DEPTH ) )
    sources[ f"{m}_host_req" ] = ( H["Req"], reqs, phases )
    sinks[ f"{m}_host_resp" ] = ( H["Resp"], resps )
  opts = _plain_opts( cmdline_opts )
  dut = DMAWithRFM( level, CFG, DEPTH )
  if translating( level, opts ):
    dut = WidePortsRTL( dut )
  th = elaborate_for( DMAHarness( dut, sources, sinks, n_load, len( insts ), max_delay, seed ),
                      level, opts )
  n = sum( len( m ) for _, m in sinks.values() )
  cycles = run_until_done( th, 2000 + 20 * n * ( max_delay + 1 ), f"DMA + RFM at {level}",
                           lambda: received( th.sinks ) )
  return cycles, list( th.sinks["done"].arrivals )


def test_memory_to_rfm_to_memory( level, cmdline_opts ):
  select_or_skip( level, **DMAS )
  insts, hbm0, ddr0 = program( CFG, np.random.default_rng( 5 ) )
  # pymtl3's Python RTL simulation is slow: read back only the changed words
  # there (every word is read back at fl, cl and in Verilator)
  sample = python_rtl( level, cmdline_opts )
  run_matching_cl( level, cmdline_opts, lambda lv, opts: run_program(
    lv, opts, insts, hbm0, ddr0, 3, 9, sample ) )
