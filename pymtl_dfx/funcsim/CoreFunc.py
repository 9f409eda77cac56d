"""One DFX compute core at FL: control unit, DMA, MPU, VPU, router and the
register file manager, over the core's HBM and DDR images."""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..units.control.ControlUnitFL import ControlUnitFL
from ..units.control.msgs import UNITS
from .DMAFunc import DMAFunc
from .MPUFunc import MPUFunc
from .weight_stream import WeightStreamFunc
from .RegisterFileFunc import RegisterFileFunc
from .RouterFunc import RouterFunc
from ..units.router.msgs import mk_ring_packet
from .VPUFunc import VPUFunc


class CoreFunc( Component ):

  def construct( s, cfg, core_id, cores, hbm, ddr, readonly_hbm_words ):
    Packet = mk_ring_packet( cfg )
    s.ring_send = SendIfcRTL( Packet )
    s.ring_recv = RecvIfcRTL( Packet )

    s.stream = WeightStreamFunc()
    s.regs = RegisterFileFunc( cfg )
    rf = s.regs.rf
    s.ctrl = ControlUnitFL()
    s.dma = DMAFunc( cfg, rf, hbm, ddr, s.stream )
    s.mpu = MPUFunc( cfg, rf, s.stream, readonly_hbm_words )
    s.vpu = VPUFunc( rf, cfg.reduce_partials )
    s.router = RouterFunc( cfg, rf, core_id, cores )

    for i, u in enumerate( UNITS ):
      unit = getattr( s, u )
      connect( s.ctrl.issue[i], unit.recv )
      connect( unit.send, s.ctrl.done[i] )
    s.router.ring_send //= s.ring_send
    s.router.ring_recv //= s.ring_recv

  def line_trace( s ):
    return f"{s.ctrl.line_trace()} {s.router.line_trace()}"
