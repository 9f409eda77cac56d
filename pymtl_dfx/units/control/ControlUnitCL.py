"""Control unit at CL: in-order issue to four units with a scoreboard.

The same rules as ControlUnitRTL, on Python objects, so the issue and done
cycles are the RTL's exactly (tests assert it):

  fetch      words enter through `inst` into an instruction buffer of
             cfg.inst_buffer_entries (rdy while not full); a word accepted
             in cycle t can issue from cycle t+1.  `load(words)` (as at FL)
             puts a whole program in the buffer before simulation.
  issue      the oldest buffered instruction is offered (val) to its unit
             when it has no hazard with a scoreboard entry, a scoreboard
             entry is free and its wait_* flags are met; it leaves when the
             unit is ready.  Younger instructions wait behind it.
  scoreboard cfg.scoreboard_entries entries, one per in-flight instruction
             (its footprint, unit, and per-unit sequence number).  Hazards
             (footprint.hazards): RAW, WAR, WAW.  An issue takes the lowest
             free entry.
  done       done[u].rdy while unit u has an instruction in flight whose
             token is not taken yet; the token frees the entry of u's
             oldest in-flight instruction (units answer in order) at the
             end of its cycle, or cfg.done_latency_cycles = D cycles later
             (a controller that learns of the completion late).  Checks in
             a cycle see the entries as they were at the start of the
             cycle: an instruction waiting for X issues at the earliest
             D + 1 cycles after X's token.
  chaining   an instruction with the chain bit is a chain producer; if the
             next instruction issued goes to the same unit, its src1 RAW and
             its WAW against the producer are not hazards (the unit streams
             the result into it and writes back in order).

The rules are run by `timing.IssueTiming` (shared with `pymtl_dfx.perf`);
this model drives the ports from it.

`scoreboard=False` disables the hazard checks (entries are still kept for
the done tokens, wait flags and the full stall): for tests that must see
the hazard tests fail.
"""

from pymtl3 import *

from ...config import DFXConfig
from .msgs import UNITS, unit_of
from .decode_cache import decoded
from .footprint import footprint_of, hazards
from .msgs import InstMsg
from .ports import declare_ports
from .timing import IssueTiming

DMA, MPU, VPU, ROUTER = range( 4 )
COMPUTE_UNITS = ( MPU, VPU )


class Candidate:
  """What the scheduler needs to know about one instruction word."""

  def __init__( s, word, cfg ):
    inst, op, kind = decoded( int( word ) )
    s.word = int( word )
    s.unit = unit_of( op, kind )
    s.fp = footprint_of( inst, op, kind, cfg.d, cfg.cores )
    s.chain = int( inst.hdr.chain )
    s.waits = [ u for u, flag in ( ( ( DMA, ), inst.hdr.wait_dma ),
                                   ( COMPUTE_UNITS, inst.hdr.wait_compute ),
                                   ( ( ROUTER, ), inst.hdr.wait_router ) )
                if int( flag ) for u in u ]


def stall_reasons( cand, entries, chain_idx, check_hazards=True ):
  """Why `cand` cannot issue now: a list of strings (empty: it can).

  entries: scoreboard slots (None or an object with unit, fp, and label).
  chain_idx: index of the chain producer issued right before, or None.
  """
  why = []
  for i, e in enumerate( entries ):
    if e is None:
      continue
    if check_hazards:
      chained = chain_idx == i and e.unit == cand.unit
      for h in hazards( cand.fp, e.fp, chained ):
        why.append( f"{h} with {e.label}" )
    if e.unit in cand.waits:
      why.append( f"wait_{'compute' if e.unit in COMPUTE_UNITS else UNITS[e.unit]} "
                  f"for {e.label}" )
  if all( e is not None for e in entries ):
    why.append( "scoreboard full" )
  return why


def _of( s, name ):
  t = s.__dict__.get( "t" )
  return None if t is None else getattr( t, name )


class ControlUnitCL( Component ):

  def construct( s, cfg=DFXConfig(), scoreboard=True ):
    s.cfg = cfg
    s.check_hazards = scoreboard
    declare_ports( s )

    s.preloaded = []
    s.cand = None
    s.t = t = IssueTiming( cfg, scoreboard, Candidate, stall_reasons )

    @update_once
    def up_ctrl_cl_comb():
      s.inst.rdy @= t.inst_rdy()
      s.cand, ok = t.offer()
      for u in range( len( UNITS ) ):
        s.issue[u].val @= ok and s.cand.unit == u
        s.issue[u].msg @= InstMsg( s.cand.word if s.cand is not None else 0 )
        s.done[u].rdy @= t.done_rdy( u )
      s.idle @= t.is_idle()

    @update_ff
    def up_ctrl_cl_seq():
      if s.reset:
        t.clear()
        t.buf = list( s.preloaded )
        return
      c = s.cand
      issued = c is not None and bool( s.issue[ c.unit ].val & s.issue[ c.unit ].rdy )
      dones = [ bool( s.done[u].val & s.done[u].rdy ) for u in range( len( UNITS ) ) ]
      t.tick( issued, dones, int( s.inst.msg ) if s.inst.val & s.inst.rdy else None )

  # the scheduler's state, as the tests and the host's diagnostics read it
  # (pymtl3 looks at every attribute while elaborating, before `t` exists)
  @property
  def entries( s ):
    return _of( s, "entries" )

  @property
  def chain_idx( s ):
    return _of( s, "chain_idx" )

  @property
  def inflight( s ):
    return _of( s, "inflight" )

  @property
  def buf( s ):
    return _of( s, "buf" )

  @property
  def pc( s ):
    return _of( s, "pc" )

  def load( s, words ):
    """Put a program in the instruction buffer (before simulation, or when
    idle); words may also stream in through `inst`."""
    if not s.is_idle():
      raise RuntimeError( "control unit: load while a program is running" )
    s.preloaded = [ int( w ) for w in words ]
    s.t.clear()
    s.t.buf = list( s.preloaded )

  def is_idle( s ):
    return s.t.is_idle()

  def line_trace( s ):
    sb = "".join( "." if e is None else UNITS[ e.unit ][0] for e in s.t.entries )
    return f"pc={s.t.pc:5d} [{sb}]"
