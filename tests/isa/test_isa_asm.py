"""Assembler / disassembler: round trips, the documented syntax, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymtl_dfx.isa import (FORMATS, AsmError, ComputeOp, DmaOp, MatrixInst,
                           PostOp, assemble, disassemble, encode, fp16_value,
                           layout, make)
from pymtl_dfx.isa.asm import _format_value, _parse_value
from pymtl_dfx.isa.strategies import insts


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_disassemble_assemble_round_trip(fmt, data):
  prog = data.draw(st.lists(insts(fmt), min_size=1, max_size=4))
  text = disassemble(prog)
  assert assemble(text) == prog
  assert disassemble([encode(i) for i in prog]) == text


def test_documented_example():
  # the example block of the module docstring, so the doc cannot drift
  from pymtl_dfx.isa import asm
  text = asm.__doc__.split("flags ...")[1].split("Positional")[0]
  conv, mm, mul, rd, ddr, sync = assemble(text)
  assert conv == make(ComputeOp.CONV1D, dst=12, src1=0, rows=768, cols=2304,
                      bias=40, post=PostOp.GELU, chain=1)
  assert fp16_value(int(mm.scale)) == 0.125 and int(mm.mask) == 37
  assert int(mul.bcast) == 1
  assert rd == make(DmaOp.HBM_READ, mpu=1, addr=0x2000, vecs=1152, rows=768,
                    wait_compute=1)
  assert int(ddr.addr) == 0x40 and int(sync.len) == 192


def test_syntax_is_forgiving_about_separators_and_case():
  a = assemble("ADD v1, v2, v3, len=4 BCAST")
  b = assemble("add v1 v2 v3 len=4,bcast   # comment")
  assert a == b


def test_mpu_flag_may_stand_for_the_register():
  by_alias, = assemble("hbm_read mpu, 0x10, vecs=2")
  grid, = assemble("hbm_read mpu, 0x10, vecs=32 rows=70 cmajor")
  assert (int(grid.rows), int(grid.cmajor)) == (70, 1)
  assert disassemble([grid]) == "hbm_read mpu, 0x10, vecs=32 rows=70 cmajor\n"
  plain, = assemble("hbm_read v3, 0x10, vecs=2")        # rows= optional for hbm_read only
  assert int(plain.rows) == 0
  by_flag, = assemble("hbm_read v0, 0x10, vecs=2 mpu")
  assert by_alias == by_flag
  assert disassemble([by_alias]) == "hbm_read mpu, 0x10, vecs=2\n"


def test_every_fp16_pattern_survives_text():
  # numpy's shortest repr must read back to the same bits; NaNs go as hex.
  # The text codec is checked on all patterns directly (the full assembler
  # path is covered by the round trips above and would take seconds here).
  scale = next(s for s in layout(MatrixInst) if s.name == "scale")
  for bits in range(1 << 16):
    assert _parse_value(scale, _format_value(scale, bits)) == bits


def test_fp16_immediates_round_to_nearest_even():
  inst, = assemble("maskedmm v0, v0, rows=1 cols=1 mask=1 scale=0.1")
  assert int(inst.scale) == int(np.float16(0.1).view(np.uint16))
  inst, = assemble("maskedmm v0, v0, rows=1 cols=1 mask=1 scale=0x3000")
  assert fp16_value(int(inst.scale)) == 0.125


@pytest.mark.parametrize("line, problem", [
  ("conv2d v1, v2", "unknown mnemonic 'conv2d'"),
  ("conv1d v1, rows=1 cols=2 bias=v3", "missing operand src1"),
  ("conv1d v1, v2, cols=2 bias=v3", "missing rows="),
  ("conv1d v1, v2, rows=600000 cols=2 bias=v3",
   "rows=600000 does not fit its 19-bit field"),
  ("add v4096, v1, v2, len=1", "dst=4096 does not fit its 12-bit field"),
  ("exp v1, v2, len=3 chian", "unknown flag 'chian'"),
  ("exp v1, v2, len=3 foo=1", "unknown field 'foo'"),
  ("exp v1, v2, len=3 bcast", "bcast is not used by exp"),
  ("mm v1, v2, rows=3 cols=2 bias=v3", "bias is not used by mm"),
  ("ddr_read v1, 0x10, vecs=2 chain", "chain is not used by ddr_read"),
  ("exp v1, v2, v3, len=3", "too many operands at 'v3'"),
  ("exp v1, x2, len=3", "src1: expected a vector register"),
  ("exp dst=v1, v2, len=3", "dst is a positional operand, not a field"),
  ("exp v1, v2, len=3 len=4", "len= given twice"),
  ("exp v1, v2, len=three", "len: expected an integer"),
  ("mm v1, v2, rows=3 cols=2 post=relu", "post=relu: expected one of"),
  ("maskedmm v1, v2, rows=3 cols=2 mask=1 scale=1e6", "scale=1e6: out of FP16 range"),
])
def test_errors_name_the_line_and_the_problem(line, problem):
  text = "# header comment\n\nsync v0, len=1\n" + line + "\n"
  with pytest.raises(AsmError) as e:
    assemble(text)
  assert e.value.line_no == 4
  assert e.value.problem.startswith(problem)
  assert str(e.value).startswith(f"line 4: {problem}")
  assert line in str(e.value)
