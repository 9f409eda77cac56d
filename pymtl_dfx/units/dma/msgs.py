"""The DMA's boundary at CL and RTL (FL reaches the arrays directly).

  inst / done      `InstMsg` / `DoneMsg` from and to the control unit: one
                   DMA instruction (`isa.DmaInst`), one done when it is over
                   (reads: the last entry or tile has left; writes: the last
                   word is acknowledged by the memory).
  hbm_req[c] / hbm_resp[c], ddr_req[c] / ddr_resp[c]
                   one request/response pair per memory channel
                   (`memory.msgs`, `memory_spec`).
  w                `hbm_read mpu`: the MPU engine's weight port, one d x l
                   tile per message in stream order (`mpu.msgs`); the
                   instruction's vecs must be a multiple of l.
  rf_wr            reads into the register file: `RFWrite` (entry, d
                   elements), entries rf, rf+1, ... in order.
  rf_rd / rf_rd_resp  writes from the register file: the DMA sends entry
                   addresses (`VregT`) and the manager answers each with the
                   entry's d elements (`mk_fp16_vec(d)`), in order.  The DMA
                   sends all `vecs` addresses without waiting for answers and
                   takes exactly `vecs` answers.

The timing of each port and what the DMA does in between: docs/dma.md and
`streams.py`.

A d-element entry is d / cfg.mem_word_elems consecutive memory words (one
word when d < 32: `DFXConfig.mem_word_elems`).
"""

import functools

from pymtl3 import *

from ...isa.fields import VREG_BITS
from ..fpu.msgs import FP16, mk_fp16_vec
from ..memory.msgs import memory_spec
from ..mpu.msgs import mk_mpu_types

VregT = mk_bits( VREG_BITS )


class DMAConfigError( ValueError ):
  pass


@functools.lru_cache( maxsize=None )
def mk_rf_write( d ):
  return mk_bitstruct( f"RFWrite_{d}", { "entry": VregT, "data": [ FP16 ] * d } )


def mk_dma_types( cfg ):
  hbm, ddr = memory_spec( cfg, "hbm" ), memory_spec( cfg, "ddr" )
  return dict(
    hbm=hbm, ddr=ddr, W=mk_mpu_types( cfg.d, cfg.l, cfg.psum_entries )["W"],
    RFWrite=mk_rf_write( cfg.d ), Entry=mk_fp16_vec( cfg.d ),
  )
