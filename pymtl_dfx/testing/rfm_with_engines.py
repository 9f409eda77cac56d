"""The register file manager with the VPU and MPU engines attached, at one
level (fl: the stream FL manager and FL engines; cl; rtl): the manager's
DMA, router and *_inst / *_done ports outside, plus the MPU engine's weight
port `mpu_w`, and the manager's ring position input `core_id`.  For
end-to-end checks and the cycle report: the engines'
real latencies between the manager's requests and its write-backs."""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..units.mpu.models import MODELS as MPU_MODELS
from ..units.mpu.msgs import mk_mpu_types
from ..units.vpu.models import MODELS as VPU_MODELS
from ..units.regfile.models import MODELS as RFM_MODELS
from ..units.router.ports import CoreIdT

OUTSIDE = ( "rf_wr", "rf_rd", "rf_rd_resp", "vpu_inst", "vpu_done", "mpu_inst", "mpu_done",
            "router_inst", "router_cmd", "router_rd", "router_wr" )


class RFMWithEngines( Component ):

  def construct( s, level, cfg, core_id=0, cores=None ):
    Manager, VPU, MPU = RFM_MODELS[ level ], VPU_MODELS[ level ], MPU_MODELS[ level ]
    s.rfm = Manager( cfg, core_id, cores )
    s.vpu = VPU( cfg.d, cfg )
    s.mpu = MPU( cfg )

    for name in OUTSIDE:        # the manager's own port types, same direction
      inner = getattr( s.rfm, name )
      Ifc = RecvIfcRTL if isinstance( inner, RecvIfcRTL ) else SendIfcRTL
      setattr( s, name, Ifc( inner.msg._dsl.Type ) )
      connect( getattr( s, name ), inner )
    s.mpu_w = RecvIfcRTL( mk_mpu_types( cfg.d, cfg.l, cfg.psum_entries )["W"] )
    s.mpu_w //= s.mpu.w
    s.core_id = InPort( CoreIdT )
    s.core_id //= s.rfm.core_id

    s.rfm.vpu_cmd //= s.vpu.cmd
    s.rfm.vpu_a //= s.vpu.a
    s.rfm.vpu_b //= s.vpu.b
    s.vpu.out //= s.rfm.vpu_out
    s.rfm.mpu_cmd //= s.mpu.cmd
    s.rfm.mpu_x //= s.mpu.x
    s.rfm.mpu_bias //= s.mpu.bias
    s.mpu.out //= s.rfm.mpu_out

  def line_trace( s ):
    return f"{s.rfm.line_trace()} {s.vpu.line_trace()} {s.mpu.line_trace()}"
