"""Drive a register file manager at any level through its ports only.

`rfm_program(cfg, ...)` makes a random program and every message of it:
the register file is preloaded through rf_wr; VPU, MPU and router
instructions arrive on *_inst with the engines' outputs (the golden
`vpu.streams.execute`, `mpu.semantics.matrix_op` + `mpu.streams.expected_out`,
`router.streams.write_of`) on *_out / router_wr; the manager's messages are
checked against the engines' contracts (`request_streams`, `mpu_streams`,
`rd_messages`); finally the whole register file is read back through rf_rd
and compared with the sequential FL semantics.  Each engine has its own
region of the register file (the scoreboard orders the units; within the
MPU a matrix instruction never reads an earlier one's result, as the
scoreboard would not issue it while that one is in flight).

`run_rfm(dut, prog, level, ...)` runs it in three phases: preload, then the
instructions, then the read-back (each phase's sources wait for the one
before to finish), with random source and sink delays.
"""


import numpy as np
from pymtl3 import *

from .. import numerics as N
from ..lib.tiling import band_width, to_stream
from ..isa import ComputeOp as C, PostOp, RouterOp, encode, make
from ..lib.arith import ceil_div
from .harness import _plain_opts, elaborate_for, run_until_done, translating
from .src_sink import CheckSinkRTL, DelaySourceRTL, done_by, received
from ..hdl.wide_ports import WidePortsRTL, connect_stream
from ..units.control.msgs import DoneMsg, InstMsg
from ..units.dma.msgs import VregT
from ..units.mpu.msgs import MPUCmd, mk_mpu_types
from ..units.mpu.semantics import matrix_op
from ..units.mpu.streams import expected_out, mpu_cmd, mpu_streams
from ..units.router.msgs import mk_ring_packet
from ..units.router.ports import CoreIdT
from ..units.router.streams import RouterCmd, apply_writes, rd_messages, write_of
from ..units.vpu.msgs import BINARY, VPUCmd
from ..units.vpu.streams import n_chunks, out_messages, request_streams, to_msgs, write_back
from ..units.regfile.ports import mk_rfm_types, x_buffer_entries
from ..units.regfile.state import VectorRegisterFile

F16 = np.float16
VPU_OPS = [ C.ADD, C.SUB, C.MUL, C.EXP, C.RECIP, C.ACCUM, C.REDMAX, C.LOAD ]
# drawn too where the core runs them (`ComputeOp.runs_on`)
VPU_OPTION_OPS = [ C.GELU ]
MPU_KINDS = [ ( C.CONV1D, PostOp.NONE ), ( C.CONV1D, PostOp.GELU ), ( C.MM, PostOp.REDMAX ),
              ( C.MASKEDMM, PostOp.NONE ), ( C.MM, PostOp.VECTORIZE ) ]
PRELOAD = ( "rf_wr", )
PROGRAM = ( "vpu_inst", "vpu_out", "mpu_inst", "mpu_out", "mpu_w", "router_inst", "router_wr" )
ENGINE_SIDE = ( "vpu_cmd", "vpu_a", "vpu_b", "vpu_out", "mpu_cmd", "mpu_x", "mpu_bias", "mpu_out" )
READBACK = ( "rf_rd", )


class RFMProgram:
  """Sources and sinks (port -> (Type, msgs)), the final register file, the
  MPU's weight stream (`weights`: (Type, msgs)) and the ring position the
  program is for (`core_id`: its router_rd messages are that core's
  segments; the harness drives the manager's core_id input with it)."""

  def __init__( s, sources, sinks, final, weights=None, core_id=0 ):
    s.sources, s.sinks, s.final, s.weights = sources, sinks, final, weights
    s.core_id = core_id

  def with_engines( s ):
    """The program for a manager with its engines attached
    (`RFMWithEngines`): the engine-side ports are inside; the weights come
    in on mpu_w."""
    keep = lambda ports: { p: v for p, v in ports.items() if p not in ENGINE_SIDE }
    return RFMProgram( { **keep( s.sources ), "mpu_w": s.weights }, keep( s.sinks ), s.final,
                       core_id=s.core_id )


def _vpu_insts( rng, cfg, lo, hi, n_insts ):
  """Vector instructions inside entries [lo, hi); dst never overlaps a source
  of the same instruction (the engine may return out[k] before it has taken
  a[k], so an in-place op would depend on timing)."""
  d, span = cfg.d, ( hi - lo ) // 3
  ops = VPU_OPS + [ op for op in VPU_OPTION_OPS if op.runs_on( cfg ) ]
  insts = []
  for _ in range( n_insts ):
    op = ops[ int( rng.integers( len( ops ) ) ) ]
    n = int( rng.integers( 1, span * d + 1 ) )
    regions = rng.permutation( 3 )
    base = [ lo + int( r ) * span for r in regions ]
    src1 = base[0] + int( rng.integers( 0, span - n_chunks( n, d ) + 1 ) )
    fields = dict( dst=base[2], src1=src1, len=n )
    if op in BINARY:
      fields.update( src2=base[1], bcast=int( rng.integers( 2 ) ) )
    insts.append( make( op, **fields ) )
  return insts


def _mpu_insts( rng, cfg, in_lo, out_lo, n_insts, chained=False, max_r=3, min_r=1 ):
  """Matrix instructions reading entries from in_lo (x and bias), each
  writing its own block from out_lo.  `chained`: every second instruction
  is a chain producer whose result (cols elements) is the next one's x.
  Returns the instructions and the first entry after their outputs."""
  d = cfg.d
  insts, dst, prev = [], out_lo, None
  max_r = min( max_r, x_buffer_entries( cfg ) )
  for k in range( n_insts ):
    op, post = MPU_KINDS[ k % len( MPU_KINDS ) ]
    rows = int( rng.integers( ( min_r - 1 ) * d + 1, max_r * d + 1 ) )
    cols = int( rng.integers( 1, max_r * d + 1 ) )
    src1 = in_lo + int( rng.integers( 0, 3 ) )
    if chained and k % 2:
      src1, rows = prev
    fields = dict( dst=dst, src1=src1, rows=rows, cols=cols, post=int( post ) )
    if chained and k % 2 == 0:
      fields[ "chain" ] = 1
    if op == C.CONV1D:
      fields[ "bias" ] = in_lo + int( rng.integers( 0, 3 ) )
    if op == C.MASKEDMM:
      fields.update( scale=0.125, mask=int( rng.integers( 0, cols + 1 ) ) )
    insts.append( make( op, **fields ) )
    prev = ( dst + ( post == PostOp.REDMAX ), cols )
    dst += ceil_div( cols, d ) + ( post == PostOp.REDMAX )
  return insts, dst


def _vpu_messages( insts, ref, partials ):
  out = { "cmd": [], "a": [], "b": [], "out": [] }
  for inst in insts:
    cmd, a, b = request_streams( inst, ref )
    outs = out_messages( inst, ref, partials )
    write_back( inst, outs, ref )
    out["cmd"] += cmd; out["a"] += a; out["b"] += b; out["out"] += outs
  return out


def _mpu_messages( rng, cfg, insts, ref ):
  """Every port's messages; random weights; the results written into ref."""
  d, l = cfg.d, cfg.l
  out = { "cmd": [], "x": [], "bias": [], "w": [], "out": [] }
  for inst in insts:
    op, post = C( int( inst.hdr.op ) ), int( inst.post )
    rows, cols = int( inst.rows ), int( inst.cols )
    cmd = mpu_cmd( inst, op )
    x = ref.read_entries( int( inst.src1 ), ceil_div( rows, d ) ).reshape( -1 )
    w = rng.standard_normal( ( rows, cols ) ).astype( F16 )
    bias = ref.read( int( inst.bias ), cols ) if op == C.CONV1D else None
    for port, msgs in mpu_streams( cmd, x, w, bias, cfg ).items():
      out[ port ] += msgs
    band = band_width( cols, l, cfg.psum_entries )
    matrix_op( op, inst, x[ :rows ], to_stream( w, d, l, band, cfg.mpu_raster_walk ), ref, cfg )
    y_at = int( inst.dst ) + ( post == PostOp.REDMAX )
    top = ref.read( int( inst.dst ), 1 )[0] if post == PostOp.REDMAX else None
    out["out"] += expected_out( cmd, ref.read( y_at, cols ), top, cfg )
  return out


def _router_messages( rng, cfg, ref, syncs, core_id, cores ):
  """Syncs [(base, n)]: this core's rd packets, the other cores' packets
  as rf_wr messages in a random order."""
  Packet = mk_ring_packet( cfg )
  W = cfg.router_words
  insts, out = [], { "cmd": [], "rd": [], "wr": [] }
  for base, n in syncs:
    insts.append( make( RouterOp.SYNC, rf=base, len=n ) )
    out["cmd"].append( RouterCmd( base, n ) )
    out["rd"] += rd_messages( cfg, ref, base, n, core_id, cores )
    writes = []
    for src in range( cores ):
      if src == core_id:
        continue
      seg = rng.standard_normal( n ).astype( F16 )
      for idx, k0 in enumerate( range( 0, n, W ) ):
        words = np.zeros( W, F16 )
        part = seg[ k0:k0 + W ]
        words[ :part.size ] = part
        writes.append( write_of( cfg, base, n, Packet( src, idx, [ int( b ) for b in N.bits( words ) ] ) ) )
    rng.shuffle( writes )
    apply_writes( ref, writes )
    out["wr"] += writes
  return insts, out


def build_program( cfg, ref, vpu=(), mpu=(), syncs=(), core_id=0, cores=None, seed=0 ):
  """The program of given instructions (syncs as (base, n)) on the register
  file `ref` (which ends as the sequential FL semantics leave it)."""
  cores = cfg.cores if cores is None else cores
  rng = np.random.default_rng( seed )
  T = mk_rfm_types( cfg )
  preload = [ T["RFWrite"]( e, [ int( b ) for b in N.bits( ref.mem[ e ] ) ] )
              for e in range( ref.entries ) ]
  vmsgs = _vpu_messages( vpu, ref, cfg.reduce_partials )
  mmsgs = _mpu_messages( rng, cfg, mpu, ref )
  ri, rmsgs = _router_messages( rng, cfg, ref, syncs, core_id, cores )
  words = lambda insts: [ InstMsg( encode( i ) ) for i in insts ]
  sources = {
    "rf_wr": ( T["RFWrite"], preload ),
    "vpu_inst": ( InstMsg, words( vpu ) ), "vpu_out": ( T["Entry"], vmsgs["out"] ),
    "mpu_inst": ( InstMsg, words( mpu ) ), "mpu_out": ( T["Out"], mmsgs["out"] ),
    "router_inst": ( InstMsg, words( ri ) ), "router_wr": ( T["Wr"], rmsgs["wr"] ),
    "rf_rd": ( VregT, [ VregT( e ) for e in range( ref.entries ) ] ),
  }
  sinks = {
    "vpu_cmd": ( VPUCmd, vmsgs["cmd"] ), "vpu_a": ( T["Entry"], vmsgs["a"] ),
    "vpu_b": ( T["Entry"], vmsgs["b"] ), "vpu_done": ( DoneMsg, [ DoneMsg( 1 ) ] * len( vpu ) ),
    "mpu_cmd": ( MPUCmd, mmsgs["cmd"] ), "mpu_x": ( T["X"], mmsgs["x"] ),
    "mpu_bias": ( T["Bias"], mmsgs["bias"] ), "mpu_done": ( DoneMsg, [ DoneMsg( 1 ) ] * len( mpu ) ),
    "router_cmd": ( T["RCmd"], rmsgs["cmd"] ), "router_rd": ( T["Rd"], rmsgs["rd"] ),
    "rf_rd_resp": ( T["Entry"], to_msgs( ref.mem, cfg.d ) ),
  }
  W = mk_mpu_types( cfg.d, cfg.l, cfg.psum_entries )["W"]
  return RFMProgram( sources, sinks, ref, ( W, mmsgs["w"] ), core_id )


def random_register_file( cfg, seed ):
  ref = VectorRegisterFile( cfg.vreg_entries, cfg.d )
  ref.mem[:] = np.random.default_rng( seed ).standard_normal( ref.mem.shape ).astype( F16 )
  return ref


def rfm_program( cfg, seed=0, core_id=0, cores=None, n_vpu=6, n_mpu=5, syncs=None,
                 chained=False, max_r=3, min_r=1 ):
  """A random program on a register file of cfg.vreg_entries entries (at
  least 64): VPU in entries [0, 12), MPU inputs from 12 and outputs after
  them, the router after those."""
  cores = cfg.cores if cores is None else cores
  rng = np.random.default_rng( seed )
  vi = _vpu_insts( rng, cfg, 0, 12, n_vpu )
  # src1 and bias start in [12, 15) and span up to max_r entries
  mi, base = _mpu_insts( rng, cfg, 12, 15 + max_r, n_mpu, chained, max_r, min_r )
  if syncs is None:
    syncs = [ int( rng.integers( 1, 2 * cfg.router_words + 2 ) ) for _ in range( 2 ) ]
  ri = []
  for n in syncs:
    ri.append( ( base, n ) )
    base += ceil_div( cores * n, cfg.d ) + 1
  if base > cfg.vreg_entries:
    raise ValueError( f"rfm_program needs {base} register entries, cfg has {cfg.vreg_entries}" )
  return build_program( cfg, random_register_file( cfg, seed ), vi, mi, ri, core_id, cores,
                        seed + 1 )


class RFMHarness( Component ):

  def construct( s, dut, prog, max_delay=0, seed=0 ):
    s.dut = dut
    s.dut.core_id //= CoreIdT( prog.core_id )
    s.srcs, s.sinks = {}, {}
    for i, ( port, ( Type, msgs ) ) in enumerate( sorted( prog.sources.items() ) ):
      src = DelaySourceRTL( Type, msgs, max_delay, seed + 2 * i )
      setattr( s, f"src_{port}", src )
      connect_stream( src.send, getattr( dut, port ) )
      s.srcs[ port ] = src
    for i, ( port, ( Type, msgs ) ) in enumerate( sorted( prog.sinks.items() ) ):
      sink = CheckSinkRTL( Type, msgs, max_delay, seed + 2 * i + 1 )
      setattr( s, f"sink_{port}", sink )
      connect_stream( sink.recv, getattr( dut, port ) )
      s.sinks[ port ] = sink
    preloaded = lambda cycle: done_by( s.srcs["rf_wr"], cycle )
    finished = lambda cycle: preloaded( cycle ) and \
                             all( done_by( x, cycle ) for p, x in s.sinks.items()
                                  if p != "rf_rd_resp" ) and \
                             all( done_by( s.srcs[ p ], cycle ) for p in program )
    program = [ p for p in PROGRAM if p in s.srcs ]
    # a phase starts the cycle after the previous one is over
    for p in program:
      s.srcs[ p ].gate = lambda _, cycle: preloaded( cycle - 1 )
    s.srcs["rf_rd"].gate = lambda _, cycle: finished( cycle - 1 )

  def done( s ):
    return all( x.done() for x in s.srcs.values() ) and all( x.done() for x in s.sinks.values() )

  def line_trace( s ):
    return s.dut.line_trace()


class RFMResult:
  def __init__( s, cycles, arrivals ):
    s.cycles, s.arrivals = cycles, arrivals


def run_rfm( dut, prog, level, cmdline_opts=None, max_delay=0, seed=0, line_trace=False ):
  opts = _plain_opts( cmdline_opts )
  if translating( level, opts ):
    dut = WidePortsRTL( dut )
  th = elaborate_for( RFMHarness( dut, prog, max_delay, seed ), level, opts, line_trace )
  n_msgs = sum( len( m ) for _, m in prog.sinks.values() ) + \
           sum( len( m ) for _, m in prog.sources.values() )
  cycles = run_until_done(
    th, 1000 + 20 * ( max_delay + 1 ) * n_msgs, f"{type( dut ).__name__} at {level}",
    lambda: "received " + received( th.sinks ) )
  return RFMResult( cycles, { p: list( x.arrivals ) for p, x in th.sinks.items() } )
