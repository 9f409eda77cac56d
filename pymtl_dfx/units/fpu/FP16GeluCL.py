from ...config import DFXConfig
from ...lib.stream_op import StreamOpCL
from .golden import gelu_msg
from .msgs import FP16


class FP16GeluCL( StreamOpCL ):

  def construct( s, latency=DFXConfig().fp_gelu_latency ):
    super().construct( FP16, FP16, gelu_msg, latency )
