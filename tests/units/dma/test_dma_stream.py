"""The DMA behind its ports (DMAFL, DMACL, DMARTL) with HBM and DDR
memory models of the same level, against `dma_op` applied in order.

The DUT is [DMA + HBM memory + DDR memory] in one component, so under
--test-verilog the memories are inside the Verilated model.  A run has
three phases: the host port loads both memories, the instructions run
(rf_rd_resp gives the entries the register file holds at that point), the
host port reads both memories back.  rf_wr, w, rf_rd and the read-back are
checked message by message against the golden, bit for bit; at RTL the CL
runs too and every message's arrival cycle must match.
"""

import bisect

import numpy as np
import pytest
from pymtl3 import *

from pymtl_dfx import numerics as N
from pymtl_dfx.lib.tiling import to_grid
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import DmaOp as D, encode, make, op_of
from pymtl_dfx.testing import select_or_skip
from pymtl_dfx.testing.harness import _plain_opts, elaborate_for, run_until_done, translating
from pymtl_dfx.testing.levels import python_rtl, run_matching_cl
from pymtl_dfx.testing.src_sink import CheckSinkRTL, DelaySourceRTL, received
from pymtl_dfx.hdl.wide_ports import WidePortsRTL, connect_stream
from pymtl_dfx.units.control.msgs import DoneMsg, InstMsg
from pymtl_dfx.units.dma.streams import join_elems
from pymtl_dfx.units.memory.msgs import all_elems
from pymtl_dfx.units.dma.models import MODELS as DMAS
from pymtl_dfx.units.dma.msgs import DMAConfigError, VregT, mk_dma_types
from pymtl_dfx.units.dma.semantics import dma_op
from pymtl_dfx.testing.dma_top import DMAWithMemories
from pymtl_dfx.units.memory.models import MODELS as MEMS
from pymtl_dfx.units.memory.ports import mk_host_types
from pymtl_dfx.units.regfile.state import VectorRegisterFile

F16 = np.float16
RF_ENTRIES = 64


def busy_words( depth ):
  """The top 8 words (no instruction touches them), each read 3 times by
  the host while the program runs."""
  return [ depth * 4 - 8 + k for k in ( 3, 0, 5, 1, 6, 2, 7, 4 ) * 3 ]


def _before( sink, cycle ):
  return bisect.bisect_left( sink.arrivals, cycle )


class DMAHarness( Component ):

  def construct( s, dut, sources, sinks, n_load, n_done, max_delay, seed ):
    """sources: port -> (Type, msgs, phases); sinks: port -> (Type, msgs).
    Phase 0 runs first; phase 1 once both host ports acknowledged their
    n_load[m] loads; phase 2 once every done has arrived."""
    s.dut = dut
    s.sinks = {}
    s.srcs = {}

    def gate( phase, cycle ):
      if phase == 0:
        return True
      loaded = all( _before( s.sinks[ f"{m}_host_resp" ], cycle ) >= n
                    for m, n in n_load.items() )
      if phase == 1:
        return loaded
      return loaded and _before( s.sinks["done"], cycle ) >= n_done

    for i, ( port, ( Type, msgs ) ) in enumerate( sorted( sinks.items() ) ):
      sink = CheckSinkRTL( Type, msgs, 0 if port == "done" else max_delay, seed + 2 * i + 1,
                           strict=True )
      setattr( s, f"sink_{port}", sink )
      connect_stream( sink.recv, getattr( dut, port ) )
      s.sinks[ port ] = sink
    for i, ( port, ( Type, msgs, phases ) ) in enumerate( sorted( sources.items() ) ):
      src = DelaySourceRTL( Type, msgs, max_delay if port == "rf_rd_resp" else 0,
                            seed + 2 * i, gate=gate, phases=phases )
      setattr( s, f"src_{port}", src )
      connect_stream( src.send, getattr( dut, port ) )
      s.srcs[ port ] = src

  def done( s ):
    return all( x.done() for x in s.srcs.values() ) and all( x.done() for x in s.sinks.values() )

  def line_trace( s ):
    return s.dut.line_trace()


# ---------------------------------------------------------------------------
# Golden: dma_op in order on numpy arrays -> every port's expected messages

def golden_streams( cfg, insts, hbm0, ddr0, rf0 ):
  T = mk_dma_types( cfg )
  hbm, ddr = hbm0.copy(), ddr0.copy()
  rf = VectorRegisterFile( RF_ENTRIES, cfg.d )
  rf.write( 0, rf0 )
  rf_wr, w, rf_rd, rd_resp = [], [], [], []
  l = cfg.l
  bits = lambda a: [ int( x ) for x in N.bits( a.reshape( -1 ) ) ]
  for inst in insts:
    op = op_of( inst )
    rfi, vecs = int( inst.rf ), int( inst.vecs )
    if op in ( D.HBM_WRITE, D.DDR_WRITE ):
      rf_rd += [ VregT( rfi + i ) for i in range( vecs ) ]
      rd_resp += [ T["Entry"]( [ Bits16( x ) for x in bits( rf.read_entries( rfi + i, 1 ) ) ] )
                   for i in range( vecs ) ]
    block = dma_op( op, inst, rf, hbm, ddr, l, cfg.psum_entries, cfg.mpu_raster_walk )
    if block is not None:
      for t in range( vecs // l ):
        w.append( T["W"]( [ Bits16( x ) for x in bits( block[ t * l:( t + 1 ) * l ] ) ] ) )
    elif op in ( D.HBM_READ, D.DDR_READ ):
      for i in range( vecs ):
        rf_wr.append( T["RFWrite"]( rfi + i, [ Bits16( x ) for x in
                                               bits( rf.read_entries( rfi + i, 1 ) ) ] ) )
  return dict( rf_wr=rf_wr, w=w, rf_rd=rf_rd, rd_resp=rd_resp, hbm=hbm, ddr=ddr )


def host_msgs( H, mem0, mem1, changed_only=False, busy=() ):
  """Loads of mem0's nonzero words (phase 0); reads of the words `busy`
  while the instructions run (phase 1: they compete with the DMA for the
  channels, and a host response at a channel's head holds the DMA's behind
  it, so the host sink's random delays become random memory delays); then
  reads of every word (phase 2; only the words that changed with
  `changed_only`) expecting mem1.  Returns (reqs, phases, expected
  responses, number of loads)."""
  Req, Resp = H["Req"], H["Resp"]
  reqs, phases, resps = [], [], []
  words = lambda a, k: join_elems( [ int( x ) for x in N.bits( a[k] ) ] )
  for k in range( mem0.shape[0] ):
    if N.bits( mem0[k] ).any():
      reqs.append( Req( 1, k, all_elems( mem0.shape[1] ), words( mem0, k ) ) )
      phases.append( 0 )
      resps.append( Resp( 0 ) )
  n_load = len( reqs )
  for k in busy:
    assert np.array_equal( N.bits( mem0[k] ), N.bits( mem1[k] ) ), "the program touches a busy word"
    reqs.append( Req( 0, k, 0, 0 ) )
    phases.append( 1 )
    resps.append( Resp( words( mem0, k ) ) )
  for k in range( mem1.shape[0] ):
    if changed_only and np.array_equal( N.bits( mem0[k] ), N.bits( mem1[k] ) ):
      continue
    reqs.append( Req( 0, k, 0, 0 ) )
    phases.append( 2 )
    resps.append( Resp( words( mem1, k ) ) )
  return reqs, phases, resps, n_load


def run_program( level, cmdline_opts, cfg, depth, insts, hbm0, ddr0, rf0, max_delay, seed,
                 changed_only=False, busy=() ):
  T = mk_dma_types( cfg )
  g = golden_streams( cfg, insts, hbm0, ddr0, rf0 )
  sources = {
    "inst": ( InstMsg, [ InstMsg( encode( i ) ) for i in insts ], [ 1 ] * len( insts ) ),
    "rf_rd_resp": ( T["Entry"], g["rd_resp"], [ 1 ] * len( g["rd_resp"] ) ),
  }
  sinks = {
    "rf_wr": ( T["RFWrite"], g["rf_wr"] ), "w": ( T["W"], g["w"] ),
    "rf_rd": ( VregT, g["rf_rd"] ), "done": ( DoneMsg, [ DoneMsg( 1 ) ] * len( insts ) ),
  }
  n_load = {}
  for m, m0 in ( ( "hbm", hbm0 ), ( "ddr", ddr0 ) ):
    H = mk_host_types( T[m] )
    reqs, phases, resps, n_load[m] = host_msgs( H, m0, g[m], changed_only, busy )
    sources[ f"{m}_host_req" ] = ( H["Req"], reqs, phases )
    sinks[ f"{m}_host_resp" ] = ( H["Resp"], resps )
  opts = _plain_opts( cmdline_opts )
  dut = DMAWithMemories( cfg, DMAS[ level ], MEMS[ level ], depth )
  if translating( level, opts ):
    dut = WidePortsRTL( dut )
  th = elaborate_for( DMAHarness( dut, sources, sinks, n_load, len( insts ), max_delay, seed ),
                      level, opts )
  n = sum( len( m ) for _, m in sinks.values() )
  cycles = run_until_done( th, 2000 + 20 * n * ( max_delay + 1 ), f"DMA at {level}",
                           lambda: received( th.sinks ) )
  return cycles, { p: list( x.arrivals ) for p, x in th.sinks.items() }


# ---------------------------------------------------------------------------

# (config, memory rows per channel, where the transposed writes go); bands
# of 2 column tiles, so matrix reads of 3+ column tiles have several bands
CFGS = {
  "d32": ( DFXConfig( d=32, l=2, hbm_channels=4, psum_entries=2 ), 64, 160 ),   # entry 1 word, tile 2
  "d64": ( DFXConfig( d=64, l=4, hbm_channels=4, psum_entries=2 ), 128, 200 ),  # entry 2, tile 8 (2 beats)
  # below d=32 a memory word is one entry (8 elements, 128 bits): entry 1, tile 4
  "d8": ( DFXConfig( d=8, l=4, hbm_channels=4, psum_entries=2 ), 64, 160 ),
  # the raster tile walk (`mpu_raster_walk`): both walkers (a tile below C
  # words jumps) at d=32, one at d=64
  "d32-raster": ( DFXConfig( d=32, l=2, hbm_channels=4, psum_entries=2, mpu_raster_walk=1 ),
                  64, 160 ),
  "d64-raster": ( DFXConfig( d=64, l=4, hbm_channels=4, psum_entries=2, mpu_raster_walk=1 ),
                  128, 200 ),
  # two instructions queued in front of the engines (`dma_inst_queue`)
  "d32-queue": ( DFXConfig( d=32, l=2, hbm_channels=4, psum_entries=2, dma_inst_queue=2 ),
                 64, 160 ),
}


def random_images( cfg, depth, rng, n_hbm, n_ddr ):
  """HBM and DDR images of `depth` rows x 4 channels: random words at the
  bottom (n_hbm, n_ddr of them) and in the host's busy words, zeros else."""
  words, E = depth * 4, cfg.mem_word_elems
  hbm0 = np.zeros( ( words, E ), F16 )
  ddr0 = np.zeros( ( words, E ), F16 )
  hbm0[ :n_hbm ] = rng.standard_normal( ( n_hbm, E ) ).astype( F16 )
  ddr0[ :n_ddr ] = rng.standard_normal( ( n_ddr, E ) ).astype( F16 )
  busy = busy_words( depth )
  hbm0[ busy ] = rng.standard_normal( ( len( busy ), E ) ).astype( F16 )
  ddr0[ busy ] = rng.standard_normal( ( len( busy ), E ) ).astype( F16 )
  return hbm0, ddr0


def program( cfg, depth, tr_addr, rng ):
  """Every op, unaligned addresses, a whole matrix (row-major tile grid,
  two bands) and a column-major one; returns (insts, hbm0, ddr0, rf0)."""
  d, l, E = cfg.d, cfg.l, cfg.mem_word_elems
  EW = cfg.entry_words
  hbm0, ddr0 = random_images( cfg, depth, rng, 96, 64 )
  rf0 = rng.standard_normal( RF_ENTRIES * d ).astype( F16 )
  # a whole matrix as a row-major tile grid at an unaligned address
  rows, cols = d + 5, 2 * l + 1
  grid = to_grid( rng.standard_normal( ( rows, cols ) ).astype( F16 ), d, l )
  mat_addr = 97
  hbm0[ mat_addr:mat_addr + grid.size // E ] = grid.reshape( -1, E )
  n_vecs = grid.shape[0]
  insts = [
    make( D.HBM_READ, rf=0, addr=5, vecs=7 ),
    make( D.HBM_READ, mpu=1, addr=mat_addr, vecs=n_vecs, rows=rows ),
    make( D.HBM_READ, mpu=1, addr=3, vecs=3 * l, rows=3 * d - 1, cmajor=1 ),   # 3 x 1
    make( D.DDR_READ, rf=10, addr=7, vecs=5 ),
    make( D.HBM_WRITE, rf=8, addr=151 - 2 * EW, vecs=3 ),
    make( D.DDR_WRITE, rf=10, addr=130, vecs=5 ),
  ]
  for pos in ( 0, 5, d - 1, d + 2 ):
    insts.append( make( D.HBM_WRITE, rf=20 + pos % 3, addr=tr_addr, vecs=1, tr=1, pos=pos ) )
  insts += [
    make( D.HBM_READ, rf=30, addr=tr_addr, vecs=6 ),    # reads back what the writes left
    make( D.DDR_READ, rf=40, addr=131, vecs=2 ),
  ]
  return insts, hbm0, ddr0, rf0


@pytest.mark.parametrize( "name", sorted( CFGS ) )
def test_dma_program( name, level, cmdline_opts ):
  cfg, depth, tr_addr = CFGS[ name ]
  select_or_skip( level, **DMAS )
  insts, hbm0, ddr0, rf0 = program( cfg, depth, tr_addr, np.random.default_rng( 7 ) )
  sample = python_rtl( level, cmdline_opts )
  if sample:
    # pymtl3's Python RTL simulation runs some tens of cycles per second here:
    # a read, a tile read, a plain and a transposed write at d=32, and only
    # the changed words read back; Verilator runs every program whole
    if name not in ( "d32", "d32-raster" ):
      pytest.skip( "Python RTL runs the d=32 sample; --test-verilog runs this program" )
    # the raster sample reads the two-band matrix (the column-major one has
    # one column tile: the same in both orders)
    insts = [ insts[i] for i in ( ( 0, 1 ) if cfg.mpu_raster_walk else ( 0, 2, 5, 8 ) ) ]
  run_matching_cl( level, cmdline_opts, lambda lv, opts: run_program(
    lv, opts, cfg, depth, insts, hbm0, ddr0, rf0, 3, 11, sample, busy_words( depth ) ) )


def test_tile_stream_full_rate( level, cmdline_opts ):
  """With no delays a tile stream leaves at one tile per cycle (a tile is
  l*d/E <= C words, one beat) once the first has come back, also when the
  walk jumps around the grid (4 x 6 tiles, column-major, bands of 2)."""
  select_or_skip( level, **DMAS )
  if level == "fl":
    pytest.skip( "FL has no timing" )
  cfg, depth, _ = CFGS["d32"]
  E = cfg.mem_word_elems
  rng = np.random.default_rng( 3 )
  hbm0 = np.zeros( ( depth * 4, E ), F16 )
  ddr0 = np.zeros( ( depth * 4, E ), F16 )
  n_tiles = 24
  hbm0[ :n_tiles * cfg.l + 1 ] = rng.standard_normal( ( n_tiles * cfg.l + 1, E ) ).astype( F16 )
  insts = [ make( D.HBM_READ, mpu=1, addr=1, vecs=n_tiles * cfg.l, rows=4 * cfg.d, cmajor=1 ) ]
  rf0 = np.zeros( RF_ENTRIES * cfg.d, F16 )
  _, arr = run_program( level, cmdline_opts, cfg, depth, insts, hbm0, ddr0, rf0, 0, 0,
                        changed_only=True )
  w = arr["w"]
  assert np.diff( w ).tolist() == [ 1 ] * ( n_tiles - 1 )


@pytest.mark.parametrize( "inst,match", [
  ( make( D.HBM_READ, mpu=1, addr=0, vecs=3 ), "vecs=3 is not a multiple of l=2" ),
  ( make( D.HBM_READ, mpu=1, addr=0, vecs=6, rows=33 ),
    r"vecs=6 is 3 tiles, not a whole number of columns of ceil\(rows=33 / d=32\) = 2 row chunks" ),
  ( make( D.HBM_READ, rf=0, addr=0, vecs=1, cmajor=1 ), "rows=0 and cmajor=1 must be 0" ),
  ( make( D.HBM_READ, rf=0, addr=( 1 << 24 ) - 2, vecs=4 ), "run past the 16777216 words" ),
  ( make( D.HBM_WRITE, rf=0, addr=( 1 << 24 ) - 40, vecs=1, tr=1, pos=40 ),
    "hbm_write: words .* run past the 16777216 words" ),
] )
def test_bad_instruction_names_the_problem( inst, match, level, cmdline_opts ):
  """The hardware assumes a valid program; FL and CL check it."""
  select_or_skip( level, **DMAS )
  if level == "rtl":
    pytest.skip( "the RTL assumes a valid instruction (FL and CL check it)" )
  cfg, depth, _ = CFGS["d32"]
  T = mk_dma_types( cfg )
  dut = DMAWithMemories( cfg, DMAS[ level ], MEMS[ level ], depth )
  sources = { "inst": ( InstMsg, [ InstMsg( encode( inst ) ) ], [ 0 ] ),
              "rf_rd_resp": ( T["Entry"], [], [] ) }
  sinks = { "done": ( DoneMsg, [ DoneMsg( 1 ) ] ), "rf_wr": ( T["RFWrite"], [] ),
            "w": ( T["W"], [] ), "rf_rd": ( VregT, [] ) }
  for m in ( "hbm", "ddr" ):
    H = mk_host_types( T[m] )
    sources[ f"{m}_host_req" ] = ( H["Req"], [], [] )
    sinks[ f"{m}_host_resp" ] = ( H["Resp"], [] )
  th = elaborate_for( DMAHarness( dut, sources, sinks, {}, 1, 0, 0 ), level,
                      _plain_opts( cmdline_opts ) )
  with pytest.raises( DMAConfigError, match=match ):
    run_until_done( th, 100, "DMA", lambda: "" )


def random_program( cfg, depth, rng, n=12 ):
  """n random instructions of every op within the memories (below the busy
  words) and the register file; memories full of random words."""
  d, l, E = cfg.d, cfg.l, cfg.mem_word_elems
  EW = cfg.entry_words
  words = depth * 4 - 8
  hbm0 = rng.standard_normal( ( depth * 4, E ) ).astype( F16 )
  ddr0 = rng.standard_normal( ( depth * 4, E ) ).astype( F16 )
  rf0 = rng.standard_normal( RF_ENTRIES * d ).astype( F16 )
  insts = []
  for _ in range( n ):
    kind = rng.integers( 6 )
    vecs = int( rng.integers( 1, 9 ) )
    rf = int( rng.integers( 0, RF_ENTRIES - vecs + 1 ) )
    addr = int( rng.integers( 0, words - vecs * EW + 1 ) )
    if kind == 0:
      insts.append( make( D.HBM_READ, rf=rf, addr=addr, vecs=vecs ) )
    elif kind == 1:
      # a random tile grid: 1..3 row chunks, 1..5 column tiles (up to 3 bands)
      n_r, n_c = int( rng.integers( 1, 4 ) ), int( rng.integers( 1, 6 ) )
      vecs = n_r * n_c * l
      rows = int( rng.integers( ( n_r - 1 ) * d + 1, n_r * d + 1 ) )
      insts.append( make( D.HBM_READ, mpu=1, addr=int( rng.integers( 0, words - vecs * EW ) ),
                          vecs=vecs, rows=rows, cmajor=int( rng.integers( 2 ) ) ) )
    elif kind == 2:
      insts.append( make( D.DDR_READ, rf=rf, addr=addr, vecs=vecs ) )
    elif kind == 3:
      insts.append( make( D.HBM_WRITE, rf=rf, addr=addr, vecs=vecs ) )
    elif kind == 4:
      insts.append( make( D.DDR_WRITE, rf=rf, addr=addr, vecs=vecs ) )
    else:
      vecs = int( rng.integers( 1, 3 ) )
      span = -( -vecs * d // l ) * l * EW       # words of one row chunk of the region
      chunks = max( 1, min( 2, ( words - 1 ) // span ) )
      pos = int( rng.integers( 0, chunks * d ) )
      top = words - ( pos // d + 1 ) * span
      insts.append( make( D.HBM_WRITE, rf=rf, addr=int( rng.integers( 0, top + 1 ) ),
                          vecs=vecs, tr=1, pos=pos ) )
  return insts, hbm0, ddr0, rf0


@pytest.mark.parametrize( "name,seed", [ ( "d32", 1 ), ( "d32", 2 ), ( "d64", 3 ), ( "d8", 4 ),
                                         ( "d32-raster", 5 ), ( "d32-queue", 6 ) ] )
def test_dma_random_program( name, seed, level, cmdline_opts ):
  """Random instructions (every op, random addresses, sizes, rf entries and
  token positions) against dma_op; at RTL (Verilator) also CL == RTL."""
  select_or_skip( level, **DMAS )
  if python_rtl( level, cmdline_opts ):
    pytest.skip( "Python RTL runs the d=32 sample of test_dma_program; --test-verilog runs this" )
  cfg, depth, _ = CFGS[ name ]
  insts, hbm0, ddr0, rf0 = random_program( cfg, depth, np.random.default_rng( seed ) )
  busy = busy_words( depth )
  run_matching_cl( level, cmdline_opts, lambda lv, opts: run_program(
    lv, opts, cfg, depth, insts, hbm0, ddr0, rf0, 2, seed, busy=busy ) )
