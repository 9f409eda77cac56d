from ..lib.stream_op import StreamOpFL
from ..units.control.decode_cache import decoded
from ..units.control.msgs import DoneMsg, InstMsg
from ..units.dma.semantics import dma_op


class DMAFunc( StreamOpFL ):
  """DMA: HBM/DDR <-> register file, and HBM -> the MPU's weight stream.

  `hbm` and `ddr` are the core's memory images ([words, mem_word_elems] FP16 arrays)."""

  def construct( s, cfg, rf, hbm, ddr, stream ):
    s.hbm, s.ddr = hbm, ddr

    def execute( word ):
      inst, op, _ = decoded( int( word ) )
      block = dma_op( op, inst, rf, s.hbm, s.ddr, cfg.l, cfg.psum_entries, cfg.mpu_raster_walk )
      if block is not None:
        stream.push( block, ( "hbm", int( inst.addr ), block.shape[0] * block.shape[1]
                              // s.hbm.shape[1] ) )
      return DoneMsg( 1 )

    super().construct( InstMsg, DoneMsg, execute )
