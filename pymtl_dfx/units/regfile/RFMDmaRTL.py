"""The DMA side of the manager: rf_wr is the storage's entry write port
(always ready); rf_rd -> rf_rd_resp is a one-entry pipe of the requested
address (full throughput: a request is taken while the response leaves),
the response read combinationally from the storage."""

from pymtl3 import *

from ..dma.msgs import VregT
from .RFStorageRTL import storage_types


class RFMDmaRTL( Component ):

  def construct( s, cfg ):
    Ent, _, _ = storage_types( cfg )

    s.rd_val = InPort();   s.rd_rdy = OutPort()
    s.rd_msg = InPort( VregT )
    s.resp_val = OutPort(); s.resp_rdy = InPort()
    s.resp_addr = OutPort( Ent )

    s.full = Wire()
    s.addr = Wire( Ent )
    s.resp_addr //= s.addr
    s.resp_val //= s.full

    @update
    def up_dma_rd_rdy():
      s.rd_rdy @= ~s.full | s.resp_rdy

    @update_ff
    def up_dma_rd():
      if s.reset:
        s.full <<= 0
      elif s.rd_val & s.rd_rdy:
        s.full <<= 1
        s.addr <<= s.rd_msg[ 0:Ent.nbits ]
      elif s.resp_rdy:
        s.full <<= 0

  def line_trace( s ):
    return "r" if s.full else " "
