from ...lib.stream_op import StreamOpFL
from .golden import inv_pow2_msg
from .msgs import FP16


class FP16InvPow2FL( StreamOpFL ):

  def construct( s, latency=None ):  # untimed; latency kept for one signature
    super().construct( FP16, FP16, inv_pow2_msg )
