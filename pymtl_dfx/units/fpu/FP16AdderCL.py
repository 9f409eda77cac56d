from ...config import DFXConfig
from ...lib.stream_op import StreamOpCL
from .golden import add_msg
from .msgs import FP16, FP16AddReq


class FP16AdderCL( StreamOpCL ):

  def construct( s, latency=DFXConfig().fp_add_latency ):
    super().construct( FP16AddReq, FP16, add_msg, latency )
