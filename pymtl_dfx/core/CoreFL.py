"""One DFX compute core at FL: control unit, DMA, MPU, VPU, router and the
register file manager, over the core's HBM and DDR images."""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..units.control.ControlUnitFL import UNITS, ControlUnitFL
from ..units.dma.DMAFL import DMAFL
from ..units.mpu.MPUFL import MPUFL
from ..units.mpu.weight_stream import WeightStreamFL
from ..units.regfile.RegisterFileManagerFL import RegisterFileManagerFL
from ..units.router.RouterFL import RouterFL
from ..units.router.msgs import mk_ring_packet
from ..units.vpu.VPUFL import VPUFL


class CoreFL( Component ):

  def construct( s, cfg, core_id, cores, hbm, ddr, readonly_hbm_words ):
    Packet = mk_ring_packet( cfg )
    s.ring_send = SendIfcRTL( Packet )
    s.ring_recv = RecvIfcRTL( Packet )

    s.stream = WeightStreamFL()
    s.regs = RegisterFileManagerFL( cfg )
    rf = s.regs.rf
    s.ctrl = ControlUnitFL()
    s.dma = DMAFL( cfg, rf, hbm, ddr, s.stream )
    s.mpu = MPUFL( cfg, rf, s.stream, readonly_hbm_words )
    s.vpu = VPUFL( rf )
    s.router = RouterFL( cfg, rf, core_id, cores )

    for i, u in enumerate( UNITS ):
      unit = getattr( s, u )
      connect( s.ctrl.issue[i], unit.recv )
      connect( unit.send, s.ctrl.done[i] )
    s.router.ring_send //= s.ring_send
    s.router.ring_recv //= s.ring_recv

  def line_trace( s ):
    return f"{s.ctrl.line_trace()} {s.router.line_trace()}"
