"""Register file manager at FL: owns the vector register file.

At FL the execution units read and write operands through this component's
`rf` (a `VectorRegisterFile`) directly, whole vectors at a time: that keeps
a full-size GPT-2 fast at FL.  The CL and RTL managers add the operand
collectors, ports and double buffering of the hardware.
"""

from pymtl3 import *

from .state import VectorRegisterFile


class RegisterFileManagerFL( Component ):

  def construct( s, cfg ):
    s.rf = VectorRegisterFile( cfg.vreg_entries, cfg.d )
    s.reads = 0

  def line_trace( s ):
    return "rf"
