from ...lib.stream_op import StreamOpFL
from .golden import max_msg
from .msgs import FP16, FP16MulReq


class FP16MaxFL( StreamOpFL ):

  def construct( s, latency=None ):  # untimed; latency kept for one signature
    super().construct( FP16MulReq, FP16, max_msg )
