"""The router's boundary, the same at FL, CL and RTL (contract: `streams.py`).

Besides the streams, every level has the input `core_id` (`CoreIdT`, the
ring packet's `src` field): the core's position on the ring, which the
router puts into its own packets and from which it decides what to forward.
It is an input and not an elaboration constant, so one RTL image serves
every card of a ring (`Core(..., runtime_id=True)`); the ring size `cores`
stays an elaboration parameter.  The port exists at every level (FL and CL
read it as the RTL does), so the boundary is one declaration, the core ties
it in one place whatever its units' levels, and a core whose position is an
input simulates at every level.  Whoever builds the unit drives the port:
`Core` with its constant position or its own `core_id` input, `RouterRing`
with each router's index.
"""

from pymtl3 import Bits8

from .streams import DoneMsg, mk_router_types

CoreIdT = Bits8           # the ring packet's src (`msgs.mk_ring_packet`)


def declare_ports( s, cfg ):
  """The router's boundary, the same at every level; returns its types."""
  from pymtl3 import InPort
  from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL
  T = mk_router_types( cfg )
  s.cmd = RecvIfcRTL( T["Cmd"] )
  s.rf_rd = RecvIfcRTL( T["Rd"] )
  s.rf_wr = SendIfcRTL( T["Wr"] )
  s.ring_send = SendIfcRTL( T["Packet"] )
  s.ring_recv = RecvIfcRTL( T["Packet"] )
  s.done = SendIfcRTL( DoneMsg )
  s.core_id = InPort( CoreIdT )
  return T
