from ...config import DFXConfig
from ...lib.stream_op import StreamOpCL
from .golden import lane_msg
from .msgs import FP16, mk_lane_req


class MFULaneCL( StreamOpCL ):

  def construct( s, d, latency=None ):
    latency = latency or DFXConfig( d=d ).mfu_lane_latency
    super().construct( mk_lane_req( d ), FP16, lane_msg, latency )
