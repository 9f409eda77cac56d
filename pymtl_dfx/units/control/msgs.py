"""The command boundary between the control unit and every execution unit.

The control unit sends an instruction word; the unit answers with a one-bit
completion token when the instruction has finished.  The same message types
are used at every level.
"""

from pymtl3 import *

from ...isa import INST_BITS, Kind

InstMsg = mk_bits( INST_BITS )
DoneMsg = Bits1

# the units the control unit issues to, in the order of its issue and done ports
UNITS = ( "dma", "mpu", "vpu", "router" )


def unit_of( op, kind ):
  if kind == Kind.DMA:
    return UNITS.index( "dma" )
  if kind == Kind.ROUTER:
    return UNITS.index( "router" )
  return UNITS.index( "vpu" if op.on_vpu else "mpu" )
