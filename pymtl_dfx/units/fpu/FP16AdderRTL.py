from ...config import DFXConfig
from ...lib.comb_pipe import CombPipeRTL
from .FP16AddComb import FP16AddComb
from .msgs import FP16, FP16AddReq


class FP16AdderRTL( CombPipeRTL ):

  def construct( s, latency=DFXConfig().fp_add_latency ):
    super().construct( FP16AddReq, FP16, FP16AddComb, latency )
