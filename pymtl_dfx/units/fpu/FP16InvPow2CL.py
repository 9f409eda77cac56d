from ...config import DFXConfig
from ...lib.stream_op import StreamOpCL
from .golden import inv_pow2_msg
from .msgs import FP16


class FP16InvPow2CL( StreamOpCL ):

  def construct( s, latency=DFXConfig().fp_invpow2_latency ):
    super().construct( FP16, FP16, inv_pow2_msg, latency )
