"""The DMA with its HBM and DDR memories in one component (tests and
reports): the DMA's register-file, weight and command ports and the
memories' host ports are the top's, so under --test-verilog the memories
are inside the Verilated model."""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..units.control.msgs import DoneMsg, InstMsg
from ..units.memory.ports import mk_host_types
from ..units.dma.msgs import VregT, mk_dma_types

DMA_PORTS = ( "inst", "done", "w", "rf_wr", "rf_rd", "rf_rd_resp" )


class DMAWithMemories( Component ):

  def construct( s, cfg, Dma, Mem, depth ):
    T = mk_dma_types( cfg )
    s.dma = Dma( cfg )
    s.hbm = Mem( T["hbm"], depth )
    s.ddr = Mem( T["ddr"], depth )
    s.inst = RecvIfcRTL( InstMsg )
    s.done = SendIfcRTL( DoneMsg )
    s.w = SendIfcRTL( T["W"] )
    s.rf_wr = SendIfcRTL( T["RFWrite"] )
    s.rf_rd = SendIfcRTL( VregT )
    s.rf_rd_resp = RecvIfcRTL( T["Entry"] )
    for p in DMA_PORTS:
      connect( getattr( s, p ), getattr( s.dma, p ) )
    for m in ( "hbm", "ddr" ):
      H = mk_host_types( T[m] )
      mem = getattr( s, m )
      setattr( s, f"{m}_host_req", RecvIfcRTL( H["Req"] ) )
      setattr( s, f"{m}_host_resp", SendIfcRTL( H["Resp"] ) )
      connect( getattr( s, f"{m}_host_req" ), mem.host_req )
      connect( getattr( s, f"{m}_host_resp" ), mem.host_resp )
      for c in range( T[m].channels ):
        connect( getattr( s.dma, f"{m}_req" )[c], mem.req[c] )
        connect( getattr( s.dma, f"{m}_resp" )[c], mem.resp[c] )

  def line_trace( s ):
    return s.dma.line_trace()
