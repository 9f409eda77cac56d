"""The control unit's timing: the instruction buffer, in-order issue and
the scoreboard (`ControlUnitCL`'s docstring has the rules) on Python
values.

The one definition of when an instruction issues and when its entry frees:
`ControlUnitCL` drives its ports from this class, and `pymtl_dfx.perf`
runs it as is.  Per cycle: `inst_rdy()`, `offer()` (the oldest buffered
instruction and whether it may issue now: `stall_reasons` is empty) and
`done_rdy(u)`, all from state; then `tick(issued, dones, word)`.

A done token taken in cycle t frees its entry at the end of cycle
t + cfg.done_latency_cycles (a delay line of that many cycles per unit:
each unit answers in order, at most once a cycle); `done_rdy` counts the
tokens not yet taken, so the delay never holds a unit's token back.
"""

from .msgs import UNITS


class _Entry:
  def __init__( s, cand, seq, label ):
    s.unit, s.fp, s.seq, s.label = cand.unit, cand.fp, seq, label


class IssueTiming:

  def __init__( s, cfg, check_hazards=True, candidate=None, stall_reasons=None ):
    # the Candidate class and stall rule live with ControlUnitCL (their
    # users import them from there); passed in to avoid an import cycle
    s.cfg = cfg
    s.check_hazards = check_hazards
    s.Candidate, s.stall_reasons = candidate, stall_reasons
    s.cands = {}             # word -> Candidate (a program repeats its words)
    s.clear()

  def clear( s ):
    s.buf = []
    s.entries = [ None ] * s.cfg.scoreboard_entries
    s.issue_seq = [ 0 ] * len( UNITS )
    s.done_seq = [ 0 ] * len( UNITS )     # done tokens taken
    s.free_seq = [ 0 ] * len( UNITS )     # entries released (done_seq less the delayed)
    s.inflight = [ 0 ] * len( UNITS )     # issued, token not yet taken
    # per unit: was a token taken 1 .. done_latency_cycles cycles ago
    # (oldest first; plain lists: perf.fold compares them)
    s.delayed = [ [ False ] * s.cfg.done_latency_cycles for _ in UNITS ]
    s.chain_idx = None
    s.pc = 0
    s._offer = None          # cached (cand, ok) until the state changes

  def candidate( s, word ):
    c = s.cands.get( word )
    if c is None:
      c = s.cands[ word ] = s.Candidate( word, s.cfg )
    return c

  def inst_rdy( s ):
    return len( s.buf ) < s.cfg.inst_buffer_entries

  def offer( s ):
    """(the oldest buffered instruction's Candidate or None, may it issue)."""
    if s._offer is None:
      cand = s.candidate( s.buf[0] ) if s.buf else None
      ok = cand is not None and not s.stall_reasons( cand, s.entries, s.chain_idx,
                                                     s.check_hazards )
      s._offer = ( cand, ok )
    return s._offer

  def done_rdy( s, u ):
    return s.inflight[u] > 0

  def is_idle( s ):
    return not s.buf and not any( s.inflight ) and s.free_seq == s.done_seq

  def tick( s, issued, dones, word ):
    """issued: the offered instruction left this cycle; dones: per unit, its
    done handshake fired; word: the word taken on inst (or None)."""
    c = s._offer[0] if s._offer else None
    changed = issued or word is not None and not s.buf
    if issued:
      idx = s.entries.index( None )
    delay = s.cfg.done_latency_cycles
    for u, fired in enumerate( dones ):
      if fired:
        s.done_seq[u] += 1
        s.inflight[u] -= 1
      if delay:
        # the token taken `delay` cycles ago releases its entry now
        line = s.delayed[u]
        line.append( fired )
        fired = line.pop( 0 )
      if fired:
        i = next( i for i, e in enumerate( s.entries )
                  if e is not None and e.unit == u and e.seq == s.free_seq[u] )
        s.entries[i] = None
        s.free_seq[u] += 1
        changed = True
    if issued:
      s.entries[ idx ] = _Entry( c, s.issue_seq[ c.unit ], f"pc {s.pc}" )
      s.issue_seq[ c.unit ] += 1
      s.inflight[ c.unit ] += 1
      s.chain_idx = idx if c.chain else None
      s.buf.pop( 0 )
      s.pc += 1
    if word is not None:
      s.buf.append( int( word ) )
    if changed:
      s._offer = None
