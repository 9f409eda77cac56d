from ...config import DFXConfig
from ...lib.comb_pipe import CombPipeRTL
from .FP16GeluComb import FP16GeluComb
from .msgs import FP16


class FP16GeluRTL( CombPipeRTL ):

  def construct( s, latency=DFXConfig().fp_gelu_latency ):
    super().construct( FP16, FP16, FP16GeluComb, latency )
