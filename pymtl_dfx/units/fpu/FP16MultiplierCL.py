from ...config import DFXConfig
from ...lib.stream_op import StreamOpCL
from .golden import mul_msg
from .msgs import FP16, FP16MulReq


class FP16MultiplierCL( StreamOpCL ):

  def construct( s, latency=DFXConfig().fp_mul_latency ):
    super().construct( FP16MulReq, FP16, mul_msg, latency )
