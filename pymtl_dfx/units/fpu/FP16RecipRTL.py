from ...config import DFXConfig
from ...lib.comb_pipe import CombPipeRTL
from .FP16RecipComb import FP16RecipComb
from .msgs import FP16


class FP16RecipRTL( CombPipeRTL ):

  def construct( s, latency=DFXConfig().fp_recip_latency ):
    super().construct( FP16, FP16, FP16RecipComb, latency )
