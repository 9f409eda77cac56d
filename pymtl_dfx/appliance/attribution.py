"""Cycle attribution: which op class and unit each cycle of a step is
charged to, and the sums of a run's steps (docs/core.md).

A cycle of a step is charged, on each core, to the op class of the oldest
instruction of that core's program not yet completed (its done token not
yet taken); once all have completed, to the last one's (`Progress`).  The
step's classes are the slowest core's (the one whose last instruction
completes last, ties to the lowest id: `slowest_core`), so they sum exactly
to the step's cycles.  Then every step, at every level (and in `perf`),
adds the host's per-step cost (`DFXConfig.host_step_cycles`: the blocking
transfers that put the token in and take the result out) to its cycles,
charged to the op class "host" (`add_host_step`).  A unit is busy in a
cycle when it holds an issued, not yet completed instruction at the start
of that cycle.

A step's timing record (`step_record`) is a dict: cycles (with the host's
cost), classes (op class -> cycles, or None where the level has no
handshakes to watch: func) and busy (per core, unit -> busy cycles, or
None); perf adds stalls (per core, unit -> cause -> cycles), folded and
skipped.  A run's result (`empty_result`, `add_step`) is the one shape
`Host.results()` and `perf.run` return.
"""

from ..compiler import stats as S
from ..isa import Kind, op_of
from ..units.control.msgs import UNITS, unit_of

STAGES = ( "summarization", "generation" )


def units_of( prog ):
  """The unit of each instruction of a program (isa instruction objects)."""
  return [ unit_of( op_of( inst ), Kind( int( inst.hdr.kind ) ) ) for inst in prog ]


class Progress:
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


def slowest_core( tracks ):
  """The core whose last instruction completes last (ties: the lowest id)."""
  return max( range( len( tracks ) ), key=lambda i: ( tracks[i].last_done, -i ) )


def add_host_step( cfg, cycles, per_class ):
  """A step's cycles and op classes with the host's per-step cost added:
  the one place it is charged (the hosts at every level, `perf`)."""
  h = cfg.host_step_cycles
  if per_class is not None:
    per_class = dict( per_class )
    per_class["host"] = per_class.get( "host", 0 ) + h
  return cycles + h, per_class


def step_record( cfg, cycles, tracks ):
  """One step's timing record from its cycles and per-core `Progress`es
  (None: no handshakes watched), the host's cost added."""
  if tracks is None:
    k, _ = add_host_step( cfg, cycles, None )
    return dict( cycles=k, classes=None, busy=None )
  k, per_class = add_host_step( cfg, cycles, tracks[ slowest_core( tracks ) ].cycles )
  busy = [ { name: t.busy[u] for u, name in enumerate( UNITS ) } for t in tracks ]
  return dict( cycles=k, classes=per_class, busy=busy )


def empty_result( level, cores, busy=True, stalls=None ):
  """A run's result before its first step: cycles in total, per step, per
  stage, per op class and per step's op classes, busy cycles per unit of
  every core (None: not counted), and with `stalls` (the causes) the
  stalled cycles per unit and cause."""
  res = dict( level=level, cycles=0, step_cycles=[], stage_cycles=dict.fromkeys( STAGES, 0 ),
              class_cycles=dict.fromkeys( S.CYCLE_CLASSES, 0 ), step_classes=[],
              unit_busy=[ dict.fromkeys( UNITS, 0 ) for _ in range( cores ) ] if busy else None )
  if stalls is not None:
    res["unit_stalls"] = [ { u: dict.fromkeys( stalls, 0 ) for u in UNITS } for _ in range( cores ) ]
  return res


def add_step( res, step, stage ):
  """Adds one step's timing record to a run's result (`stage`: one of
  STAGES); perf's folded layers and skipped cycles, when the record has
  them, are listed per step."""
  res["cycles"] += step["cycles"]
  res["step_cycles"].append( step["cycles"] )
  res["stage_cycles"][ stage ] += step["cycles"]
  if step["classes"] is not None:
    res["step_classes"].append( step["classes"] )
    for c, n in step["classes"].items():
      res["class_cycles"][c] += n
  if step["busy"] is not None:
    for total, busy in zip( res["unit_busy"], step["busy"] ):
      for name, n in busy.items():
        total[ name ] += n
  if "stalls" in step:
    for total, stalls in zip( res["unit_stalls"], step["stalls"] ):
      for name, why in stalls.items():
        for k, n in why.items():
          total[ name ][k] += n
  for key, name in ( ( "folded", "folded_layers" ), ( "skipped", "skipped_cycles" ) ):
    if key in step:
      res.setdefault( name, [] ).append( step[ key ] )
