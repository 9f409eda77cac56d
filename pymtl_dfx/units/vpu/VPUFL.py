from ...lib.stream_op import StreamOpFL
from ..control.decode_cache import decoded
from ..control.msgs import DoneMsg, InstMsg
from .semantics import vector_op


class VPUFL( StreamOpFL ):
  """Vector processing unit: executes one vector instruction per command."""

  def construct( s, rf ):
    def execute( word ):
      inst, op, _ = decoded( int( word ) )
      vector_op( op, inst, rf )
      return DoneMsg( 1 )
    super().construct( InstMsg, DoneMsg, execute )
