"""encode / decode, validation and program images."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymtl_dfx.isa import (FORMATS, INST_BITS, INST_BYTES, ComputeOp, DmaOp,
                           IsaError, MatrixInst, PostOp, RouterOp, decode,
                           encode, fp16_value, layout, make,
                           program_from_bytes, program_to_bytes, read_program,
                           write_program)
from pymtl_dfx.isa.strategies import insts


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_encode_decode_round_trip(fmt, data):
  inst = data.draw(insts(fmt))
  word = encode(inst)
  assert 0 <= word < 1 << INST_BITS
  assert decode(word) == inst
  assert encode(decode(word)) == word


@settings(max_examples=300, deadline=None)
@given(st.integers(0, (1 << INST_BITS) - 1))
def test_decode_any_word_gives_an_instruction_or_isaerror(word):
  try:
    inst = decode(word)
  except IsaError:
    return
  assert encode(inst) == word


def test_make_fills_header_and_fields():
  inst = make(ComputeOp.MASKEDMM, dst=3, src1=4, rows=64, cols=37,
              scale=0.125, mask=37, post=PostOp.REDMAX, chain=1)
  assert type(inst) is MatrixInst
  assert int(inst.hdr.chain) == 1 and int(inst.dst) == 3
  assert fp16_value(int(inst.scale)) == 0.125


@pytest.mark.parametrize("op, fields, problem", [
  (ComputeOp.MM, dict(bias=3), "bias' is not used by mm"),
  (DmaOp.DDR_READ, dict(chain=1), "chain' is not used by ddr_read"),
  (ComputeOp.ADD, dict(rows=1), "rows' is not a field of add"),
  (ComputeOp.ADD, dict(len=1 << 19), "len=524288 does not fit"),
  (RouterOp.SYNC, dict(len=-1), "len=-1 does not fit"),
  (ComputeOp.CONV1D, dict(post=9), "post=9 does not fit"),
  (ComputeOp.MASKEDMM, dict(scale=1e9), "scale=1000000000.0: out of FP16"),
])
def test_make_rejects(op, fields, problem):
  with pytest.raises(IsaError, match=problem.replace("(", r"\(")):
    make(op, **fields)


def _word_with(inst, name, value):
  slot = next(s for s in layout(type(inst)) if s.name == name)
  return encode(inst) | value << slot.lo


@pytest.mark.parametrize("name, value, problem", [
  ("rsvd", 1, "reserved bits"),
  ("bias", 5, "bias=5 is not used by mm"),
  ("kind", 0, "kind 0 is not an instruction kind"),
  ("op", 0x1F, "opcode 0x1f is not a ComputeOp"),
])
def test_decode_rejects(name, value, problem):
  mm = make(ComputeOp.MM, dst=1, src1=2, rows=3, cols=4)
  if name == "kind":
    word = encode(mm) & ~(3 << (INST_BITS - 2))
  else:
    word = _word_with(mm, name, value)
  with pytest.raises(IsaError, match=problem):
    decode(word)


def test_program_image_is_little_endian_words(tmp_path):
  prog = [make(DmaOp.DDR_READ, rf=1, addr=0x40, vecs=12),
          make(ComputeOp.EXP, dst=2, src1=1, len=5, wait_dma=1),
          make(RouterOp.SYNC, rf=2, len=64)]
  data = program_to_bytes(prog)
  assert len(data) == 3 * INST_BYTES
  assert int.from_bytes(data[:INST_BYTES], "little") == encode(prog[0])
  assert program_from_bytes(data) == prog
  write_program(tmp_path / "p.bin", prog)
  assert read_program(tmp_path / "p.bin") == prog


def test_program_image_errors_name_the_instruction():
  with pytest.raises(IsaError, match="not a whole number"):
    program_from_bytes(bytes(17))
  good = program_to_bytes([make(RouterOp.SYNC, rf=2, len=64)])
  with pytest.raises(IsaError, match=r"instruction 1 \(byte 16\)"):
    program_from_bytes(good + bytes(INST_BYTES))
