"""The VPU's boundary, the same at FL, CL and RTL (contract: `streams.py`):
cmd (`VPUCmd`), operand chunks a and b, result chunks out (d elements)."""

from ..fpu.msgs import mk_fp16_vec
from .msgs import VPUCmd


def declare_ports( s, d ):
  """Declare the ports on component `s`; returns the chunk type."""
  from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL
  Vec = mk_fp16_vec( d )
  s.cmd = RecvIfcRTL( VPUCmd )
  s.a   = RecvIfcRTL( Vec )
  s.b   = RecvIfcRTL( Vec )
  s.out = SendIfcRTL( Vec )
  return Vec
