"""Register file manager at FL: owns the vector register file.

At FL the execution units read and write operands through this component's
`rf` (a `VectorRegisterFile`) directly, whole vectors at a time: that keeps
a full-size GPT-2 fast at FL.  `RegisterFileManagerFL`, `...CL` and
`...RTL` are the manager behind its ports (`ports.py`, docs/regfile.md):
operand collectors, write-back and double buffering.
"""

from pymtl3 import *

from ..units.regfile.state import VectorRegisterFile


class RegisterFileFunc( Component ):

  def construct( s, cfg ):
    s.rf = VectorRegisterFile( cfg.vreg_entries, cfg.d )
    s.reads = 0

  def line_trace( s ):
    return "rf"
