"""Hypothesis strategies for valid instructions (for tests; needs hypothesis).

Field values are drawn from the field widths in the bitstructs themselves,
so the strategies follow any change of a width constant or format.
"""

from hypothesis import strategies as st

from .codec import make
from .formats import format_of, used_slots
from .opcodes import all_ops


def field_values(slot):
  if slot.role.enum is not None:
    return st.sampled_from([int(m) for m in slot.role.enum])
  return st.integers(0, 2**(slot.hi - slot.lo) - 1)   # width in the bitstruct


def insts_of(op):
  """Valid instructions of one opcode, every used field random."""
  return st.fixed_dictionaries(
    {s.name: field_values(s) for s in used_slots(op)}
  ).map(lambda values: make(op, **values))


def insts(fmt=None):
  """Valid instructions of any opcode (of format fmt if given): the ISA's,
  so also those only a core with a design option runs (`ComputeOp.runs_on`;
  a program for a core draws its ops with `ComputeOp.group(prop, cfg)`)."""
  ops = [op for op in all_ops() if fmt is None or format_of(op) is fmt]
  return st.sampled_from(ops).flatmap(insts_of)
