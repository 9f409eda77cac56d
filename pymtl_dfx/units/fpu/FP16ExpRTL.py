from ...config import DFXConfig
from ...lib.comb_pipe import CombPipeRTL
from .FP16ExpComb import FP16ExpComb
from .msgs import FP16


class FP16ExpRTL( CombPipeRTL ):

  def construct( s, latency=DFXConfig().fp_exp_latency ):
    super().construct( FP16, FP16, FP16ExpComb, latency )
