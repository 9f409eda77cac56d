"""Backends: the one way to run programs on a modelled appliance.

A backend holds the appliance of one level and does three things:
  * memories: `write` regions of each core's HBM and DDR (a stream level
    through the memories' host ports, counted in `load_cycles`; `load` a
    compiled model's images) and `read_ddr` / `read` them back (counted in
    `readback_cycles`); the functional appliance computes on the arrays it
    was given, so it needs no load;
  * `run_programs(progs, classes, limit, what)`: one program per core
    (isa instruction objects; classes: each instruction's op class) from
    the first word offered until every core is idle and every word taken;
    returns (cycles, per-core `attribution.Progress`, or None where the
    level has no handshakes to watch: func), raises `StepTimeout` naming
    `what` past `limit` cycles;
  * `step(progs, classes, at)`: a token step (at = (token, pos, want
    logits)) checked and bounded as the host bounds it, its timing record
    (`attribution.step_record`: the host's cost added, the slowest core's
    classes, busy per unit per core; perf adds stalls, folded, skipped).

`FuncBackend` is the instruction-level functional appliance (`funcsim`);
`StreamBackend` the appliance of `core.Core`s at a stream level (fl, cl,
rtl, or verilog: the whole appliance one Verilator model ticked by
`drivers.VerilatedSteps`), driven by the port drivers of `drivers.HostTop`;
`appliance_backend` builds either for a compiled model.  `Host` (the
generation loop) runs over any backend with this interface, those built
above the appliance too (`perf.backend.PerfBackend`, the kernel's; every
level by name: `levels.backend_for`).
"""

import time

from pymtl3 import DefaultPassGroup

from ..core.Core import CORE_LEVELS, prepare_sim
from ..funcsim.ApplianceFunc import ApplianceFunc
from ..isa import DmaOp as D, Kind, encode, format_inst, op_of
from ..lib.arith import ceil_div
from ..units.control.footprint import footprint_of
from ..units.control.msgs import InstMsg
from ..units.dma.msgs import mk_dma_types
from ..units.dma.streams import tr_word0
from ..units.memory.msgs import array_to_words, words_to_array, write_requests
from ..units.regfile.ports import vector_error
from .attribution import Progress, step_record, units_of
from .drivers import HostTop, VerilatedSteps
from .liveness import StepTimeout, cycle_limit, top_stuck_report

# the levels this package builds; the kernel's and perf's: `levels`
APPLIANCE_LEVELS = ( "func", ) + CORE_LEVELS
MEMS = ( "hbm", "ddr" )


class ProgramError( ValueError ):
  pass


class FuncBackend:
  """The functional appliance over `mems` (per core its (HBM, DDR) word
  arrays, computed on in place)."""

  level = "func"
  data = True
  counts_busy, stalls = False, None     # no handshakes to watch

  def __init__( s, cfg, mems, readonly_hbm_words, max_cycles=None ):
    s.cfg, s.mems, s.max_cycles = cfg, mems, max_cycles
    s.top = ApplianceFunc( cfg, mems, readonly_hbm_words )
    s.top.elaborate()
    s.top.apply( DefaultPassGroup( linetrace=False ) )
    s.top.sim_reset()
    s.load_cycles = s.readback_cycles = 0

  def run_programs( s, progs, classes, limit, what ):
    for core, prog in zip( s.top.cores, progs ):
      core.ctrl.load( [ encode( inst ) for inst in prog ] )
    k = 0
    while not s.top.idle():
      if k >= limit:
        stuck = [ f"core {i}: {c.ctrl.line_trace().strip()}" for i, c in enumerate( s.top.cores ) ]
        raise StepTimeout( f"{what} did not finish in {limit} cycles; " + "; ".join( stuck ) )
      s.top.sim_tick()
      k += 1
    return k, None

  def step( s, progs, classes, at ):
    limit = s.max_cycles or 100 * max( len( p ) for p in progs ) + 10_000
    k, _ = s.run_programs( progs, classes, limit, f"step at position {at[1]}" )
    return step_record( s.cfg, k, None )

  def read_ddr( s, addr, n_words ):
    """n_words words from every core's DDR at addr, as flat FP16 arrays."""
    return [ ddr[ addr: addr + n_words ].reshape( -1 ) for _, ddr in s.mems ]


def prepare_probed( top, verilated, line_trace, probe, level ):
  """`core.prepare_sim` of `top` (its `dut` one Verilator model when
  `verilated`) with the probe's wave: pymtl3's at a Python level,
  Verilator's for a Verilated dut; the probe's files are closed if the
  build fails."""
  if probe is not None:
    probe.check_level( "verilog" if verilated else level )
  wave = probe.verilator_build() if probe is not None and verilated else None
  try:
    top = prepare_sim( top, [ "dut" ] if verilated else (), linetrace=line_trace, wave=wave )
    if probe is not None:
      probe.attach( top )
  except BaseException:
    if probe is not None:
      probe.close()
    raise
  return top


class StreamBackend:
  """`cores` `core.Core`s at `level` (and `levels` per unit) inside
  `drivers.HostTop`, memories of hbm_depth / ddr_depth rows per channel.
  `max_cycles` bounds a step (default: `liveness.cycle_limit`);
  `runtime_id`: the cores' ring positions as inputs (`Appliance`; always so
  at verilog).
  `probe` (`waves.Probe`): the wave and line trace of a cycle window;
  `cycle` counts every clock edge since reset (loads, steps, read-backs),
  the probe's cycles; `step_starts` holds each step's first cycle."""

  data = True
  counts_busy, stalls = True, None

  def __init__( s, cfg, cores, level, levels, hbm_depth, ddr_depth, line_trace=False,
                max_cycles=None, runtime_id=False, probe=None ):
    s.cfg, s.cores, s.level = cfg, cores, level
    s.max_cycles, s.line_trace = max_cycles, line_trace
    s.probe = probe
    T = mk_dma_types( cfg )
    s.specs = { m: T[m] for m in MEMS }
    s.depth = { "hbm": hbm_depth, "ddr": ddr_depth }
    whole = level == "verilog"
    # Verilated whole, every core is the one module with its ring position
    # an input: the form the kernel and `dfx verilog` ship, so the tests
    # Verilate what goes to the card
    top = HostTop( cfg, cores, levels, hbm_depth, ddr_depth, "rtl" if whole else level,
                   runtime_id or whole )
    t0 = time.perf_counter()
    s.top = prepare_probed( top, whole, line_trace, probe, level )
    s.build_seconds = time.perf_counter() - t0
    # the line trace reads pymtl3's ports: the tight loop would leave them stale
    traced = line_trace or ( probe is not None and probe.trace is not None )
    s.fast = VerilatedSteps( s.top.dut, cores ) if whole and not traced else None
    s.top.sim_reset()
    s.load_cycles = s.readback_cycles = 0
    s.cycle = 0
    s.step_starts = []

  def reset( s ):
    s.top.sim_reset()

  def close( s ):
    """Finish the probe's files (the run's end, or its failure: a wave of a
    step that hangs is what it was taken for)."""
    if s.probe is not None:
      s.probe.close()

  def tick( s ):
    """One clock edge of the whole top through pymtl3 (`cycle` counted)."""
    p, k = s.probe, s.cycle
    if p is not None:
      p.before_edge( k )
    s.top.sim_tick()
    if s.line_trace:
      print( s.top.line_trace() )
    if p is not None:
      p.after_edge( k, s.top )
    s.cycle = k + 1

  # -- memories through the host ports -------------------------------------------

  def tick_until( s, cond, limit, what ):
    n = 0
    while not cond():
      if n >= limit:
        raise StepTimeout( f"{what} did not finish in {limit} cycles" )
      s.tick()
      n += 1
    return n

  def _stores( s, m, i ):
    """The channel stores of memory m of core i at a Python level (FL/CL
    memories), else None."""
    mem = getattr( s.top.dut.cores[i], m, None ) if s.fast is None else None
    return getattr( mem, "store", None )

  def _direct( s ):
    return all( s._stores( m, i ) is not None for m in MEMS for i in range( s.cores ) )

  def write( s, regions, direct=False, what="writing the memory words" ):
    """regions: per core, memory -> [(word address, [n, elems] FP16)].
    `direct`: at Python memories, straight into their stores (no cycles);
    else (and always at Verilog) through the host ports, counted in
    load_cycles."""
    if direct and s._direct():
      for i, mems in enumerate( regions ):
        for m in MEMS:
          st_ = s._stores( m, i )
          C = len( st_ )
          for a, w in mems.get( m, () ):
            for k, word in enumerate( array_to_words( w ) ):
              st_[ ( a + k ) % C ].rows[ ( a + k ) // C ] = word
      return
    want = []
    for i, mems in enumerate( regions ):
      for m in MEMS:
        port = getattr( s.top, m )[i]
        port.got.clear()
        for a, w in mems.get( m, () ):
          port.q.extend( write_requests( port.Req, w, a ) )
        want.append( ( port, sum( len( w ) for _, w in mems.get( m, () ) ) ) )
    limit = 100 * sum( n for _, n in want ) + 10_000
    s.load_cycles += s.tick_until( lambda: all( len( p.got ) >= n for p, n in want ), limit, what )

  def load( s, images ):
    """A compiled model's memory images (per core (HBM, DDR)) from word 0."""
    s.write( [ { m: [ ( 0, a ) ] for m, a in zip( MEMS, img ) } for img in images ],
             what="loading the memory images" )

  def read( s, m, ranges, direct=False, what=None ):
    """ranges: per core, [(lo, hi)] word ranges of memory m; returns per
    core one [hi-lo, elems] FP16 array per range (read through the host
    ports, all cores at once, counted in readback_cycles; `direct`: from a
    Python memory's stores)."""
    E = s.cfg.mem_word_elems
    if direct and s._direct():
      out = []
      for i, rs in enumerate( ranges ):
        st_ = s._stores( m, i )
        C = len( st_ )
        out.append( [ words_to_array( ( st_[ a % C ].rows[ a // C ] for a in range( lo, hi ) ), E )
                      for lo, hi in rs ] )
      return out
    ports = getattr( s.top, m )
    want = []
    for port, rs in zip( ports, ranges ):
      port.got.clear()
      for lo, hi in rs:
        port.q.extend( port.Req( 0, a, 0, 0 ) for a in range( lo, hi ) )
      want.append( sum( hi - lo for lo, hi in rs ) )
    most = max( want, default=0 )
    s.readback_cycles += s.tick_until( lambda: all( len( p.got ) >= n for p, n in zip( ports, want ) ),
                                       100 * most + 10_000, what or f"reading {m} back" )
    out = []
    for port, rs in zip( ports, ranges ):
      got, k, arrs = port.got, 0, []
      for lo, hi in rs:
        arrs.append( words_to_array( got[ k: k + hi - lo ], E ) )
        k += hi - lo
      out.append( arrs )
    return out

  def read_ddr( s, addr, n_words ):
    """n_words words from every core's DDR at addr, as flat FP16 arrays."""
    got = s.read( "ddr", [ [ ( addr, addr + n_words ) ] ] * s.cores, what="reading the logits" )
    return [ a[0].reshape( -1 ) for a in got ]

  # -- programs -------------------------------------------------------------------

  def check_program( s, core, prog ):
    """Raise ProgramError if an instruction reaches past the register file
    or the modelled memories (which would alias, not fail)."""
    cfg = s.cfg
    EW = cfg.entry_words
    for pc, inst in enumerate( prog ):
      op, kind = op_of( inst ), Kind( int( inst.hdr.kind ) )
      fp = footprint_of( inst, op, kind, cfg.d, cfg.cores )
      for r in fp.reads + ( fp.write, ):
        if r.count and r.end > cfg.vreg_entries:
          raise ProgramError( f"core {core} pc {pc} ({format_inst( inst )}): registers {r} "
                              f"run past the {cfg.vreg_entries} entries of the register file" )
      if kind == Kind.COMPUTE and op.on_vpu:
        why = vector_error( inst, cfg.d, cfg )
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

  def run_programs( s, progs, classes, limit, what ):
    top = s.top
    tracks = [ Progress( units_of( p ), c ) for p, c in zip( progs, classes ) ]

    def stuck( limit, left=None ):
      return top_stuck_report( what, limit, top, tracks, lambda i, pc: progs[i][ pc ], left )

    if s.fast is not None:
      try:
        k = s.fast.run( progs, tracks, limit, stuck, s.probe, s.cycle )
        s.cycle += k
        # the tight loop clocks the model past pymtl3's cycle count
        s.top.cycles_outside_sim = getattr( s.top, "cycles_outside_sim", 0 ) + k
      except StepTimeout:
        s.cycle += limit
        raise
      return k, tracks
    # pymtl3's ticks: the word sources stream the programs queued in them
    for src, prog in zip( top.src, progs ):
      src.push( InstMsg( encode( inst ) ) for inst in prog )
    dut, n = top.dut, len( progs )
    k = 0
    while True:
      s.tick()
      for i in range( n ):
        tracks[i].cycle( k, int( dut.issued[i] ), int( dut.retired[i] ) )
      k += 1
      if all( int( dut.idle[i] ) for i in range( n ) ) and not any( src.q for src in top.src ):
        return k, tracks
      if k >= limit:
        raise StepTimeout( stuck( limit ) )

  def step( s, progs, classes, at ):
    for i, prog in enumerate( progs ):
      s.check_program( i, prog )
    s.step_starts.append( s.cycle )
    limit = s.max_cycles or cycle_limit( s.cfg, s.specs, progs )
    k, tracks = s.run_programs( progs, classes, limit, f"step at position {at[1]}" )
    return step_record( s.cfg, k, tracks )


def appliance_backend( compiled, level, levels=None, max_cycles=None, hbm_depth=None,
                       ddr_depth=None, line_trace=False, runtime_id=False, probe=None ):
  """The backend of an appliance level (APPLIANCE_LEVELS: func, or a stream
  level) for a compiled model (or a `perf.Planned` one: no memory images,
  so not func), memory depths by default the smallest that hold the images
  or the layout, the images loaded; `probe` (`waves.Probe`, a stream level
  only): its wave and line trace.  The levels built above the appliance
  (perf, kernel, fpga) are `levels.backend_for`'s."""
  if level not in APPLIANCE_LEVELS:
    raise ValueError( f"level {level!r} is not an appliance level (have: "
                      f"{', '.join( APPLIANCE_LEVELS )}); every level: pymtl_dfx.levels" )
  if probe is not None and level not in CORE_LEVELS:
    raise ValueError( f"a wave or line trace needs a simulated level (fl, cl, rtl, verilog, "
                      f"kernel), not {level}" )
  cfg = compiled.dfx
  images = getattr( compiled, "images", None )   # None: a `perf.Planned` model
  if level == "func":
    if images is None:
      raise ValueError( "the functional appliance computes on the weights: compile the model "
                        "(a planned model without memory images runs at fl, cl, rtl, verilog)" )
    if levels:
      raise ValueError( "per-unit levels need a stream level (fl, cl, rtl, verilog), not func" )
    return FuncBackend( cfg, images, compiled.readonly_hbm_words, max_cycles )
  depth = memory_depths( compiled, hbm_depth, ddr_depth )
  return loaded( StreamBackend( cfg, compiled.cores, level, levels, depth["hbm"], depth["ddr"],
                                line_trace, max_cycles, runtime_id, probe ), compiled )


def memory_depths( compiled, hbm_depth=None, ddr_depth=None ):
  """{memory: rows per channel} of a stream level's (or the kernel's)
  memories: by default the smallest power of two that holds each core's
  image (a planned model: its layout's words); ProgramError when a given
  depth is too small."""
  cfg = compiled.dfx
  images = getattr( compiled, "images", None )
  T = mk_dma_types( cfg )
  # a planned model's memories hold zeros: its layout's words, none loaded
  need = { m: ( [ img[k].shape[0] for img in images ] if images is not None
                else [ compiled.layout[m]["words"] ] )
           for k, m in enumerate( MEMS ) }
  depth = { "hbm": hbm_depth or _depth_for( need["hbm"], T["hbm"].channels ),
            "ddr": ddr_depth or _depth_for( need["ddr"], T["ddr"].channels ) }
  for m in MEMS:
    words = depth[m] * T[m].channels
    for i, n in enumerate( need[m] ):
      if n > words:
        raise ProgramError( f"core {i}: the {m.upper()} image has {n} words; "
                            f"the modelled memory holds {words} ({m}_depth={depth[m]} rows "
                            f"x {T[m].channels} channels)" )
  return depth


def loaded( b, compiled ):
  """Backend `b` with a compiled model's images loaded (a planned model's:
  none); closed if the load fails."""
  images = getattr( compiled, "images", None )
  if images is not None:
    try:
      b.load( images )
    except BaseException:
      b.close()
      raise
  return b


def _depth_for( words, channels ):
  """Rows per channel (a power of two) that hold the largest of `words`."""
  words = max( words )
  rows = max( 2, ceil_div( words, channels ) )
  return 1 << ( rows - 1 ).bit_length()
