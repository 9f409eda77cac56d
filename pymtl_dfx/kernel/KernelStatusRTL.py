"""The counters behind `s_axi_control`'s status registers, at RTL.

One output `st_<name>` per "status" register of `interface.register_map`
(the elaboration fails if the map names a register this component does not
count, or the other way round):

- `cycles`: cycles from the run's `start` pulse to its `done` pulse (done's
  cycle minus start's cycle; a run counts the cycles after start up to and
  including done).
- `busy_<unit>` (units as `control.msgs.UNITS`): cycles of the same window
  in which that unit had an instruction in flight, i.e. in which the count
  of its issue handshakes minus its done handshakes so far was above zero
  (an instruction issued in cycle i and retired in cycle r adds r - i
  cycles; overlapping instructions count once per cycle).  `issued` and
  `retired` carry bit u = unit u's handshake in this cycle.  The in-flight
  count is the hardware's own and is not cleared at start.
- `errors`: the sticky error bits, bit `ERROR_BITS[name]` set by a pulse on
  `err_<name>`, cleared by reset only (not by a start: the host reads them
  after a run that failed, also when a later run was started).
- `ring_tx_beats`, `ring_rx_beats`, `ring_tx_stalls`: cycles of
  `ring_tx_fire`, `ring_rx_fire` and `ring_tx_stall` (ring_tx valid but not
  ready: the link's back-pressure), counted in every cycle (a beat in the
  start cycle counts to the new run).  Beats the previous card sent before
  this card's start are taken before the clear and are not counted.

Every counter but `errors` is cleared by the `start` pulse.
"""

from pymtl3 import *

from ..units.control.msgs import UNITS
from .interface import ERROR_BITS, register_map

NU = len( UNITS )


class KernelStatusRTL( Component ):

  def construct( s, cfg ):
    status = { r.name: r.bits for r in register_map( cfg ) if r.kind == "status" }
    IB = clog2( cfg.scoreboard_entries + 1 ) + 1    # in flight per unit, never above the scoreboard's
    EW = max( ERROR_BITS.values() ) + 1

    s.start = InPort()
    s.done = InPort()
    s.issued = InPort( NU )
    s.retired = InPort( NU )
    for name in ERROR_BITS:
      setattr( s, f"err_{name}", InPort() )
    s.ring_tx_fire = InPort()
    s.ring_rx_fire = InPort()
    s.ring_tx_stall = InPort()

    s.running = Wire()
    s.cycles = Wire( status[ "cycles" ] )
    s.inflight = [ Wire( IB ) for _ in range( NU ) ]
    s.busy = [ Wire( status[ f"busy_{u}" ] ) for u in UNITS ]
    s.err_in = Wire( EW )
    s.errors = Wire( status[ "errors" ] )
    s.tx_beats = Wire( status[ "ring_tx_beats" ] )
    s.rx_beats = Wire( status[ "ring_rx_beats" ] )
    s.tx_stalls = Wire( status[ "ring_tx_stalls" ] )
    BB = status[ f"busy_{UNITS[ 0 ]}" ]
    assert all( status[ f"busy_{u}" ] == BB for u in UNITS )
    EB, TB, RB, SB = ( status[ n ] for n in ( "errors", "ring_tx_beats", "ring_rx_beats",
                                               "ring_tx_stalls" ) )
    assert EB >= EW

    for b in range( EW ):
      names = [ n for n, at in ERROR_BITS.items() if at == b ]
      if names:
        connect( s.err_in[ b ], getattr( s, f"err_{names[ 0 ]}" ) )
      else:
        s.err_in[ b ] //= 0

    counted = dict( cycles=s.cycles, errors=s.errors, ring_tx_beats=s.tx_beats,
                    ring_rx_beats=s.rx_beats, ring_tx_stalls=s.tx_stalls )
    counted.update( { f"busy_{u}": s.busy[ i ] for i, u in enumerate( UNITS ) } )
    assert set( counted ) == set( status ), \
      f"status registers without a counter {sorted( set( status ) - set( counted ) )}, " \
      f"counters without a register {sorted( set( counted ) - set( status ) )}"
    for name, wire in counted.items():
      port = OutPort( status[ name ] )
      setattr( s, f"st_{name}", port )
      port //= wire

    @update_ff
    def up_run():
      if s.reset:
        s.running <<= 0
        s.cycles <<= 0
      elif s.start:
        s.running <<= 1
        s.cycles <<= 0
      else:
        if s.done:
          s.running <<= 0
        if s.running:
          s.cycles <<= s.cycles + 1

    @update_ff
    def up_units():
      for u in range( NU ):
        if s.reset:
          s.inflight[ u ] <<= 0
        else:
          s.inflight[ u ] <<= s.inflight[ u ] + zext( s.issued[ u ], IB ) - zext( s.retired[ u ], IB )
        if s.reset | s.start:
          s.busy[ u ] <<= 0
        elif s.running & ( s.inflight[ u ] != 0 ):
          s.busy[ u ] <<= s.busy[ u ] + 1

    @update_ff
    def up_errors():
      if s.reset:
        s.errors <<= 0
      else:
        s.errors <<= s.errors | zext( s.err_in, EB )

    @update_ff
    def up_ring():
      if s.reset:
        s.tx_beats <<= 0
        s.rx_beats <<= 0
        s.tx_stalls <<= 0
      elif s.start:
        s.tx_beats <<= zext( s.ring_tx_fire, TB )
        s.rx_beats <<= zext( s.ring_rx_fire, RB )
        s.tx_stalls <<= zext( s.ring_tx_stall, SB )
      else:
        s.tx_beats <<= s.tx_beats + zext( s.ring_tx_fire, TB )
        s.rx_beats <<= s.rx_beats + zext( s.ring_rx_fire, RB )
        s.tx_stalls <<= s.tx_stalls + zext( s.ring_tx_stall, SB )

  def line_trace( s ):
    fl = "".join( str( min( 9, int( x ) ) ) for x in s.inflight )
    return f"[{'R' if s.running else '.'} c{int( s.cycles )} f{fl} e{int( s.errors ):x}]"
