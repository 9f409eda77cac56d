"""pymtl_dfx.isa: the DFX instruction set, defined once.

Three kinds of instruction share one 128-bit word: COMPUTE (matrix ops on
the MPU, vector ops on the VPU), DMA and ROUTER.  The header (kind, opcode,
chain, wait_dma, wait_compute, wait_router) is bits 127:117 of every format.

  opcodes.py  Kind, ComputeOp, DmaOp, RouterOp, PostOp: every opcode value
  fields.py   field widths, units and roles; FIELDS: what each field means
  formats.py  Header, MatrixInst, VectorInst, DmaInst, RouterInst bitstructs;
              layout(); check_config_fits(cfg)
  codec.py    make(op, **fields), encode, decode, program images
  asm.py      assemble / disassemble
  doc.py      doc_table(), the tables of docs/isa.md

Assembly syntax, one instruction per line, `#` comments:

  mnemonic  positional operands,  key=value ...  flags ...

  ddr_read v0, 0x40, vecs=12          # x: 768 elements at d=64
  hbm_read mpu, 0x2000, vecs=1152 rows=768 wait_compute
  conv1d   v12, v0, rows=768 cols=2304 bias=v40 post=gelu chain
  sync     v40, len=192

Registers are `v<entry>` (entries of d elements), external addresses are memory
words (64 bytes; one register entry when d < 32), lengths are elements except DMA `vecs` (d-element vectors).  See
docs/isa.md for every opcode and field.

Units: a scalar is element 0 of an entry; results are written as whole
entries and lanes past the result's length are written +0.
"""

from .asm import AsmError, assemble, disassemble, format_inst
from .codec import (IsaError, decode, encode, fp16_bits, fp16_value, make,
                    op_of, program_from_bytes, program_to_bytes, read_program,
                    validate, write_program)
from .doc import doc_table
from .fields import FIELDS, INST_BITS, INST_BYTES
from .formats import (FORMATS, HEADER_LO, DmaInst, Header, InstBits,
                      MatrixInst, RouterInst, VectorInst, check_config_fits,
                      format_of, layout, ops_of, used_slots)
from .opcodes import (OPCODES, ComputeOp, DmaOp, Kind, PostOp, RouterOp,
                      all_ops, kind_of)
