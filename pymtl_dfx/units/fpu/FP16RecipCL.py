from ...config import DFXConfig
from ...lib.stream_op import StreamOpCL
from .golden import recip_msg
from .msgs import FP16


class FP16RecipCL( StreamOpCL ):

  def construct( s, latency=DFXConfig().fp_recip_latency ):
    super().construct( FP16, FP16, recip_msg, latency )
