"""The DMA's boundary, the same at FL, CL and RTL (what each port carries
and when: `msgs.py` and `streams.py`)."""

from ..control.msgs import DoneMsg, InstMsg
from .msgs import VregT, mk_dma_types


def declare_ports( s, cfg ):
  """Declare the ports on component `s`; returns the message types."""
  from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL
  T = mk_dma_types( cfg )
  s.inst = RecvIfcRTL( InstMsg )
  s.done = SendIfcRTL( DoneMsg )
  for name in ( "hbm", "ddr" ):
    spec = T[ name ]
    setattr( s, f"{name}_req",
             [ SendIfcRTL( spec.types["Req"] ) for _ in range( spec.channels ) ] )
    setattr( s, f"{name}_resp",
             [ RecvIfcRTL( spec.types["Resp"] ) for _ in range( spec.channels ) ] )
  s.w = SendIfcRTL( T["W"] )
  s.rf_wr = SendIfcRTL( T["RFWrite"] )
  s.rf_rd = SendIfcRTL( VregT )
  s.rf_rd_resp = RecvIfcRTL( T["Entry"] )
  return T
