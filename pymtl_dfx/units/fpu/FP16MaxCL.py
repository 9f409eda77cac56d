from ...config import DFXConfig
from ...lib.stream_op import StreamOpCL
from .golden import max_msg
from .msgs import FP16, FP16MulReq


class FP16MaxCL( StreamOpCL ):

  def construct( s, latency=DFXConfig().fp_max_latency ):
    super().construct( FP16MulReq, FP16, max_msg, latency )
