"""Instruction formats as PyMTL3 bitstructs.

Every format is INST_BITS wide and starts with the same `Header`, so a
decoder reads the kind and opcode from bits [HEADER_LO, INST_BITS) before it
knows the format.  A pymtl3 bitstruct packs its first field into the most
significant bits, so the header sits at the top of the word.

Fields are annotated with roles (fields.py); `_laid_out` turns those into
BitsN types and pads the format to INST_BITS with a zero `rsvd` field.  The
assembler, encoder, docs and tests all walk `layout(fmt)`, so adding a field
here (and its meaning in fields.FIELDS) is the whole change.
"""

from dataclasses import dataclass
from functools import lru_cache

from pymtl3 import bitstruct, mk_bits

from pymtl_dfx.config import ConfigError, DFXConfig

from .fields import (ELEMS, EXT, FIELDS, FLAG, FP16, INST_BITS, KIND, OPCODE,
                     POS, POST, VECS, VREG, Role, reserved)
from .opcodes import OPCODES, ComputeOp, DmaOp, Kind, PostOp, RouterOp

InstBits = mk_bits(INST_BITS)


def _laid_out(pad=True):
  """Replace Role annotations by BitsN; pad to INST_BITS if asked."""
  def wrap(cls):
    annotations = cls.__dict__["__annotations__"]
    roles = {}
    used = 0
    for name, ann in annotations.items():
      if isinstance(ann, Role):
        roles[name] = ann
        annotations[name] = ann.type
      used += annotations[name].nbits
    if used > INST_BITS:
      raise TypeError(f"{cls.__name__} needs {used} bits > {INST_BITS}")
    if pad and used < INST_BITS:
      roles["rsvd"] = reserved(INST_BITS - used)
      annotations["rsvd"] = roles["rsvd"].type
    cls.roles = roles
    return cls
  return wrap


@bitstruct
@_laid_out(pad=False)
class Header:
  kind:         KIND
  op:           OPCODE
  chain:        FLAG
  wait_dma:     FLAG
  wait_compute: FLAG
  wait_router:  FLAG


@bitstruct
@_laid_out()
class MatrixInst:
  hdr:   Header
  dst:   VREG
  src1:  VREG
  rows:  ELEMS
  cols:  ELEMS
  bias:  VREG
  post:  POST
  scale: FP16
  mask:  ELEMS


@bitstruct
@_laid_out()
class VectorInst:
  hdr:   Header
  dst:   VREG
  src1:  VREG
  src2:  VREG
  len:   ELEMS
  bcast: FLAG


@bitstruct
@_laid_out()
class DmaInst:
  hdr:   Header
  rf:    VREG
  addr:  EXT
  vecs:  VECS
  mpu:   FLAG
  tr:    FLAG
  pos:   POS
  rows:  ELEMS
  cmajor: FLAG


@bitstruct
@_laid_out()
class RouterInst:
  hdr:   Header
  rf:    VREG
  len:   ELEMS


FORMATS = (MatrixInst, VectorInst, DmaInst, RouterInst)
HEADER_LO = INST_BITS - Header.nbits


def op_mask(prop):
  """An elaboration-time constant with bit op set for each ComputeOp with
  property `prop` ("is_binary", ...): RTL tests the group as mask[op], which
  translates, so the hardware derives its groups from the enum too."""
  nbits = Header.__bitstruct_fields__["op"].nbits
  return mk_bits(1 << nbits)(sum(1 << int(op) for op in ComputeOp.group(prop)))

_BINARY = set(ComputeOp.group("is_binary"))

# Fields that only some opcodes of a format use; the others must leave them
# 0 (so every valid word has one text form).  Every other field is used by
# every opcode of its format.  chain is a compute feature: a DMA or router
# result has no next instruction to stream into.
RESTRICTED = {
  MatrixInst: {"bias": {ComputeOp.CONV1D},
               "scale": {ComputeOp.MASKEDMM},
               "mask": {ComputeOp.MASKEDMM}},
  VectorInst: {"src2": _BINARY, "bcast": _BINARY},
  DmaInst:    {"chain": set(),
               "mpu": {DmaOp.HBM_READ},
               "rows": {DmaOp.HBM_READ},
               "cmajor": {DmaOp.HBM_READ},
               "tr": {DmaOp.HBM_WRITE},
               "pos": {DmaOp.HBM_WRITE}},
  RouterInst: {"chain": set()},
}


def format_of(op) -> type:
  if isinstance(op, ComputeOp):
    return VectorInst if op.on_vpu else MatrixInst
  if isinstance(op, DmaOp):
    return DmaInst
  if isinstance(op, RouterOp):
    return RouterInst
  raise TypeError(f"{op!r} is not an opcode")


def ops_of(fmt) -> list:
  return [op for enum in OPCODES.values() for op in enum
          if format_of(op) is fmt]


@dataclass(frozen=True)
class Slot:
  """One leaf field of a format: its path in the bitstruct and its bits."""
  name: str
  path: tuple        # attribute path, e.g. ("hdr", "chain")
  role: Role
  lo: int            # least significant bit in the instruction word
  hi: int            # one past the most significant bit

  @property
  def field(self):
    return FIELDS[self.name]

  def get(self, inst) -> int:
    for attr in self.path:
      inst = getattr(inst, attr)
    return int(inst)


@lru_cache(maxsize=None)
def layout(fmt, _top=INST_BITS, _path=()) -> tuple:
  """Leaf fields of fmt from the most significant down, nested expanded."""
  slots = []
  for name, ftype in fmt.__bitstruct_fields__.items():
    lo = _top - ftype.nbits
    if name in fmt.roles:
      slots.append(Slot(name, _path + (name,), fmt.roles[name], lo, _top))
    else:
      slots += layout(ftype, _top, _path + (name,))
    _top = lo
  return tuple(slots)


# typed: opcodes of different enums with equal values must not share an entry
@lru_cache(maxsize=None, typed=True)
def used_slots(op) -> tuple:
  """The fields op gives a value to, in layout order (no kind/op/rsvd)."""
  fmt = format_of(op)
  only = RESTRICTED[fmt]
  return tuple(s for s in layout(fmt)
               if s.role.syntax not in ("implied", "rsvd")
               and (s.name not in only or op in only[s.name]))


def _check_enums_fit():
  # Opcode values are written once in opcodes.py; make sure they fit here.
  for enum, role in [(Kind, KIND), (PostOp, POST)] + \
                    [(e, OPCODE) for e in OPCODES.values()]:
    too_big = [m.name for m in enum if not 0 <= m.value <= role.max]
    if too_big:
      raise TypeError(f"{enum.__name__} {too_big} do not fit "
                      f"{role.bits_name}={role.bits}")


_check_enums_fit()


def check_config_fits(cfg: DFXConfig = None) -> None:
  """Raise ConfigError if a field is too narrow for cfg (one line per role,
  naming the fields, their width constant and what cfg needs)."""
  cfg = DFXConfig() if cfg is None else cfg
  fields = {}
  for fmt in FORMATS:
    for s in layout(fmt):
      if s.role.need is not None:
        fields.setdefault(s.role, []).append(s.name)
  errors = []
  for role, names in fields.items():
    need = role.need(cfg)
    if need > role.max:
      names = ", ".join(dict.fromkeys(names))
      errors.append(f"ISA field(s) {names} ({role.bits_name}={role.bits} "
                    f"bits, max {role.max}) cannot hold {need} = "
                    f"{role.need_doc}")
  if errors:
    raise ConfigError("DFXConfig does not fit the ISA: " + "; ".join(errors)
                      + " (widen the constant in pymtl_dfx/isa/fields.py)")
