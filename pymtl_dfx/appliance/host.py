"""The host: loads a compiled model onto a modelled appliance and generates.

Levels (docs/core.md):
  "func"     the instruction-level functional appliance (`funcsim`): whole
             vectors per instruction over shared arrays; fast, any model size.
  "fl", "cl", "rtl"   the appliance of `core.Core`s built from the stream
             units at that level (pymtl3 simulation); `levels` overrides single
             units (e.g. {"mpu": "rtl"}), with "verilog" for a unit translated
             and imported alone.
  "verilog"  every unit RTL, and the whole appliance (cores, memories, links)
             translated into one Verilator model.

At every stream level the host drives the appliance the same way, through
ports only, from Python components inside the simulated top:
  1. load: every word of each core's HBM and DDR image is written through the
     memory's host port (write requests, acknowledgements counted);
  2. per token step: each core's program streams into its `inst` port from a
     word source; the host ticks until every core is idle and every source
     drained, watching each core's `issued` / `retired` handshakes to charge
     every cycle to an op class (the attribution rule below);
  3. logits: each core's slice is read back through its DDR host port, the
     real vocabulary columns joined, and the next token picked greedily.

Cycle attribution: a cycle of a step is charged, on each core, to the op
class of the oldest instruction of that core's program not yet completed
(its done token not yet taken); once all have completed, to the last one's.
The step's classes are the slowest core's (the one whose last instruction
completes last, ties to the lowest id), so they sum exactly to the step's
cycles.  Then every step, at every level (and in `perf`), adds the host's
per-step cost (`DFXConfig.host_step_cycles`: the blocking transfers that
put the token in and take the result out) to its cycles, charged to the op
class "host" (`add_host_step`).  A unit is busy in a cycle when it holds an issued, not yet
completed instruction at the start of that cycle.
"""

import time
from collections import deque

import numpy as np
from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..compiler import stats as S
from ..units.memory.msgs import words_to_array, write_requests
from ..core.Core import CORE_LEVELS, prepare_sim
from ..funcsim.ApplianceFunc import ApplianceFunc
from ..gpt2.decoding import decode_loop, greedy_token
from ..isa import DmaOp as D, Kind, encode, format_inst, op_of
from ..lib.arith import ceil_div
from ..units.control.ControlUnitFL import UNITS, unit_of
from ..units.control.footprint import footprint_of
from ..units.dma.msgs import mk_dma_types
from ..units.dma.streams import tr_word0
from ..units.memory.ports import mk_host_types
from ..units.regfile.ports import vector_error
from ..units.control.msgs import InstMsg
from .Appliance import Appliance
from .liveness import StepTimeout, cycle_limit, top_stuck_report

LEVELS = ( "func", ) + CORE_LEVELS
# the levels whose cycles are the hardware's (func and fl count cycles of
# untimed models)
TIMED_LEVELS = ( "cl", "rtl", "verilog" )
STAGES = ( "summarization", "generation" )
F16 = np.float16


class ProgramError( ValueError ):
  pass


# -- Python drivers inside the simulated top ------------------------------------

class WordSource( Component ):
  """Sends the words pushed into it, one per cycle while the sink is ready."""

  def construct( s, Type ):
    s.send = SendIfcRTL( Type )
    s.Type = Type
    s.q = deque()

    @update_once
    def up_word_source_ports():
      s.send.val @= len( s.q ) > 0
      if s.q:
        s.send.msg @= s.q[0]

    @update_ff
    def up_word_source_state():
      if s.reset:
        s.q.clear()
      elif s.send.val & s.send.rdy:
        s.q.popleft()

  def push( s, msgs ):
    s.q.extend( msgs )

  def line_trace( s ):
    return f"{len( s.q ):3d}"


class HostMemPort( Component ):
  """One memory's host port: sends queued requests, takes every response."""

  def construct( s, H ):
    s.Req = H["Req"]
    s.req = SendIfcRTL( H["Req"] )
    s.resp = RecvIfcRTL( H["Resp"] )
    s.q = deque()
    s.got = []

    @update_once
    def up_host_port_ports():
      s.req.val @= len( s.q ) > 0
      if s.q:
        s.req.msg @= s.q[0]
      s.resp.rdy @= 1

    @update_ff
    def up_host_port_state():
      if s.reset:
        s.q.clear()
        return
      if s.req.val & s.req.rdy:
        s.q.popleft()
      if s.resp.val & s.resp.rdy:
        s.got.append( int( s.resp.msg.data ) )

  def line_trace( s ):
    return f"{len( s.q )}/{len( s.got )}"


class HostTop( Component ):
  """The appliance with one word source per core and its host ports' drivers."""

  def construct( s, cfg, cores, levels, hbm_depth, ddr_depth, level ):
    s.dut = Appliance( cfg, cores, levels, hbm_depth, ddr_depth, level )
    T = mk_dma_types( cfg )
    s.src = [ WordSource( InstMsg ) for _ in range( cores ) ]
    s.hbm = [ HostMemPort( mk_host_types( T["hbm"] ) ) for _ in range( cores ) ]
    s.ddr = [ HostMemPort( mk_host_types( T["ddr"] ) ) for _ in range( cores ) ]
    for i in range( cores ):
      s.src[i].send //= s.dut.inst[i]
      s.hbm[i].req //= s.dut.hbm_host_req[i]
      s.dut.hbm_host_resp[i] //= s.hbm[i].resp
      s.ddr[i].req //= s.dut.ddr_host_req[i]
      s.dut.ddr_host_resp[i] //= s.ddr[i].resp

  def line_trace( s ):
    return s.dut.line_trace()


# -- a Verilated appliance driven without pymtl3's per-cycle work ---------------

def _vl( name ):
  """A port's field in pymtl3's cffi struct: Verilator escapes `__`."""
  return name.replace( "__", "___05F" )


class _VerilatedSteps:
  """Ticks a Verilated appliance (the imported `dut` of `HostTop`) from a
  tight loop over its cffi port struct.  pymtl3's `sim_tick` would, every
  cycle, run every Python component's blocks and copy every top-level
  port of the model in and out (the host ports' 569- and 577-bit requests
  as 18-19 words each) although during a step only `inst` changes, and
  only when a word is taken.  The loop keeps pymtl3's order (clock edge,
  then inputs and the combinational evaluation, then the outputs the host
  reads), so a step takes the same cycles either way; the other inputs
  keep the values pymtl3 left (no host request, responses taken), which is
  what the idle host drivers would drive.  A cycle is two evaluations of
  the model, not pymtl3's three: the rising edge, then the new inputs with
  the clock low (pymtl3's `seq_eval` evaluates at clock low before the edge
  although no input changed since its `comb_eval`); each evaluation also
  recomputes the logic fed by the top's inputs (the memories' host ports).
  The progress of a core is reported only in cycles with a handshake."""

  def __init__( s, dut, n ):
    s.m, lib = dut._ffi_m, dut._ffi_inst
    s.eval = lib.comb_eval            # one model->eval()
    s.clk = s.m.clk
    s.n = n
    s.msg = [ getattr( s.m, _vl( "inst__msg" ) )[i] for i in range( n ) ]
    s.val = [ getattr( s.m, _vl( "inst__val" ) )[i] for i in range( n ) ]
    s.rdy = [ getattr( s.m, _vl( "inst__rdy" ) )[i] for i in range( n ) ]
    s.idle = [ s.m.idle[i] for i in range( n ) ]
    s.issued = [ s.m.issued[i] for i in range( n ) ]
    s.retired = [ s.m.retired[i] for i in range( n ) ]

  def run( s, progs, tracks, limit, stuck ):
    """Stream each core's words into its inst port until every core is idle
    and every word taken; returns the cycles."""
    n, nw = s.n, InstMsg.nbits // 32
    words = [ [ [ int( encode( inst ) ) >> 32 * j & 0xffffffff for j in range( nw ) ]
                for inst in prog ] for prog in progs ]
    ptr = [ 0 ] * n
    offered = [ False ] * n        # inst val in the last combinational evaluation
    taken = [ False ] * n
    ev, m, clk = s.eval, s.m, s.clk
    issued, retired = s.issued, s.retired
    clk[0] = 0
    ev( m )
    k = 0
    while True:
      for i in range( n ):                 # clock edge
        if taken[i]:
          ptr[i] += 1
      clk[0] = 1
      ev( m )
      for i in range( n ):                 # inputs
        if ptr[i] < len( words[i] ):
          if taken[i] or not offered[i]:
            w, msg = words[i][ ptr[i] ], s.msg[i]
            for j in range( nw ):
              msg[j] = w[j]
            s.val[i][0] = 1
            offered[i] = True
        elif offered[i]:
          s.val[i][0] = 0
          offered[i] = False
      clk[0] = 0
      ev( m )
      done = True
      for i in range( n ):                 # outputs
        taken[i] = offered[i] and s.rdy[i][0]
        if issued[i][0] or retired[i][0]:
          tracks[i].cycle( k, issued[i][0], retired[i][0] )
        done = done and s.idle[i][0] and ptr[i] >= len( words[i] )
      k += 1
      if done:
        break
      if k >= limit:
        for t in tracks:
          t.close( k )
        raise StepTimeout( stuck( limit, [ len( w ) - p for w, p in zip( words, ptr ) ] ) )
    for t in tracks:
      t.close( k )
    return k


def add_host_step( cfg, cycles, per_class ):
  """A step's cycles and op classes with the host's per-step cost added:
  the one place it is charged (the hosts at every level, `perf`)."""
  h = cfg.host_step_cycles
  if per_class is not None:
    per_class = dict( per_class )
    per_class["host"] = per_class.get( "host", 0 ) + h
  return cycles + h, per_class


# -- per-core progress: which instruction is the oldest not completed -----------

class _Progress:
  """Completion of one core's program from its issue / done handshakes: a
  unit answers in order, so its k-th done token completes its k-th
  instruction of the program.  Between two handshakes nothing it counts
  changes, so a caller may report only the cycles with one (`cycle`) and
  then `close` the step: the counts are those of a call every cycle."""

  def __init__( s, units, classes ):
    s.classes = classes
    s.pcs = [ [ pc for pc, u in enumerate( units ) if u == k ] for k in range( len( UNITS ) ) ]
    s.issued = [ 0 ] * len( UNITS )
    s.retired = [ 0 ] * len( UNITS )
    s.cycles = dict.fromkeys( S.CYCLE_CLASSES, 0 )
    s.busy = [ 0 ] * len( UNITS )
    s.last_done = 0          # cycle (within the step) of the last completion
    s.counted = 0            # cycles counted so far
    s.n = len( units )
    s._oldest()

  def _oldest( s ):
    s.oldest = min( ( p[r] for p, r in zip( s.pcs, s.retired ) if r < len( p ) ), default=None )
    s.cls = s.classes[ s.n - 1 if s.oldest is None else s.oldest ] if s.n else None

  def close( s, k ):
    """Count cycles up to (not including) k with the state as it is."""
    dt = k - s.counted
    if dt > 0:
      if s.cls is not None:
        s.cycles[ s.cls ] += dt
      for u in range( len( UNITS ) ):
        if s.issued[u] > s.retired[u]:
          s.busy[u] += dt
      s.counted = k

  def cycle( s, k, issued, retired ):
    """Cycle k of the step; issued / retired: this cycle's handshake bits
    (cycles since the last call had none)."""
    s.close( k + 1 )
    if issued:
      for u in range( len( UNITS ) ):
        s.issued[u] += issued >> u & 1
    if retired:
      for u in range( len( UNITS ) ):
        s.retired[u] += retired >> u & 1
      s.last_done = k
      s._oldest()


class Host:

  def __init__( s, compiled, level="func", levels=None, max_cycles_per_step=None,
                hbm_depth=None, ddr_depth=None, line_trace=False ):
    if level not in LEVELS:
      raise ValueError( f"level {level!r} is not an appliance level (have: {', '.join( LEVELS )})" )
    s.model = compiled
    s.level = level
    s.emitter = compiled.emitter()
    s.max_cycles = max_cycles_per_step
    s.line_trace = line_trace
    s.pos = 0
    s.stats = S.empty()
    s.cycles = 0
    s.step_seconds = []
    s.step_cycles = []                     # per step: total cycles
    s.step_classes = []                    # per step: op class -> cycles (stream levels)
    s.stage_cycles = dict.fromkeys( STAGES, 0 )
    s.class_cycles = dict.fromkeys( S.CYCLE_CLASSES, 0 )
    s.unit_busy = None                     # per core: unit -> busy cycles
    s.load_cycles = s.readback_cycles = 0
    s.prompt_len = None
    cfg = compiled.dfx
    images = getattr( compiled, "images", None )   # None: a `perf.Planned` model
    if level == "func":
      if images is None:
        raise ValueError( "the functional appliance computes on the weights: compile the model "
                          "(a planned model without memory images runs at fl, cl, rtl, verilog)" )
      if levels:
        raise ValueError( "per-unit levels need a stream level (fl, cl, rtl, verilog), not func" )
      s.appliance = ApplianceFunc( cfg, compiled.images, compiled.readonly_hbm_words )
      s.appliance.apply( DefaultPassGroup( linetrace=False ) )
      s.appliance.sim_reset()
      return
    T = mk_dma_types( cfg )
    s.specs = { "hbm": T["hbm"], "ddr": T["ddr"] }
    # a planned model's memories hold zeros: its layout's words, none loaded
    need = { m: ( [ img[k].shape[0] for img in images ] if images is not None
                  else [ compiled.layout[m]["words"] ] )
             for k, m in enumerate( ( "hbm", "ddr" ) ) }
    s.depth = { "hbm": hbm_depth or _depth_for( need["hbm"], T["hbm"].channels ),
                "ddr": ddr_depth or _depth_for( need["ddr"], T["ddr"].channels ) }
    for m in ( "hbm", "ddr" ):
      words = s.depth[m] * s.specs[m].channels
      for i, n in enumerate( need[m] ):
        if n > words:
          raise ProgramError( f"core {i}: the {m.upper()} image has {n} words; "
                              f"the modelled memory holds {words} ({m}_depth={s.depth[m]} rows "
                              f"x {s.specs[m].channels} channels)" )
    whole = level == "verilog"
    top = HostTop( cfg, compiled.cores, levels, s.depth["hbm"], s.depth["ddr"],
                   "rtl" if whole else level )
    t0 = time.perf_counter()
    s.top = prepare_sim( top, [ "dut" ] if whole else (), linetrace=line_trace )
    s.build_seconds = time.perf_counter() - t0
    s.fast = _VerilatedSteps( s.top.dut, compiled.cores ) if whole and not line_trace else None
    s.top.sim_reset()
    s.unit_busy = [ dict.fromkeys( UNITS, 0 ) for _ in range( compiled.cores ) ]
    if images is not None:
      s._load_images()

  # -- memories through the host ports -------------------------------------------

  def _tick_until( s, cond, limit, what ):
    n = 0
    while not cond():
      if n >= limit:
        raise StepTimeout( f"{what} did not finish in {limit} cycles" )
      s.top.sim_tick()
      if s.line_trace:
        print( s.top.line_trace() )
      n += 1
    return n

  def _load_images( s ):
    top = s.top
    want = []
    for i, ( hbm, ddr ) in enumerate( s.model.images ):
      for m, img in ( ( "hbm", hbm ), ( "ddr", ddr ) ):
        port = getattr( top, m )[i]
        port.got.clear()
        port.q.extend( write_requests( port.Req, img ) )
        want.append( ( port, img.shape[0] ) )
    limit = 100 * sum( n for _, n in want ) + 10_000
    s.load_cycles = s._tick_until( lambda: all( len( p.got ) >= n for p, n in want ),
                                   limit, "loading the memory images" )

  def _read_ddr( s, addr, n_words ):
    """n_words words from every core's DDR at addr, as FP16 arrays."""
    top = s.top
    for port in top.ddr:
      port.got.clear()
      Req = port.Req
      port.q.extend( Req( 0, addr + k, 0, 0 ) for k in range( n_words ) )
    s.readback_cycles += s._tick_until( lambda: all( len( p.got ) >= n_words for p in top.ddr ),
                                        100 * n_words + 10_000, "reading the logits" )
    return [ words_to_array( p.got, s.model.dfx.mem_word_elems ).reshape( -1 ) for p in top.ddr ]

  # -- programs -------------------------------------------------------------------

  def check_program( s, core, prog ):
    """Raise ProgramError if an instruction reaches past the register file
    or the modelled memories (which would alias, not fail)."""
    cfg = s.model.dfx
    EW = cfg.entry_words
    for pc, inst in enumerate( prog ):
      op, kind = op_of( inst ), Kind( int( inst.hdr.kind ) )
      fp = footprint_of( inst, op, kind, cfg.d, cfg.cores )
      for r in fp.reads + ( fp.write, ):
        if r.count and r.end > cfg.vreg_entries:
          raise ProgramError( f"core {core} pc {pc} ({format_inst( inst )}): registers {r} "
                              f"run past the {cfg.vreg_entries} entries of the register file" )
      if kind == Kind.COMPUTE and op.on_vpu:
        why = vector_error( inst, cfg.d )
        if why:
          raise ProgramError( f"core {core} pc {pc} ({format_inst( inst )}): {why}" )
      if kind != Kind.DMA:
        continue
      m = "ddr" if op in ( D.DDR_READ, D.DDR_WRITE ) else "hbm"
      addr, vecs = int( inst.addr ), int( inst.vecs )
      if op == D.HBM_WRITE and int( inst.tr ):
        end = tr_word0( cfg, addr, vecs, int( inst.pos ) ) + ( vecs * cfg.d - 1 ) * EW + 1
      else:
        end = addr + vecs * EW
      words = s.depth[m] * s.specs[m].channels
      if end > words:
        raise ProgramError( f"core {core} pc {pc} ({format_inst( inst )}): words up to {end} "
                            f"run past the {words} words of the modelled {m.upper()} "
                            f"({m}_depth={s.depth[m]})" )

  def _run_stream( s, progs, classes ):
    top = s.top
    tracks = []
    for i, ( prog, cls ) in enumerate( zip( progs, classes ) ):
      s.check_program( i, prog )
      units = []
      for inst in prog:
        units.append( unit_of( op_of( inst ), Kind( int( inst.hdr.kind ) ) ) )
      tracks.append( _Progress( units, cls ) )
      if s.fast is None:
        top.src[i].push( InstMsg( encode( inst ) ) for inst in prog )
    limit = s.max_cycles or cycle_limit( s.model.dfx, s.specs, progs )
    n = len( progs )
    if s.fast is not None:
      k = s.fast.run( progs, tracks, limit,
                      lambda limit, left: s._stuck( limit, tracks, progs, left ) )
    else:
      k = s._tick_stream( tracks, progs, limit )
    slowest = max( range( n ), key=lambda i: ( tracks[i].last_done, -i ) )
    for i, t in enumerate( tracks ):
      for u, name in enumerate( UNITS ):
        s.unit_busy[i][ name ] += t.busy[u]
    return k, dict( tracks[ slowest ].cycles )

  def _tick_stream( s, tracks, progs, limit ):
    """pymtl3's ticks: the word sources stream the programs queued in them."""
    top = s.top
    dut, n = top.dut, len( progs )
    k = 0
    while True:
      top.sim_tick()
      if s.line_trace:
        print( top.line_trace() )
      for i in range( n ):
        tracks[i].cycle( k, int( dut.issued[i] ), int( dut.retired[i] ) )
      k += 1
      if all( int( dut.idle[i] ) for i in range( n ) ) and not any( src.q for src in top.src ):
        break
      if k >= limit:
        raise StepTimeout( s._stuck( limit, tracks, progs ) )
    return k

  def _stuck( s, limit, tracks, progs, left=None ):
    return top_stuck_report( f"step at position {s.pos}", limit, s.top, tracks,
                             lambda i, pc: progs[i][ pc ], left )

  def _run_func( s, progs ):
    limit = s.max_cycles or 100 * max( len( p ) for p in progs ) + 10_000
    for core, prog in zip( s.appliance.cores, progs ):
      core.ctrl.load( [ encode( inst ) for inst in prog ] )
    start = s.appliance.sim_cycle_count()
    while not s.appliance.idle():
      if s.appliance.sim_cycle_count() - start > limit:
        stuck = [ f"core {i}: {c.ctrl.line_trace().strip()}"
                  for i, c in enumerate( s.appliance.cores ) ]
        raise StepTimeout( f"step at position {s.pos} did not finish in {limit} cycles; "
                           + "; ".join( stuck ) )
      s.appliance.sim_tick()
    return s.appliance.sim_cycle_count() - start, None

  def seek( s, pos ):
    """The next step runs at position `pos`, over whatever the K/V cache
    holds (a step's cycles do not depend on its values): one step of a long
    generation, timed without the steps before it."""
    if not 0 <= pos < s.model.layout["max_tokens"]:
      raise ValueError( f"position {pos} is outside the compiled context of "
                        f"{s.model.layout['max_tokens']}" )
    s.pos = pos

  def step( s, token, want_logits ):
    m = s.model
    t0 = time.perf_counter()
    progs, classes = [], []
    for i in range( m.cores ):
      prog, cls = s.emitter.step( i, int( token ), s.pos, want_logits )
      S.count( prog, cls, m.dfx.d, m.cores, s.stats )
      progs.append( prog )
      classes.append( cls )
    if s.level == "func":
      cycles, per_class = s._run_func( progs )
    else:
      cycles, per_class = s._run_stream( progs, classes )
    cycles, per_class = add_host_step( m.dfx, cycles, per_class )
    s.cycles += cycles
    s.step_cycles.append( cycles )
    stage = "summarization" if s.prompt_len is None or s.pos < s.prompt_len else "generation"
    s.stage_cycles[ stage ] += cycles
    if per_class is not None:
      s.step_classes.append( per_class )
      for c, n in per_class.items():
        s.class_cycles[c] += n
    s.pos += 1
    logits = s.read_logits() if want_logits else None
    s.step_seconds.append( time.perf_counter() - t0 )
    return logits

  def read_logits( s ):
    lay = s.model.layout
    seg = lay["split"]["vocab"]
    addr = lay["ddr"]["regions"]["logits"]
    if s.level == "func":
      parts = [ ddr[ addr: ].reshape( -1 )[ :seg ] for _, ddr in s.model.images ]
    else:
      parts = [ p[ :seg ] for p in s._read_ddr( addr, ceil_div( seg, s.model.dfx.mem_word_elems ) ) ]
    return np.concatenate( parts )[ :s.model.gpt.vocab_size ].copy()

  def results( s ):
    """Cycles of the run so far: per step, per stage, per op class, per unit."""
    return dict( level=s.level, cycles=s.cycles, step_cycles=list( s.step_cycles ),
                 stage_cycles=dict( s.stage_cycles ), class_cycles=dict( s.class_cycles ),
                 step_classes=[ dict( c ) for c in s.step_classes ],
                 unit_busy=s.unit_busy, load_cycles=s.load_cycles,
                 readback_cycles=s.readback_cycles )

  def generate( s, prompt_ids, n_new, on_token=None, choose=greedy_token, stop_token=None,
                on_step=None ):
    """Summarization over the prompt, then n_new tokens (fewer if
    `stop_token` comes), each chosen by `choose` (greedy; or a seeded
    `gpt2.decoding.Sampler`); `gpt2.decoding.decode_loop` is the loop.
    `on_step(pos)` is called after each step (progress)."""
    if not prompt_ids:
      raise ValueError( "generation needs at least one prompt token" )
    if len( prompt_ids ) + n_new > s.model.layout["max_tokens"]:
      raise ValueError( f"{len(prompt_ids)} prompt + {n_new} new tokens exceed the compiled "
                        f"context of {s.model.layout['max_tokens']}" )
    s.prompt_len = s.pos + len( prompt_ids )
    step = s.step
    if on_step is not None:
      def step( token, want_logits ):
        logits = s.step( token, want_logits )
        on_step( s.pos )
        return logits
    out, logits = decode_loop( step, prompt_ids, n_new, choose, on_token, stop_token )
    s.last_logits = logits
    return out


def _depth_for( words, channels ):
  """Rows per channel (a power of two) that hold the largest of `words`."""
  words = max( words )
  rows = max( 2, ceil_div( words, channels ) )
  return 1 << ( rows - 1 ).bit_length()
