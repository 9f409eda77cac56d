"""The vector register file at RTL: vreg_entries x d FP16 elements, one flat
array of elements (element e*d + i is lane i of entry e), with every port
the manager's collectors and writers need, so no port ever waits for
another:

  read  (combinational, from the registered address the collector holds)
    e_rd[0..3]  one entry each: DMA rf_rd_resp, VPU a, VPU b, MPU x collect
    b_rd        l elements at a flat address: MPU bias slices
    r_rd        router_words elements at a flat address: router_rd packets
  write (at the clock edge)
    dma_w, vpu_w  whole entries (DMA rf_wr, VPU out)
    mpu_w         an entry with a per-lane enable (an MPU out slice)
    r_w           `cnt` elements at a flat address (router_wr)

Six read and four write ports.  On the FPGA this is banked / replicated
block RAM (one copy per read port, a live-value table for the writers);
the scoreboard keeps two ports from writing one element in the same cycle,
so the order of the writes below never matters.  A flat address wraps at
the end of the register file (the FL and CL managers reject such
instructions).
"""

from pymtl3 import *

from ..fpu.msgs import FP16, mk_fp16_vec
from ..router.streams import mk_router_types

N_ENTRY_RD = 4
DMA_RD, VPU_A, VPU_B, MPU_COL = range( N_ENTRY_RD )


def storage_types( cfg ):
  """(Ent, Flat, Lane): an entry address, a flat element address, a lane."""
  logd = cfg.d.bit_length() - 1
  return mk_bits( cfg.vreg_addr_bits ), mk_bits( cfg.vreg_addr_bits + logd ), mk_bits( logd )


class RFStorageRTL( Component ):

  def construct( s, cfg ):
    d, l, W = cfg.d, cfg.l, cfg.router_words
    Ent, Flat, Lane = storage_types( cfg )
    Vec = mk_fp16_vec( d )
    Cnt = mk_router_types( cfg )["Cnt"]

    s.mem = [ Wire( FP16 ) for _ in range( cfg.vreg_entries * d ) ]

    s.e_rd_addr = [ InPort( Ent ) for _ in range( N_ENTRY_RD ) ]
    s.e_rd_data = [ OutPort( Vec ) for _ in range( N_ENTRY_RD ) ]
    s.b_rd_addr = InPort( Flat )
    s.b_rd_data = [ OutPort( FP16 ) for _ in range( l ) ]
    s.r_rd_addr = InPort( Flat )
    s.r_rd_data = [ OutPort( FP16 ) for _ in range( W ) ]

    s.dma_w_en = InPort();  s.dma_w_addr = InPort( Ent );  s.dma_w_data = InPort( Vec )
    s.vpu_w_en = InPort();  s.vpu_w_addr = InPort( Ent );  s.vpu_w_data = InPort( Vec )
    s.mpu_w_en = InPort();  s.mpu_w_addr = InPort( Ent );  s.mpu_w_data = InPort( Vec )
    s.mpu_w_mask = InPort( d )
    s.r_w_en = InPort();    s.r_w_addr = InPort( Flat );   s.r_w_cnt = InPort( Cnt )
    s.r_w_data = [ InPort( FP16 ) for _ in range( W ) ]

    # one block per read port kind: a port's address and data must not share
    # a block with another's (no false combinational loop through a client)
    @update
    def up_rf_read_entry():
      for p in range( N_ENTRY_RD ):
        for i in range( d ):
          s.e_rd_data[p].v[i] @= s.mem[ concat( s.e_rd_addr[p], Lane( i ) ) ]

    @update
    def up_rf_read_bias():
      for j in range( l ):
        s.b_rd_data[j] @= s.mem[ s.b_rd_addr + Flat( j ) ]

    @update
    def up_rf_read_router():
      for j in range( W ):
        s.r_rd_data[j] @= s.mem[ s.r_rd_addr + Flat( j ) ]

    @update_ff
    def up_rf_write():
      if s.dma_w_en:
        for i in range( d ):
          s.mem[ concat( s.dma_w_addr, Lane( i ) ) ] <<= s.dma_w_data.v[i]
      if s.vpu_w_en:
        for i in range( d ):
          s.mem[ concat( s.vpu_w_addr, Lane( i ) ) ] <<= s.vpu_w_data.v[i]
      if s.mpu_w_en:
        for i in range( d ):
          if s.mpu_w_mask[i]:
            s.mem[ concat( s.mpu_w_addr, Lane( i ) ) ] <<= s.mpu_w_data.v[i]
      if s.r_w_en:
        for j in range( W ):
          if Cnt( j ) < s.r_w_cnt:
            s.mem[ s.r_w_addr + Flat( j ) ] <<= s.r_w_data[j]

  def line_trace( s ):
    return ""
