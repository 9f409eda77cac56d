from ...config import DFXConfig
from ...lib.comb_pipe import CombPipeRTL
from .FP16MaxComb import FP16MaxComb
from .msgs import FP16, FP16MulReq


class FP16MaxRTL( CombPipeRTL ):

  def construct( s, latency=DFXConfig().fp_max_latency ):
    super().construct( FP16MulReq, FP16, FP16MaxComb, latency )
