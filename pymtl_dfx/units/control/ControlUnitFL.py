"""Control unit at FL: in-order issue, one instruction at a time.

FL gives the program's sequential meaning: an instruction is sent to its
unit (DMA, MPU, VPU or router) and the next one waits for its completion
token.  Overlap, the scheduler and the scoreboard are the CL and RTL
controllers' business; they must compute the same values.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL
from pymtl3.stdlib.stream.queue_adapters import RecvQueueAdapter, SendQueueAdapter

from ...isa import Kind
from .decode_cache import decoded
from .msgs import DoneMsg, InstMsg

UNITS = ( "dma", "mpu", "vpu", "router" )


def unit_of( op, kind ):
  if kind == Kind.DMA:
    return "dma"
  if kind == Kind.ROUTER:
    return "router"
  return "vpu" if op.on_vpu else "mpu"


class ControlUnitFL( Component ):

  def construct( s ):
    for u in UNITS:
      setattr( s, f"issue_{u}", SendIfcRTL( InstMsg ) )
      setattr( s, f"done_{u}", RecvIfcRTL( DoneMsg ) )
    # adapters in lists indexed like UNITS (update blocks index them by number)
    s.issue_q = [ SendQueueAdapter( InstMsg ) for _ in UNITS ]
    s.done_q = [ RecvQueueAdapter( DoneMsg ) for _ in UNITS ]
    for i, u in enumerate( UNITS ):
      connect( s.issue_q[i].send, getattr( s, f"issue_{u}" ) )
      connect( s.done_q[i].recv, getattr( s, f"done_{u}" ) )

    s.program = []
    s.pc = 0
    s.waiting = None
    s.issued = [ 0 for _ in UNITS ]

    @update_once
    def up_control():
      if s.waiting is not None and s.done_q[ s.waiting ].deq.rdy():
        s.done_q[ s.waiting ].deq()
        s.waiting = None
        s.pc += 1
      if s.waiting is None and s.pc < len( s.program ):
        word = s.program[ s.pc ]
        _, op, kind = decoded( word )
        unit = UNITS.index( unit_of( op, kind ) )
        if s.issue_q[ unit ].enq.rdy():
          s.issue_q[ unit ].enq( InstMsg( word ) )
          s.issued[ unit ] += 1
          s.waiting = unit

  def load( s, words ):
    """Start a new program (a list of 128-bit words)."""
    if not s.idle():
      raise RuntimeError( "control unit: load while a program is running" )
    s.program = [ int( w ) for w in words ]
    s.pc = 0

  def idle( s ):
    return s.waiting is None and s.pc >= len( s.program )

  def line_trace( s ):
    return f"pc={s.pc:5d} {'' if s.waiting is None else UNITS[s.waiting]:6s}"
