"""Instruction-level routers (`funcsim.RouterFunc`) on a ring: the reference
the stream-level ring tests compare against."""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..units.control.msgs import DoneMsg, InstMsg


class Ring( Component ):
  """n routers on a ring, each with its own instruction / done ports."""

  def construct( s, Router, cfg, rfs ):
    n = len( rfs )
    s.routers = [ Router( cfg, rf, i, n ) for i, rf in enumerate( rfs ) ]
    for i in range( n ):
      setattr( s, f"recv{i}", RecvIfcRTL( InstMsg ) )
      setattr( s, f"send{i}", SendIfcRTL( DoneMsg ) )
      connect( getattr( s, f"recv{i}" ), s.routers[i].recv )
      connect( s.routers[i].send, getattr( s, f"send{i}" ) )
      connect( s.routers[i].ring_send, s.routers[ ( i + 1 ) % n ].ring_recv )

  def line_trace( s ):
    return " ".join( r.line_trace() for r in s.routers )
