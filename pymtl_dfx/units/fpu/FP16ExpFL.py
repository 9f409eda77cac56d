from ...lib.stream_op import StreamOpFL
from .golden import exp_msg
from .msgs import FP16


class FP16ExpFL( StreamOpFL ):

  def construct( s, latency=None ):  # untimed; latency kept for one signature
    super().construct( FP16, FP16, exp_msg )
