"""Opcode enums: values fit, mnemonics are unique, every opcode has a format."""

import pytest

from pymtl_dfx.isa import (OPCODES, ComputeOp, Header, Kind, PostOp,
                           all_ops, format_of, kind_of)
from pymtl_dfx.isa.asm import MNEMONICS


def test_every_opcode_has_one_mnemonic():
  assert sorted(MNEMONICS) == sorted(op.mnemonic for op in all_ops())
  for op in all_ops():
    assert MNEMONICS[op.mnemonic] is op


def test_opcode_values_fit_the_header():
  for enum in list(OPCODES.values()) + [Kind]:
    name = "kind" if enum is Kind else "op"
    width = Header.get_field_type(name).nbits
    assert all(0 <= m.value < 1 << width for m in enum), enum


def test_kind_zero_is_not_an_instruction():
  assert 0 not in {k.value for k in Kind}


def test_mpu_and_vpu_ops_split_on_one_bit():
  matrix = {ComputeOp.CONV1D, ComputeOp.MASKEDMM, ComputeOp.MM}
  for op in ComputeOp:
    assert op.on_vpu == (op not in matrix)
    assert format_of(op).__name__ == ("VectorInst" if op.on_vpu
                                      else "MatrixInst")


def test_kind_of():
  for kind, enum in OPCODES.items():
    for op in enum:
      assert kind_of(op) is kind
  with pytest.raises(TypeError):
    kind_of(PostOp.GELU)


def test_every_member_is_documented():
  for enum in list(OPCODES.values()) + [Kind, PostOp]:
    assert all(m.doc for m in enum), enum
