"""Control unit at FL: in-order issue, one instruction at a time.

FL gives the program's sequential meaning: an instruction is offered to its
unit (DMA, MPU, VPU or router) and the next one waits for its completion
token.  Overlap, the scheduler and the scoreboard are the CL and RTL
controllers' business; they must compute the same values.
"""

from pymtl3 import *

from .decode_cache import decoded
from .msgs import UNITS, InstMsg, unit_of

class ControlUnitFL( Component ):

  def construct( s, cfg=None, scoreboard=True ):
    # cfg and scoreboard: one signature at every level; sequential issue
    # needs neither (inst is unbounded at FL, so it is always ready)
    from .ports import declare_ports
    declare_ports( s )

    s.program = []
    s.pc = 0
    s.offer = None          # (unit, word) on an issue port
    s.waiting = None        # unit whose completion is awaited
    s.issued = [ 0 for _ in UNITS ]

    @update_once
    def up_ctrl_ports():
      for i in range( len( UNITS ) ):
        s.issue[i].val @= ( s.offer is not None ) and ( s.offer[0] == i )
        if ( s.offer is not None ) and ( s.offer[0] == i ):
          s.issue[i].msg @= s.offer[1]
        s.done[i].rdy @= s.waiting == i
      s.inst.rdy @= 1
      s.idle @= s.is_idle()

    @update_ff
    def up_ctrl_state():
      if s.reset:
        s.offer = None
        s.waiting = None
        return
      if s.inst.val & s.inst.rdy:
        s.program.append( int( s.inst.msg ) )
      if s.offer is not None and ( s.issue[ s.offer[0] ].val & s.issue[ s.offer[0] ].rdy ):
        s.waiting = s.offer[0]
        s.issued[ s.waiting ] += 1
        s.offer = None
      if s.waiting is not None and ( s.done[ s.waiting ].val & s.done[ s.waiting ].rdy ):
        s.waiting = None
        s.pc += 1
      if s.offer is None and s.waiting is None and s.pc < len( s.program ):
        word = s.program[ s.pc ]
        _, op, kind = decoded( word )
        s.offer = ( unit_of( op, kind ), InstMsg( word ) )

  def load( s, words ):
    """Start a new program (a list of 128-bit words)."""
    if not s.is_idle():
      raise RuntimeError( "control unit: load while a program is running" )
    s.program = [ int( w ) for w in words ]
    s.pc = 0
    if s.program:
      _, op, kind = decoded( s.program[0] )
      s.offer = ( unit_of( op, kind ), InstMsg( s.program[0] ) )

  def is_idle( s ):
    return s.offer is None and s.waiting is None and s.pc >= len( s.program )

  def line_trace( s ):
    unit = "" if s.waiting is None else UNITS[ s.waiting ]
    return f"pc={s.pc:5d} {unit:6s}"
