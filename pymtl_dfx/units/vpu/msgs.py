"""Message types of the VPU engine's boundary, with widths from the ISA.

`VPUCmd` is what the engine needs of a decoded `VectorInst`: the opcode, the
length in elements and the broadcast flag.  Register numbers stay with the
register-file manager, which streams the operands (see `streams.py`).
"""

from pymtl3 import *

from ...isa import ComputeOp as C
from ...isa.formats import Header, VectorInst
from ..fpu.msgs import FP16, mk_fp16_vec

OpT    = Header.__bitstruct_fields__["op"]
LenT   = VectorInst.__bitstruct_fields__["len"]
BcastT = VectorInst.__bitstruct_fields__["bcast"]

# the VPU's opcode groups (defined by the enum's properties): which operand
# streams an op takes and how many results it gives
BINARY = C.group( "is_binary" )
REDUCTIONS = C.group( "is_reduction" )
MAX_REDUCTIONS = C.group( "is_max_reduction" )


@bitstruct
class VPUCmd:
  op:    OpT
  len:   LenT
  bcast: BcastT


def vpu_cmd( inst ):
  """The engine's command for a decoded VectorInst (length >= 1)."""
  if int( inst.len ) < 1:
    raise ValueError( f"vpu_cmd: a vector instruction needs len >= 1, got {int(inst.len)}" )
  return VPUCmd( inst.hdr.op, inst.len, inst.bcast )


@bitstruct
class VPUTreeMsg:
  """One chunk's tree result on its way to the accumulator (internal)."""
  v:      FP16
  is_max: Bits1      # max reduction (else sum)
  first:  Bits1      # the instruction's first chunk: the accumulator restarts
  last:   Bits1      # its last chunk: the accumulator's result leaves


@bitstruct
class VPUAccMsg:
  """A running value inside the accumulator's pipe (internal)."""
  v:    FP16
  last: Bits1

