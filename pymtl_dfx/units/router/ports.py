"""The router's boundary, the same at FL, CL and RTL (contract: `streams.py`)."""

from .streams import DoneMsg, mk_router_types


def declare_ports( s, cfg ):
  """The router's boundary, the same at every level; returns its types."""
  from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL
  T = mk_router_types( cfg )
  s.cmd = RecvIfcRTL( T["Cmd"] )
  s.rf_rd = RecvIfcRTL( T["Rd"] )
  s.rf_wr = SendIfcRTL( T["Wr"] )
  s.ring_send = SendIfcRTL( T["Packet"] )
  s.ring_recv = RecvIfcRTL( T["Packet"] )
  s.done = SendIfcRTL( DoneMsg )
  return T

