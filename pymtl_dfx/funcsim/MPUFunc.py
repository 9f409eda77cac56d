from ..lib.stream_op import StreamOpFL
from ..units.control.decode_cache import decoded
from ..units.control.msgs import DoneMsg, InstMsg
from ..units.mpu.semantics import matrix_op, weights_needed


class MPUFunc( StreamOpFL ):
  """Matrix processing unit: one matrix instruction per command, weights from
  the DMA's stream.  Matrices read from the read-only weight region are kept
  in their reassembled form (a simulation cache: keyed by their HBM address,
  so K/V, which the program writes, is never cached)."""

  def construct( s, cfg, rf, stream, readonly_words ):
    s.cache = {}

    def execute( word ):
      inst, op, _ = decoded( int( word ) )
      vectors, sources = stream.pop( weights_needed( inst, cfg.d, cfg.l ) )
      x = rf.read( int( inst.src1 ), int( inst.rows ) )
      cacheable = all( src is not None and src[1] + src[2] <= readonly_words
                       for src in sources )
      key = ( sources, int( inst.rows ), int( inst.cols ) ) if cacheable else None
      matrix_op( op, inst, x, vectors, rf, cfg, s.cache, key )
      return DoneMsg( 1 )

    super().construct( InstMsg, DoneMsg, execute )
