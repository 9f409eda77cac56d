from ...config import DFXConfig
from ...lib.stream_op import StreamOpCL
from .golden import exp_msg
from .msgs import FP16


class FP16ExpCL( StreamOpCL ):

  def construct( s, latency=DFXConfig().fp_exp_latency ):
    super().construct( FP16, FP16, exp_msg, latency )
