"""The MPU's boundary, the same at FL, CL and RTL (the stream contract is
`streams.py`):

  cmd   `MPUCmd`: one matrix instruction's command
  x     the input entries, replayed in tile order (d elements)
  w     one d x l weight tile per message, in tile order
  bias  l-lane bias slices in finish order (CONV1D)
  out   l results and the tile index (and a REDMAX message)
"""

from .msgs import MPUCmd, mk_mpu_types


def declare_ports( s, cfg ):
  """The MPU engine's boundary, the same at every level; returns its types."""
  from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL
  T = mk_mpu_types( cfg.d, cfg.l, cfg.psum_entries )
  s.cmd  = RecvIfcRTL( MPUCmd )
  s.x    = RecvIfcRTL( T["X"] )
  s.w    = RecvIfcRTL( T["W"] )
  s.bias = RecvIfcRTL( T["Bias"] )
  s.out  = SendIfcRTL( T["Out"] )
  return T

