from ...config import DFXConfig
from ...lib.comb_pipe import CombPipeRTL
from .FP16RsqrtComb import FP16RsqrtComb
from .msgs import FP16


class FP16RsqrtRTL( CombPipeRTL ):

  def construct( s, latency=DFXConfig().fp_rsqrt_latency ):
    super().construct( FP16, FP16, FP16RsqrtComb, latency )
