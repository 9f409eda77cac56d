from ...config import DFXConfig
from ...lib.comb_pipe import CombPipeRTL
from .MFULaneComb import MFULaneComb
from .msgs import FP16, mk_lane_req


class MFULaneRTL( CombPipeRTL ):

  def construct( s, d, latency=None ):
    latency = latency or DFXConfig( d=d ).mfu_lane_latency
    super().construct( mk_lane_req( d ), FP16, MFULaneComb, latency, dpath_args=( d, ) )
