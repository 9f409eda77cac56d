from ...lib.stream_op import StreamOpFL
from .golden import lane_msg
from .msgs import FP16, mk_lane_req


class MFULaneFL( StreamOpFL ):

  def construct( s, d, latency=None ):  # untimed; latency kept for one signature
    super().construct( mk_lane_req( d ), FP16, lane_msg )
