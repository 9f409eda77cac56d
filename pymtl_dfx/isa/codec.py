"""Build, check, encode and decode instructions; program images.

An instruction object is an instance of one of the format bitstructs
(MatrixInst, VectorInst, DmaInst, RouterInst).  `make` is the way to build
one from Python (the compiler's entry point); `encode` / `decode` convert to
and from the INST_BITS-wide word.  A program image is the words one after the
other, INST_BYTES each, little-endian (byte 0 = bits 7..0 of instruction 0).
"""

import math

import numpy as np
from pymtl3 import Bits

from ..atomic import write_bytes
from ..files import read_bytes
from .fields import INST_BITS, INST_BYTES
from .formats import (FORMATS, HEADER_LO, RESTRICTED, Header, InstBits,
                      format_of, layout, used_slots)
from .opcodes import OPCODES, Kind, kind_of


class IsaError(ValueError):
  """An instruction, word or program is invalid; the message says why."""


def fp16_bits(x: float) -> int:
  """Bit pattern of x rounded to FP16 (nearest even); overflow is an error."""
  with np.errstate(over="ignore"):
    h = np.float16(x)
  if math.isfinite(x) and not np.isfinite(h):
    raise IsaError("out of FP16 range (|x| <= 65504)")
  return int(h.view(np.uint16))


def fp16_value(bits: int) -> float:
  return float(np.uint16(bits).view(np.float16))


def op_of(inst):
  """The opcode enum member of an instruction object."""
  kind = Kind(int(inst.hdr.kind))
  return OPCODES[kind](int(inst.hdr.op))


def _check_value(slot, value) -> int:
  if slot.role.syntax == "fp16" and isinstance(value, float):
    try:
      value = fp16_bits(value)
    except IsaError as e:
      raise IsaError(f"{slot.name}={value!r}: {e}") from None
  if isinstance(value, Bits):
    value = int(value)
  if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
    raise IsaError(f"{slot.name}={value!r} is not an integer")
  value = int(value)
  if not 0 <= value <= slot.role.max:
    raise IsaError(f"{slot.name}={value} does not fit its {slot.role.bits}-"
                   f"bit field (0..{slot.role.max})")
  enum = slot.role.enum
  if enum is not None and value not in enum._value2member_map_:
    raise IsaError(f"{slot.name}={value} is not a {enum.__name__} "
                   f"({', '.join(m.mnemonic for m in enum)})")
  return value


def make(op, **values):
  """Instruction object for op; fields not given are 0.

  Header flags (chain, wait_*) are passed like any other field; values may
  be ints or Bits, and an FP16 field also takes a Python float.
  """
  slots = {s.name: s for s in used_slots(op)}
  unknown = set(values) - set(slots)
  if unknown:
    name = sorted(unknown)[0]
    fmt_names = {s.name for s in layout(format_of(op))}
    why = "is not used by" if name in fmt_names else "is not a field of"
    raise IsaError(f"field {name!r} {why} {op.mnemonic}")
  ints = {n: _check_value(slots[n], v) for n, v in values.items()}
  hdr = {n: ints.pop(n) for n in list(ints) if n in Header.roles}
  header = Header(kind=int(kind_of(op)), op=int(op), **hdr)
  return format_of(op)(hdr=header, **ints)


def validate(inst) -> None:
  """Raise IsaError unless inst is a valid instruction object."""
  fmt = type(inst)
  if fmt not in FORMATS:
    raise IsaError(f"{inst!r} is not an instruction object")
  kind = int(inst.hdr.kind)
  if kind not in Kind._value2member_map_:
    raise IsaError(f"kind {kind} is not an instruction kind")
  enum = OPCODES[Kind(kind)]
  if int(inst.hdr.op) not in enum._value2member_map_:
    raise IsaError(f"opcode {int(inst.hdr.op):#x} is not a {enum.__name__}")
  op = op_of(inst)
  if format_of(op) is not fmt:
    raise IsaError(f"{op.mnemonic} uses {format_of(op).__name__}, "
                   f"not {fmt.__name__}")
  used = {s.name for s in used_slots(op)}
  for s in layout(fmt):
    value = s.get(inst)
    if s.role.syntax == "rsvd" and value:
      raise IsaError(f"reserved bits [{s.hi - 1}:{s.lo}] are {value:#x}, "
                     "must be 0")
    if s.name in RESTRICTED[fmt] and s.name not in used and value:
      raise IsaError(f"field {s.name}={value} is not used by {op.mnemonic} "
                     "and must be 0")
    if s.name in used:
      _check_value(s, value)


def encode(inst) -> int:
  validate(inst)
  return int(inst.to_bits())


def decode(word):
  """Instruction object of an INST_BITS-bit word (int or Bits)."""
  word = int(word)
  if not 0 <= word < 1 << INST_BITS:
    raise IsaError(f"{word:#x} is not a {INST_BITS}-bit word")
  bits = InstBits(word)
  header = Header.from_bits(bits[HEADER_LO:INST_BITS])
  kind = int(header.kind)
  if kind not in Kind._value2member_map_:
    raise IsaError(f"word {word:#034x}: kind {kind} is not an instruction "
                   "kind")
  enum = OPCODES[Kind(kind)]
  if int(header.op) not in enum._value2member_map_:
    raise IsaError(f"word {word:#034x}: opcode {int(header.op):#x} is not a "
                   f"{enum.__name__}")
  inst = format_of(enum(int(header.op))).from_bits(bits)
  try:
    validate(inst)
  except IsaError as e:
    raise IsaError(f"word {word:#034x}: {e}") from None
  return inst


def program_to_bytes(insts) -> bytes:
  return b"".join(encode(i).to_bytes(INST_BYTES, "little") for i in insts)


def program_from_bytes(data: bytes) -> list:
  if len(data) % INST_BYTES:
    raise IsaError(f"program image of {len(data)} bytes is not a whole "
                   f"number of {INST_BYTES}-byte instructions")
  insts = []
  for i in range(0, len(data), INST_BYTES):
    try:
      insts.append(decode(int.from_bytes(data[i:i + INST_BYTES], "little")))
    except IsaError as e:
      raise IsaError(f"instruction {i // INST_BYTES} (byte {i}): {e}") \
        from None
  return insts


def write_program(path, insts) -> None:
  write_bytes(path, program_to_bytes(insts))


def read_program(path) -> list:
  # read_bytes: a regular file only, or one line (InputFileError) saying why not
  return program_from_bytes(read_bytes(path))
