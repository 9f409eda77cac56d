from ..lib.stream_op import StreamOpFL
from ..units.control.decode_cache import decoded
from ..units.control.msgs import DoneMsg, InstMsg
from ..units.vpu.semantics import vector_op


class VPUFunc( StreamOpFL ):
  """Vector processing unit: executes one vector instruction per command."""

  def construct( s, rf, partials=1 ):  # partials: DFXConfig.reduce_partials
    def execute( word ):
      inst, op, _ = decoded( int( word ) )
      vector_op( op, inst, rf, partials )
      return DoneMsg( 1 )
    super().construct( InstMsg, DoneMsg, execute )
