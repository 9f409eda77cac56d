from ...config import DFXConfig
from ...lib.comb_pipe import CombPipeRTL
from .FP16MulComb import FP16MulComb
from .msgs import FP16, FP16MulReq


class FP16MultiplierRTL( CombPipeRTL ):

  def construct( s, latency=DFXConfig().fp_mul_latency ):
    super().construct( FP16MulReq, FP16, FP16MulComb, latency )
