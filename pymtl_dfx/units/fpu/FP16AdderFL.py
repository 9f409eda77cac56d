from ...lib.stream_op import StreamOpFL
from .golden import add_msg
from .msgs import FP16, FP16AddReq


class FP16AdderFL( StreamOpFL ):

  def construct( s, latency=None ):  # untimed; latency kept for one signature
    super().construct( FP16AddReq, FP16, add_msg )
