"""The command boundary between the control unit and every execution unit.

The control unit sends an instruction word; the unit answers with a one-bit
completion token when the instruction has finished.  The same message types
are used at every level.
"""

from pymtl3 import *

from ...isa import INST_BITS

InstMsg = mk_bits( INST_BITS )
DoneMsg = Bits1
