from ...config import DFXConfig
from ...lib.stream_op import StreamOpCL
from .golden import rsqrt_msg
from .msgs import FP16


class FP16RsqrtCL( StreamOpCL ):

  def construct( s, latency=DFXConfig().fp_rsqrt_latency ):
    super().construct( FP16, FP16, rsqrt_msg, latency )
