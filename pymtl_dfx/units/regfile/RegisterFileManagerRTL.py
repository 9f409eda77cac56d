"""Register file manager at RTL: the storage (`RFStorageRTL`, the datapath)
and one controller per side (`RFMDmaRTL`, `RFMVectorRTL`, `RFMMatrixRTL`,
`RFMRouterRTL`) behind the boundary of `ports.py`.

Every side has its own storage ports, so the sides never wait for each
other; the control unit's scoreboard keeps their register ranges apart
(and the MPU side itself waits behind a chain producer).  Timing rules
(`RegisterFileManagerCL` follows them decision by decision):

  - every send port's val and every recv port's rdy come from registers
    (rf_rd.rdy also from rf_rd_resp.rdy: a one-entry pipe);
  - a send port's message is read from the storage in the cycle it is
    offered; a received message is written at the end of its cycle;
  - DMA rf_wr, router_wr: always ready.  rf_rd: answered the next cycle.
  - VPU and router: one instruction at a time; the cycle after its last
    message it is done (VPU: vpu_done offered; router: next router_inst).
  - MPU: see `RFMMatrixRTL` (collect one entry per cycle, stream, write
    back, two slots).
"""

from pymtl3 import *

from .ports import check_rfm_params, declare_ports
from .RFMDmaRTL import RFMDmaRTL
from .RFMMatrixRTL import RFMMatrixRTL
from .RFMRouterRTL import RFMRouterRTL
from .RFMVectorRTL import RFMVectorRTL
from .RFStorageRTL import DMA_RD, MPU_COL, VPU_A, VPU_B, RFStorageRTL, storage_types


class RegisterFileManagerRTL( Component ):

  def construct( s, cfg, core_id=0, cores=None ):
    cores = cfg.cores if cores is None else cores
    check_rfm_params( cfg, core_id, cores )
    declare_ports( s, cfg )
    Ent, Flat, _ = storage_types( cfg )
    AB, FB = Ent.nbits, Flat.nbits

    s.rf = RFStorageRTL( cfg )
    s.dma = RFMDmaRTL( cfg )
    s.vec = RFMVectorRTL( cfg )
    s.mat = RFMMatrixRTL( cfg )
    s.sync = RFMRouterRTL( cfg, cores )   # the position from the core_id port
    rf = s.rf

    # DMA
    s.rf_wr.rdy //= 1
    rf.dma_w_en //= s.rf_wr.val
    rf.dma_w_addr //= s.rf_wr.msg.entry[ 0:AB ]
    for i in range( cfg.d ):
      rf.dma_w_data.v[i] //= s.rf_wr.msg.data[i]
    s.dma.rd_val //= s.rf_rd.val
    s.dma.rd_rdy //= s.rf_rd.rdy
    s.dma.rd_msg //= s.rf_rd.msg
    s.dma.resp_val //= s.rf_rd_resp.val
    s.dma.resp_rdy //= s.rf_rd_resp.rdy
    rf.e_rd_addr[ DMA_RD ] //= s.dma.resp_addr
    s.rf_rd_resp.msg //= rf.e_rd_data[ DMA_RD ]

    # VPU
    s.vpu_inst //= s.vec.inst
    s.vec.cmd //= s.vpu_cmd
    s.vec.done //= s.vpu_done
    s.vpu_a.val //= s.vec.a_val
    s.vec.a_rdy //= s.vpu_a.rdy
    s.vpu_b.val //= s.vec.b_val
    s.vec.b_rdy //= s.vpu_b.rdy
    s.vec.out_val //= s.vpu_out.val
    s.vpu_out.rdy //= s.vec.out_rdy
    rf.e_rd_addr[ VPU_A ] //= s.vec.a_addr
    rf.e_rd_addr[ VPU_B ] //= s.vec.b_addr
    s.vpu_a.msg //= rf.e_rd_data[ VPU_A ]
    s.vpu_b.msg //= rf.e_rd_data[ VPU_B ]
    rf.vpu_w_en //= s.vec.w_en
    rf.vpu_w_addr //= s.vec.w_addr
    rf.vpu_w_data //= s.vpu_out.msg

    # MPU
    s.mpu_inst //= s.mat.inst
    s.mat.cmd //= s.mpu_cmd
    s.mat.x //= s.mpu_x
    s.mat.bias //= s.mpu_bias
    s.mpu_out //= s.mat.out
    s.mat.done //= s.mpu_done
    rf.e_rd_addr[ MPU_COL ] //= s.mat.col_addr
    s.mat.col_data //= rf.e_rd_data[ MPU_COL ]
    rf.b_rd_addr //= s.mat.b_addr
    for j in range( cfg.l ):
      s.mat.b_data[j] //= rf.b_rd_data[j]
    rf.mpu_w_en //= s.mat.w_en
    rf.mpu_w_addr //= s.mat.w_addr
    rf.mpu_w_mask //= s.mat.w_mask
    rf.mpu_w_data //= s.mat.w_data

    # router
    s.sync.core_id //= s.core_id
    s.router_inst //= s.sync.inst
    s.sync.cmd //= s.router_cmd
    s.sync.rd //= s.router_rd
    rf.r_rd_addr //= s.sync.rd_addr
    for j in range( cfg.router_words ):
      s.sync.rd_data[j] //= rf.r_rd_data[j]
      rf.r_w_data[j] //= s.router_wr.msg.data[j]
    s.router_wr.rdy //= 1
    rf.r_w_en //= s.router_wr.val
    rf.r_w_addr //= s.router_wr.msg.addr[ 0:FB ]
    rf.r_w_cnt //= s.router_wr.msg.cnt

  def line_trace( s ):
    return ( f"({s.dma.line_trace()}{s.vec.line_trace()}{s.mat.line_trace()}"
             f"{s.sync.line_trace()})" )
