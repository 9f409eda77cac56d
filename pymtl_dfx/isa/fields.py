"""Field widths and roles: the one definition of every ISA field size.

Each field of an instruction format (formats.py) is annotated with a *role*
defined here.  The role fixes the field's width, what one count of it means,
how the assembler writes it and which DFXConfig quantity it must be able to
hold (checked by `check_config_fits`).  What a field means is looked up by
its name in `FIELDS`.

Units (the same for every instruction):

  vector register address  entries of d FP16 elements; `v12` is entry 12
  element count            FP16 elements (rows, cols, len, mask)
  vector count             d-element vectors, 2*d bytes each (DMA `vecs`)
  external address         memory words (`DFXConfig.mem_word_bytes`: 64 bytes,
                           one 512-bit HBM channel beat, or 2*d bytes when
                           d < 32) in HBM for HBM_* and in DDR for DDR_*
  scalar                   element 0 of an entry (`dst[0]`)
"""

from dataclasses import dataclass
from typing import Callable, Optional

from pymtl3 import mk_bits

from pymtl_dfx.config import FP16_BITS

from .opcodes import DmaOp, PostOp

INST_BITS = 128    # one instruction = one instruction-memory word
INST_BYTES = INST_BITS // 8

KIND_BITS = 2
OPCODE_BITS = 5
VREG_BITS = 12     # 4096 entries; the paper's 2048 need 11
ELEMS_BITS = 19    # a vector filling a 4096 x 64 or 2048 x 128 register file
VECS_BITS = 20     # one DMA can stream a whole weight matrix (1M vectors)
EXT_BITS = 32      # memory words: 256 GiB of HBM or DDR in 64-byte words
POS_BITS = 16      # token positions (GPT-2 has 1024)
POST_BITS = 2


@dataclass(frozen=True, eq=False)
class Role:
  """Width, unit, text syntax and config requirement shared by fields.

  syntax is one of: implied (from the mnemonic), flag, vreg (`v12`), addr
  (hex), int (decimal), fp16 (float or raw `0x` bits), enum, rsvd.
  """
  name: str
  bits: int
  bits_name: str     # the constant that sets the width, for messages
  syntax: str
  unit: str
  need: Optional[Callable] = None   # DFXConfig -> largest value it needs
  need_doc: str = ""
  enum: Optional[type] = None

  @property
  def type(self):
    return mk_bits(self.bits)

  @property
  def max(self) -> int:
    return (1 << self.bits) - 1


KIND   = Role("kind", KIND_BITS, "KIND_BITS", "implied", "Kind")
OPCODE = Role("opcode", OPCODE_BITS, "OPCODE_BITS", "implied",
              "opcode of the kind's enum")
FLAG   = Role("flag", 1, "1", "flag", "0 or 1")
VREG   = Role("vreg", VREG_BITS, "VREG_BITS", "vreg",
              "vector register entry (d elements)",
              need=lambda c: c.vreg_entries - 1,
              need_doc="vreg_entries - 1 (the last register entry)")
ELEMS  = Role("elems", ELEMS_BITS, "ELEMS_BITS", "int", "FP16 elements",
              need=lambda c: c.vreg_entries * c.d,
              need_doc="vreg_entries * d (a vector filling the register "
                       "file)")
VECS   = Role("vecs", VECS_BITS, "VECS_BITS", "int",
              "d-element vectors (2*d bytes)",
              need=lambda c: c.vreg_entries,
              need_doc="vreg_entries (the whole register file in one "
                       "transfer)")
EXT    = Role("ext", EXT_BITS, "EXT_BITS", "addr",
              "memory words of HBM or DDR (DFXConfig.mem_word_bytes)",
              need=lambda c: c.hbm_words - 1,
              need_doc="hbm_bytes / mem_word_bytes - 1 (the last word "
                       "of HBM)")
POS    = Role("pos", POS_BITS, "POS_BITS", "int", "token position")
FP16   = Role("fp16", FP16_BITS, "FP16_BITS", "fp16",
              "IEEE binary16 bit pattern")
POST   = Role("post", POST_BITS, "POST_BITS", "enum", "PostOp", enum=PostOp)


def reserved(bits: int) -> Role:
  """Padding up to INST_BITS; must be zero so it can be given a use later."""
  return Role("rsvd", bits, "padding", "rsvd", "must be 0")


@dataclass(frozen=True)
class Field:
  """What a field named so means, wherever it appears.

  positional  written as a bare operand, in format order (`v12`, `0x1000`)
  optional    key=value that may be left out (value 0); other keyed fields
              must be written.  Flags are always optional.
  optional_ops  opcodes for which the field is optional although it is not
              elsewhere (DMA `rows`: only `hbm_read mpu` gives it)
  alias       a flag that may be written in place of this positional
              operand, meaning flag=1 and operand=0 (`hbm_read mpu, ...`)
  """
  doc: str
  positional: bool = False
  optional: bool = False
  alias: Optional[str] = None
  optional_ops: tuple = ()

  def is_optional(self, op) -> bool:
    # `is`: opcodes of different kinds share values (conv1d == hbm_read == 0)
    return self.optional or any(op is o for o in self.optional_ops)


FIELDS = {
  # Header, the same bits in every format.
  "kind":  Field("instruction kind (Kind); 0 is not an instruction"),
  "op":    Field("opcode, from the kind's enum"),
  "chain": Field("do not write the result back: the next compute "
                 "instruction takes it as its src1 stream"),
  "wait_dma":     Field("issue only after all earlier DMA instructions "
                        "have completed"),
  "wait_compute": Field("issue only after all earlier compute instructions "
                        "have completed"),
  "wait_router":  Field("issue only after all earlier router instructions "
                        "have completed"),
  # Compute.
  "dst":   Field("destination entry", positional=True),
  "src1":  Field("first source entry (the matrix op's input vector)",
                 positional=True),
  "src2":  Field("second source entry", positional=True),
  "rows":  Field("matrix rows: input (reduction) length (hbm_read mpu: the "
                 "matrix's, so its tile grid has ceil(rows/d) row chunks and "
                 "vecs/(l*ceil(rows/d)) column tiles; 0 without mpu)",
                 optional_ops=(DmaOp.HBM_READ,)),
  "cols":  Field("matrix columns: number of outputs"),
  "bias":  Field("entry of the cols-element bias vector"),
  "post":  Field("matrix-side SFU post-op", optional=True),
  "scale": Field("FP16 factor applied to W x before the mask"),
  "mask":  Field("outputs j >= mask become -inf"),
  "len":   Field("vector length (sync: elements per core)"),
  "bcast": Field("src2 is a scalar: src2[0] is used for every element"),
  # DMA and router.
  "rf":    Field("first register-file entry of the transfer (sync: of "
                 "the gathered vector)",
                 positional=True),
  "mpu":   Field("HBM_READ into the MPU weight stream, not the register "
                 "file (rf unused)", alias="rf"),
  "cmajor": Field("hbm_read mpu: the tile grid is column-major (tile (r, c) "
                  "at c*n_r + r, K^T); else row-major (r*n_c + c)"),
  "tr":    Field("HBM_WRITE of a V row, transposed into the tile layout"),
  "addr":  Field("external address (HBM or DDR by opcode)",
                 positional=True),
  "vecs":  Field("number of d-element vectors moved (hbm_read mpu: the "
                 "grid's n_r*n_c tiles of l vectors, streamed in tile order)"),
  "pos":   Field("token position of the row written with tr",
                 optional=True),
  "rsvd":  Field("reserved, must be 0"),
}
