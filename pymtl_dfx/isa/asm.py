"""Text assembler and disassembler.

Syntax (one instruction per line, `#` starts a comment, case-insensitive
mnemonics and keys, commas and spaces both separate operands):

  mnemonic  positional operands,  key=value ...  flags ...

  conv1d   v12, v0, rows=768 cols=2304 bias=v40 post=gelu chain
  maskedmm v20, v4, rows=64 cols=37 scale=0.125 mask=37 post=redmax
  mul      v30, v20, v21, len=37 bcast
  hbm_read mpu, 0x2000, vecs=1152 rows=768 wait_compute
  ddr_read v0, 0x40, vecs=12
  sync     v40, len=192

Positional operands are the register and memory operands of the format, in
format order: registers as `v<entry>`, external addresses as integers (the
disassembler writes hex).  Lengths, immediates and options are `key=value`;
one-bit options are bare flags.  FP16 immediates are decimal floats (rounded
to nearest even) or raw bit patterns in hex (`scale=0x3000`).  Which operands
an opcode takes comes from its format's fields (formats.py) and the
RESTRICTED table, never from this file.
"""

import re

import numpy as np

from .codec import IsaError, decode, fp16_bits, make, op_of, validate
from .fields import FIELDS
from .formats import used_slots
from .opcodes import all_ops

MNEMONICS = {op.mnemonic: op for op in all_ops()}
if len(MNEMONICS) != len(all_ops()):
  raise TypeError("two opcodes share a mnemonic")

_WORD = re.compile(r"[A-Za-z_]\w*$")
_VREG = re.compile(r"[vV](\d+)$")


class AsmError(IsaError):
  """Bad assembly text: names the line number, the line and the problem."""

  def __init__(self, line_no: int, text: str, problem: str):
    self.line_no, self.text, self.problem = line_no, text, problem
    super().__init__(f"line {line_no}: {problem}: {text.strip()!r}")


# ---- operand text <-> field value, by the role's syntax ----------------

def _parse_value(slot, tok: str) -> int:
  syntax, name = slot.role.syntax, slot.name
  if syntax == "vreg":
    m = _VREG.match(tok)
    if not m:
      raise IsaError(f"{name}: expected a vector register like v12, "
                     f"got {tok!r}")
    return int(m.group(1))
  if syntax == "enum":
    enum = slot.role.enum
    if tok.upper() not in enum.__members__:
      raise IsaError(f"{name}={tok}: expected one of "
                     f"{', '.join(m.mnemonic for m in enum)}")
    return int(enum[tok.upper()])
  if syntax == "fp16" and not tok.lower().startswith("0x"):
    try:
      value = float(tok)
    except ValueError:
      raise IsaError(f"{name}={tok}: expected a number") from None
    try:
      return fp16_bits(value)
    except IsaError as e:
      raise IsaError(f"{name}={tok}: {e}") from None
  try:
    return int(tok, 0)
  except ValueError:
    raise IsaError(f"{name}: expected an integer, got {tok!r}") from None


def _format_value(slot, value: int) -> str:
  syntax = slot.role.syntax
  if syntax == "vreg":
    return f"v{value}"
  if syntax == "addr":
    return f"{value:#x}"
  if syntax == "enum":
    return slot.role.enum(value).mnemonic
  if syntax == "fp16":
    h = np.uint16(value).view(np.float16)
    # numpy prints the shortest decimal that reads back to the same FP16;
    # NaNs keep their payload only as raw bits.
    return f"{value:#06x}" if np.isnan(h) else str(h)
  return str(value)


# ---- assembler ---------------------------------------------------------

def _parse_line(code: str):
  head, *rest = code.split(None, 1)
  op = MNEMONICS.get(head.lower())
  if op is None:
    raise IsaError(f"unknown mnemonic {head!r}")
  slots = positional, keyed, flags = operands_of(op)
  values, pending = {}, list(positional)
  tokens = [t for t in re.split(r"[,\s]+", rest[0]) if t] if rest else []
  for tok in tokens:
    key, eq, val = tok.partition("=")
    key = key.lower()
    if eq:
      if key not in keyed:
        raise IsaError(_misplaced(op, key, slots, "field"))
      if key in values:
        raise IsaError(f"{key}= given twice")
      values[key] = _parse_value(keyed[key], val)
    elif key in flags:
      alias_of = flags[key].field.alias
      if pending and alias_of == pending[0].name:
        values[pending.pop(0).name] = 0
      values[key] = 1
    elif _WORD.match(tok) and not _VREG.match(tok) and \
        (key in FIELDS or not pending):
      raise IsaError(_misplaced(op, key, slots, "flag"))
    else:
      if not pending:
        raise IsaError(f"too many operands at {tok!r} ({op.mnemonic} takes "
                       f"{', '.join(s.name for s in positional) or 'none'})")
      slot = pending.pop(0)
      values[slot.name] = _parse_value(slot, tok)
  if pending:
    s = pending[0]
    raise IsaError(f"missing operand {s.name}: {s.field.doc}")
  for name, s in keyed.items():
    if name not in values and not s.field.is_optional(op):
      raise IsaError(f"missing {name}=: {s.field.doc}")
  return make(op, **values)


def _misplaced(op, key, slots, noun) -> str:
  """Why key cannot be written as a `noun` (flag or field=) for op."""
  positional, keyed, flags = slots
  if key in {s.name for s in positional}:
    return f"{key} is a positional operand, not a {noun}"
  if key in keyed:
    return f"{key} is a key=value field, not a flag"
  if key in flags:
    return f"{key} is a flag, not a key=value field"
  if key in FIELDS:
    return f"{key} is not used by {op.mnemonic}"
  return f"unknown {noun} {key!r}"


def operands_of(op):
  """(positional slots, {name: keyed slot}, {name: flag slot}) of op."""
  positional, keyed, flags = [], {}, {}
  for s in used_slots(op):
    if s.field.positional:
      positional.append(s)
    elif s.role.syntax == "flag":
      flags[s.name] = s
    else:
      keyed[s.name] = s
  return positional, keyed, flags


def assemble(text: str) -> list:
  """Instruction objects of an assembly text."""
  insts = []
  for line_no, line in enumerate(text.splitlines(), 1):
    code = line.split("#", 1)[0].strip()
    if not code:
      continue
    try:
      insts.append(_parse_line(code))
    except IsaError as e:
      raise AsmError(line_no, line, str(e)) from None
  return insts


# ---- disassembler ------------------------------------------------------

def format_inst(inst) -> str:
  """One line of assembly for an instruction object."""
  validate(inst)
  op = op_of(inst)
  positional, keyed, flags = operands_of(op)
  set_flags = [n for n, s in flags.items() if s.get(inst)]
  operands = []
  for s in positional:
    value = s.get(inst)
    alias = [n for n in set_flags if flags[n].field.alias == s.name]
    if alias and value == 0:
      set_flags.remove(alias[0])
      operands.append(alias[0])
    else:
      operands.append(_format_value(s, value))
  options = [f"{n}={_format_value(s, s.get(inst))}" for n, s in keyed.items()
             if s.get(inst) or not s.field.is_optional(op)] + set_flags
  line = op.mnemonic
  if operands:
    line += " " + ", ".join(operands)
  if options:
    line += ("," if operands else "") + " " + " ".join(options)
  return line


def disassemble(insts) -> str:
  """Assembly text of instruction objects or encoded words, one per line."""
  return "".join(format_inst(i if hasattr(i, "hdr") else decode(i)) + "\n"
                 for i in insts)
