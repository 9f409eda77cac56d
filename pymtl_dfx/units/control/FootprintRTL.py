"""footprint.py in hardware: an instruction word -> unit, flags and ranges.

Combinational.  Ranges come out as (base, end) of `end_bits(cfg)` bits,
end = base + count, so the scoreboard compares them without adders; an
empty range has end == base.  The tests check it against
`footprint.footprint` on random instructions.
"""

from pymtl3 import *

from ...isa import ComputeOp as C, DmaOp as D, Kind, PostOp
from ...isa.formats import (DmaInst, MatrixInst, RouterInst, VectorInst,
                            layout, op_mask)
from ...isa.fields import ELEMS_BITS
from .footprint import count_bits
from .msgs import InstMsg


def end_bits( cfg ):
  return count_bits( cfg ) + 1


def field( fmt, name ):
  """(lo, hi) bit slice of a field of a format."""
  for slot in layout( fmt ):
    if slot.name == name:
      return slot.lo, slot.hi
  raise KeyError( f"{fmt.__name__} has no field {name}" )


class FootprintRTL( Component ):

  def construct( s, cfg ):
    EB = end_bits( cfg )
    CB = count_bits( cfg )
    E, Cn = mk_bits( EB ), mk_bits( CB )
    LOG = cfg.d.bit_length() - 1
    # cores * len + d - 1 before the division
    MB = ( cfg.cores * ( ( 1 << ELEMS_BITS ) - 1 ) + cfg.d ).bit_length() + 1
    M = mk_bits( MB )

    s.word   = InPort( InstMsg )
    s.unit   = OutPort( 2 )      # index into control.msgs.UNITS
    s.chain  = OutPort()
    s.waits  = OutPort( 4 )      # units whose in-flight instructions it waits for
    s.r0_base = OutPort( E )
    s.r0_end  = OutPort( E )
    s.r1_base = OutPort( E )
    s.r1_end  = OutPort( E )
    s.w_base  = OutPort( E )
    s.w_end   = OutPort( E )

    def sl( fmt, name ):
      lo, hi = field( fmt, name )
      w = Wire( hi - lo )
      setattr( s, f"f_{name}", w )
      w //= s.word[ lo:hi ]
      return w

    kind, op = sl( MatrixInst, "kind" ), sl( MatrixInst, "op" )
    chain = sl( MatrixInst, "chain" )
    wd, wc, wr = ( sl( MatrixInst, n ) for n in ( "wait_dma", "wait_compute", "wait_router" ) )
    dst, src1 = sl( MatrixInst, "dst" ), sl( MatrixInst, "src1" )
    rows, cols = sl( MatrixInst, "rows" ), sl( MatrixInst, "cols" )
    bias, post = sl( MatrixInst, "bias" ), sl( MatrixInst, "post" )
    src2, bcast = sl( VectorInst, "src2" ), sl( VectorInst, "bcast" )
    rf, vecs, mpu = sl( DmaInst, "rf" ), sl( DmaInst, "vecs" ), sl( DmaInst, "mpu" )
    s.f_vlen = Wire( ELEMS_BITS )
    s.f_rlen = Wire( ELEMS_BITS )
    lo, hi = field( VectorInst, "len" )
    s.f_vlen //= s.word[ lo:hi ]
    lo, hi = field( RouterInst, "len" )
    s.f_rlen //= s.word[ lo:hi ]
    vlen, rlen = s.f_vlen, s.f_rlen
    assert field( RouterInst, "rf" ) == field( DmaInst, "rf" )
    assert field( VectorInst, "dst" ) == field( MatrixInst, "dst" )
    assert field( VectorInst, "src1" ) == field( MatrixInst, "src1" )

    s.n_rows = Wire( Cn )
    s.n_cols = Wire( Cn )
    s.n_vec  = Wire( Cn )
    s.n_sync = Wire( Cn )
    s.cnt0 = Wire( Cn )
    s.cnt1 = Wire( Cn )
    s.cntw = Wire( Cn )
    s.b0 = Wire( E )
    s.b1 = Wire( E )
    s.bw = Wire( E )
    s.is_vpu = Wire()
    s.binary = Wire()
    s.reduction = Wire()

    # the groups as constant masks indexed by the opcode (translatable)
    s.binary_ops = Wire( op_mask( "is_binary" ).nbits )
    s.reduction_ops = Wire( op_mask( "is_reduction" ).nbits )
    s.binary_ops //= op_mask( "is_binary" )
    s.reduction_ops //= op_mask( "is_reduction" )
    OP_CONV1D = int( C.CONV1D )
    POST_REDMAX = int( PostOp.REDMAX )
    OP_HBM_READ = int( D.HBM_READ )
    OP_DDR_READ = int( D.DDR_READ )
    DM1, CORES = cfg.d - 1, cfg.cores
    K_COMPUTE, K_DMA, K_ROUTER = int( Kind.COMPUTE ), int( Kind.DMA ), int( Kind.ROUTER )

    @update
    def up_fp_counts():
      s.n_rows @= trunc( ( zext( s.f_rows, M ) + M( DM1 ) ) >> LOG, CB )
      s.n_cols @= trunc( ( zext( s.f_cols, M ) + M( DM1 ) ) >> LOG, CB )
      s.n_vec  @= trunc( ( zext( s.f_vlen, M ) + M( DM1 ) ) >> LOG, CB )
      s.n_sync @= trunc( ( zext( s.f_rlen, M ) * M( CORES ) + M( DM1 ) ) >> LOG, CB )
      s.is_vpu @= s.f_op[4]
      s.binary @= s.binary_ops[ s.f_op ]
      s.reduction @= s.reduction_ops[ s.f_op ]

    @update
    def up_fp_ranges():
      s.b0 @= zext( s.f_src1, EB )
      s.b1 @= 0
      s.bw @= zext( s.f_dst, EB )
      s.cnt0 @= 0
      s.cnt1 @= 0
      s.cntw @= 0
      s.unit @= 0
      if s.f_kind == K_COMPUTE:
        if s.is_vpu:
          s.unit @= 2
          s.cnt0 @= s.n_vec
          if s.binary:
            s.b1 @= zext( s.f_src2, EB )
            if s.f_bcast:
              s.cnt1 @= 1
            else:
              s.cnt1 @= s.n_vec
          if s.reduction:
            s.cntw @= 1
          else:
            s.cntw @= s.n_vec
        else:
          s.unit @= 1
          s.cnt0 @= s.n_rows
          if s.f_op == OP_CONV1D:
            s.b1 @= zext( s.f_bias, EB )
            s.cnt1 @= s.n_cols
          if s.f_post == POST_REDMAX:
            s.cntw @= s.n_cols + 1
          else:
            s.cntw @= s.n_cols
      elif s.f_kind == K_DMA:
        s.unit @= 0
        s.b0 @= zext( s.f_rf, EB )
        s.bw @= zext( s.f_rf, EB )
        if ( s.f_op == OP_HBM_READ ) | ( s.f_op == OP_DDR_READ ):
          if ~( ( s.f_op == OP_HBM_READ ) & s.f_mpu ):
            s.cntw @= zext( s.f_vecs, CB )
        else:
          s.cnt0 @= zext( s.f_vecs, CB )
      elif s.f_kind == K_ROUTER:
        s.unit @= 3
        s.b0 @= zext( s.f_rf, EB )
        s.bw @= zext( s.f_rf, EB )
        s.cnt0 @= s.n_sync
        s.cntw @= s.n_sync

    @update
    def up_fp_out():
      s.r0_base @= s.b0
      s.r0_end  @= s.b0 + zext( s.cnt0, EB )
      s.r1_base @= s.b1
      s.r1_end  @= s.b1 + zext( s.cnt1, EB )
      s.w_base  @= s.bw
      s.w_end   @= s.bw + zext( s.cntw, EB )
      s.chain @= s.f_chain
      s.waits @= concat( s.f_wait_router, s.f_wait_compute, s.f_wait_compute, s.f_wait_dma )

  def line_trace( s ):
    return f"u{s.unit}"
