from ...config import DFXConfig
from ...lib.comb_pipe import CombPipeRTL
from .FP16InvPow2Comb import FP16InvPow2Comb
from .msgs import FP16


class FP16InvPow2RTL( CombPipeRTL ):

  def construct( s, latency=DFXConfig().fp_invpow2_latency ):
    super().construct( FP16, FP16, FP16InvPow2Comb, latency )
