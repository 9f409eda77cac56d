"""The MPU side of the manager: the matrix operand collector, double
buffered.

Two slots, each an x buffer of `x_buffer_entries(cfg)` entries and the
registers of the matrix instruction it holds.  Instructions take slots in
turn; three pointers walk the slots in the same order:

  collect (cptr)  one src1 entry per cycle into the slot's x buffer, until
                  its ceil(rows/d) entries are in.  A slot waits while the
                  older slot holds a chain producer (its result is this
                  one's src1, so it must be written first).
  stream  (sptr)  a collected slot: mpu_cmd once; mpu_x = x buffer entry r
                  for each tile of `order_of` (bands of `band_width` column
                  tiles; row chunks ascending; a chunk repeated once per tile
                  of the band), r from a `lib.tile_walker.TileWalkerRTL` (the
                  tile order's one hardware definition, as in the DMA and the
                  MPU), restarted on the slot's grid until its first x goes
                  and on the next slot's as the slot is streamed;
                  CONV1D: mpu_bias = the bias register's
                  elements [c*l, (c+1)*l) for each tile c of `finish_order`
                  (the last row chunk's direction: left to right in the
                  raster walk, `mpu_raster_walk`), lanes >= cols +0.  The
                  cycle after all of them are out the slot is streamed.
  write   (wptr)  the oldest slot, once its cmd has gone: each mpu_out is
                  written as it arrives (lanes of tile t at element t*l of y,
                  y at dst + [REDMAX]; the maximum at dst; the last column
                  tile and the maximum zero the rest of their entry); after
                  the last one (and once streamed) mpu_done; then the slot
                  is free.

So the next instruction's x is collected while the current one streams,
and mpu_inst is taken as soon as a slot is free.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...isa import ComputeOp as C, PostOp
from ...isa.fields import ELEMS_BITS
from ...isa.formats import MatrixInst
from ..control.msgs import DoneMsg, InstMsg
from ..fpu.msgs import FP16, mk_fp16_vec
from ..mpu.msgs import MPUCmd, mk_mpu_types
from ...lib.tile_walker import tile_walker_rtl
from .ports import x_buffer_entries
from .RFMVectorRTL import slice_fields
from .RFStorageRTL import storage_types

FIELDS = ( "op", "post", "rows", "cols", "mask", "scale", "dst", "src1", "bias", "chain" )


class RFMMatrixRTL( Component ):

  def construct( s, cfg ):
    d, l = cfg.d, cfg.l
    Ent, Flat, _ = storage_types( cfg )
    AB, FB = Ent.nbits, Flat.nbits
    LOGD, LOGL = d.bit_length() - 1, l.bit_length() - 1
    XB = x_buffer_entries( cfg )
    LOGXB = XB.bit_length() - 1
    XIdx = mk_bits( LOGXB + 1 )
    Cnt = mk_bits( max( ELEMS_BITS + 2, FB ) )
    Elems = mk_bits( ELEMS_BITS )
    T = mk_mpu_types( d, l, cfg.psum_entries )
    Vec = mk_fp16_vec( d )
    F = { n: MatrixInst.__bitstruct_fields__[ n ] for n in ( "dst", "rows", "post", "scale" ) }
    OP = MPUCmd.__bitstruct_fields__["op"]
    DM1, LM1 = Cnt( d - 1 ), Cnt( l - 1 )
    PSUM = Cnt( cfg.psum_entries )
    OP_CONV1D, POST_REDMAX = OP( int( C.CONV1D ) ), F["post"]( int( PostOp.REDMAX ) )
    LMI = l - 1
    LIdx = mk_bits( max( 1, LOGL ) )
    TSM = Elems( d // l - 1 )       # tile t sits in slot t % (d/l) of its entry

    s.inst = RecvIfcRTL( InstMsg )
    s.cmd  = SendIfcRTL( MPUCmd )
    s.x    = SendIfcRTL( T["X"] )
    s.bias = SendIfcRTL( T["Bias"] )
    s.out  = RecvIfcRTL( T["Out"] )
    s.done = SendIfcRTL( DoneMsg )
    # storage ports
    s.col_addr = OutPort( Ent )
    s.col_data = InPort( Vec )
    s.b_addr = OutPort( Flat )
    s.b_data = [ InPort( FP16 ) for _ in range( l ) ]
    s.w_en = OutPort()
    s.w_addr = OutPort( Ent )
    s.w_mask = OutPort( d )
    s.w_data = OutPort( Vec )

    slice_fields( s, MatrixInst, FIELDS, s.inst.msg )

    # per slot
    def pair( Type ):
      return [ Wire( Type ) for _ in range( 2 ) ]
    s.alloc, s.coll, s.started, s.strm = pair( 1 ), pair( 1 ), pair( 1 ), pair( 1 )
    s.chain, s.conv, s.redmax = pair( 1 ), pair( 1 ), pair( 1 )
    s.op, s.post = pair( OP ), pair( F["post"] )
    s.rows, s.cols, s.mask = pair( Elems ), pair( Elems ), pair( Elems )
    s.scale = pair( F["scale"] )
    s.dst, s.src1, s.bias_e = pair( Ent ), pair( Ent ), pair( Ent )
    s.n_r, s.n_c, s.band, s.n_out, s.last_tile = pair( Cnt ), pair( Cnt ), pair( Cnt ), \
                                                 pair( Cnt ), pair( Cnt )
    s.xbuf = [ Wire( Vec ) for _ in range( 2 * XB ) ]

    # pointers and counters
    s.aptr, s.cptr, s.sptr, s.wptr = Wire(), Wire(), Wire(), Wire()
    s.ccnt = Wire( Cnt )
    s.cmd_done = Wire()
    s.x_fin = Wire()
    s.bb0, s.bk, s.b_fin = Wire( Cnt ), Wire( Cnt ), Wire()
    s.ocnt = Wire( Cnt )

    # the incoming instruction's sizes
    s.nr_new, s.nc_new = Wire( Cnt ), Wire( Cnt )
    # collector
    s.c_go, s.c_last = Wire(), Wire()
    s.c_idx = Wire( XIdx )
    # streamer
    s.s_go, s.s_finish = Wire(), Wire()
    s.s_nr, s.s_nc, s.s_band = Wire( Cnt ), Wire( Cnt ), Wire( Cnt )
    s.xw_slot = Wire()
    s.b_bs, s.b_last_k, s.b_last_b = Wire( Cnt ), Wire(), Wire()
    s.b_col, s.b_lo = Wire( Cnt ), Wire( Cnt )
    s.s_cols = Wire( Cnt )
    # writer
    s.w_go = Wire()
    s.w_tslot = Wire( Elems )
    s.w_off = Wire( Elems )
    s.w_last = Wire()

    @update
    def up_mat_sizes():
      s.nr_new @= ( zext( s.f_rows, Cnt.nbits ) + DM1 ) >> LOGD
      s.nc_new @= ( zext( s.f_cols, Cnt.nbits ) + LM1 ) >> LOGL

    @update
    def up_mat_collect():
      s.c_go @= s.alloc[ s.cptr ] & ~s.coll[ s.cptr ] & \
                ~( ( s.wptr != s.cptr ) & s.alloc[ s.wptr ] & s.chain[ s.wptr ] )
      s.c_last @= s.ccnt == s.n_r[ s.cptr ] - 1
      s.col_addr @= s.src1[ s.cptr ] + s.ccnt[ 0:AB ]
      s.c_idx @= concat( s.cptr, s.ccnt[ 0:LOGXB ] )

    # the x replay's tile order
    s.xw = tile_walker_rtl( Cnt.nbits, cfg.psum_entries, cfg.mpu_raster_walk )
    s.xw.cmajor //= 0

    # the raster walk (`mpu_raster_walk`) sends the bias in another order:
    # its own block, so the zigzag design translates as before
    if cfg.mpu_raster_walk:
      @update
      def up_mat_stream_raster():
        s.s_go @= s.coll[ s.sptr ] & ~s.strm[ s.sptr ]
        s.s_nr @= s.n_r[ s.sptr ]
        s.s_nc @= s.n_c[ s.sptr ]
        s.s_band @= s.band[ s.sptr ]
        s.s_cols @= zext( s.cols[ s.sptr ], Cnt.nbits )
        s.cmd.val @= s.s_go & ~s.cmd_done
        s.cmd.msg.op @= s.op[ s.sptr ]
        s.cmd.msg.post @= s.post[ s.sptr ]
        s.cmd.msg.rows @= s.rows[ s.sptr ]
        s.cmd.msg.cols @= s.cols[ s.sptr ]
        s.cmd.msg.mask @= s.mask[ s.sptr ]
        s.cmd.msg.scale @= s.scale[ s.sptr ]
        # x: chunk r of the walker's tile
        s.x.val @= s.s_go & ~s.x_fin
        # bias: the band's tiles left to right (every row chunk's direction)
        if s.s_nc - s.bb0 < s.s_band:
          s.b_bs @= s.s_nc - s.bb0
        else:
          s.b_bs @= s.s_band
        s.b_last_k @= s.bk + 1 == s.b_bs
        s.b_last_b @= s.bb0 + s.s_band >= s.s_nc
        s.b_col @= s.bb0 + s.bk
        s.b_lo @= s.b_col << LOGL
        s.b_addr @= ( zext( s.bias_e[ s.sptr ], FB ) << LOGD ) + s.b_lo[ 0:FB ]
        s.bias.val @= s.s_go & s.conv[ s.sptr ] & ~s.b_fin
        s.s_finish @= s.s_go & s.cmd_done & s.x_fin & ( s.b_fin | ~s.conv[ s.sptr ] )
    else:
      @update
      def up_mat_stream():
        s.s_go @= s.coll[ s.sptr ] & ~s.strm[ s.sptr ]
        s.s_nr @= s.n_r[ s.sptr ]
        s.s_nc @= s.n_c[ s.sptr ]
        s.s_band @= s.band[ s.sptr ]
        s.s_cols @= zext( s.cols[ s.sptr ], Cnt.nbits )
        s.cmd.val @= s.s_go & ~s.cmd_done
        s.cmd.msg.op @= s.op[ s.sptr ]
        s.cmd.msg.post @= s.post[ s.sptr ]
        s.cmd.msg.rows @= s.rows[ s.sptr ]
        s.cmd.msg.cols @= s.cols[ s.sptr ]
        s.cmd.msg.mask @= s.mask[ s.sptr ]
        s.cmd.msg.scale @= s.scale[ s.sptr ]
        # x: chunk r of the walker's tile
        s.x.val @= s.s_go & ~s.x_fin
        # bias: the band's tiles in the last row chunk's direction
        if s.s_nc - s.bb0 < s.s_band:
          s.b_bs @= s.s_nc - s.bb0
        else:
          s.b_bs @= s.s_band
        s.b_last_k @= s.bk + 1 == s.b_bs
        s.b_last_b @= s.bb0 + s.s_band >= s.s_nc
        if s.s_nr[0]:
          s.b_col @= s.bb0 + s.bk
        else:
          s.b_col @= s.bb0 + s.b_bs - 1 - s.bk
        s.b_lo @= s.b_col << LOGL
        s.b_addr @= ( zext( s.bias_e[ s.sptr ], FB ) << LOGD ) + s.b_lo[ 0:FB ]
        s.bias.val @= s.s_go & s.conv[ s.sptr ] & ~s.b_fin
        s.s_finish @= s.s_go & s.cmd_done & s.x_fin & ( s.b_fin | ~s.conv[ s.sptr ] )

    # the walker starts (at tile (0, 0)) on the grid of the slot that
    # streams next cycle while no x of this slot has gone: every cycle the
    # slot is not streaming, and as it finishes (then the next slot's)
    @update
    def up_mat_xwalk():
      s.xw_slot @= s.sptr ^ s.s_finish
      s.xw.start @= s.s_finish | ~s.s_go
      s.xw.n_r @= s.n_r[ s.xw_slot ]
      s.xw.n_c @= s.n_c[ s.xw_slot ]

    @update
    def up_mat_xstep():
      s.xw.step @= s.x.val & s.x.rdy

    # apart from up_mat_stream: the walker's outputs depend on its inputs
    @update
    def up_mat_x_msg():
      s.x.msg @= s.xbuf[ concat( s.sptr, s.xw.r[ 0:LOGXB ] ) ]

    # its own block: the storage reads b_data from b_addr in between
    @update
    def up_mat_bias_msg():
      for j in range( l ):
        if s.b_lo + j < s.s_cols:
          s.bias.msg.v[j] @= s.b_data[j]
        else:
          s.bias.msg.v[j] @= 0

    @update
    def up_mat_write():
      s.w_go @= s.alloc[ s.wptr ] & s.started[ s.wptr ]
      s.out.rdy @= s.w_go & ( s.ocnt != s.n_out[ s.wptr ] )
      s.done.val @= s.alloc[ s.wptr ] & s.strm[ s.wptr ] & ( s.ocnt == s.n_out[ s.wptr ] )
      s.w_en @= s.out.val & s.out.rdy
      s.w_off @= 0
      if s.out.msg.max:
        s.w_addr @= s.dst[ s.wptr ]
        s.w_tslot @= 0
        s.w_last @= 1
      else:
        s.w_off @= s.out.msg.tile >> ( LOGD - LOGL )
        s.w_addr @= s.dst[ s.wptr ] + zext( s.redmax[ s.wptr ], AB ) + s.w_off[ 0:AB ]
        s.w_tslot @= s.out.msg.tile & TSM
        s.w_last @= zext( s.out.msg.tile, Cnt.nbits ) == s.last_tile[ s.wptr ]
      for i in range( d ):
        if ( Elems( i ) >> LOGL ) == s.w_tslot:
          s.w_mask[i] @= 1
          s.w_data.v[i] @= s.out.msg.v[ LIdx( i & LMI ) ]
        else:
          s.w_mask[i] @= s.w_last & ( ( Elems( i ) >> LOGL ) > s.w_tslot )
          s.w_data.v[i] @= 0

    s.done.msg //= DoneMsg( 1 )

    @update_ff
    def up_mat_state():
      if s.reset:
        s.aptr <<= 0
        s.cptr <<= 0
        s.sptr <<= 0
        s.wptr <<= 0
        s.ccnt <<= 0
        s.ocnt <<= 0
        s.cmd_done <<= 0
        s.x_fin <<= 0
        s.bb0 <<= 0
        s.bk <<= 0
        s.b_fin <<= 0
        for k in range( 2 ):
          s.alloc[k] <<= 0
          s.coll[k] <<= 0
          s.started[k] <<= 0
          s.strm[k] <<= 0
      else:
        # collect
        if s.c_go:
          s.xbuf[ s.c_idx ] <<= s.col_data
          if s.c_last:
            s.coll[ s.cptr ] <<= 1
            s.ccnt <<= 0
            s.cptr <<= ~s.cptr
          else:
            s.ccnt <<= s.ccnt + 1
        # stream
        if s.cmd.val & s.cmd.rdy:
          s.cmd_done <<= 1
          s.started[ s.sptr ] <<= 1
        if s.x.val & s.x.rdy & s.xw.last:
          s.x_fin <<= 1
        if s.bias.val & s.bias.rdy:
          if s.b_last_k:
            s.bk <<= 0
            s.bb0 <<= s.bb0 + s.s_band
            if s.b_last_b:
              s.b_fin <<= 1
          else:
            s.bk <<= s.bk + 1
        if s.s_finish:
          s.strm[ s.sptr ] <<= 1
          s.sptr <<= ~s.sptr
          s.cmd_done <<= 0
          s.x_fin <<= 0
          s.bb0 <<= 0
          s.bk <<= 0
          s.b_fin <<= 0
        # write back
        if s.out.val & s.out.rdy:
          s.ocnt <<= s.ocnt + 1
        elif s.done.val & s.done.rdy:
          s.ocnt <<= 0
          s.alloc[ s.wptr ] <<= 0
          s.coll[ s.wptr ] <<= 0
          s.started[ s.wptr ] <<= 0
          s.strm[ s.wptr ] <<= 0
          s.wptr <<= ~s.wptr
        # take an instruction
        if s.inst.val & ~s.alloc[ s.aptr ]:
          s.alloc[ s.aptr ] <<= 1
          s.chain[ s.aptr ] <<= s.f_chain
          s.conv[ s.aptr ] <<= s.f_op == OP_CONV1D
          s.redmax[ s.aptr ] <<= s.f_post == POST_REDMAX
          s.op[ s.aptr ] <<= s.f_op
          s.post[ s.aptr ] <<= s.f_post
          s.rows[ s.aptr ] <<= s.f_rows
          s.cols[ s.aptr ] <<= s.f_cols
          s.mask[ s.aptr ] <<= s.f_mask
          s.scale[ s.aptr ] <<= s.f_scale
          s.dst[ s.aptr ] <<= s.f_dst[ 0:AB ]
          s.src1[ s.aptr ] <<= s.f_src1[ 0:AB ]
          s.bias_e[ s.aptr ] <<= s.f_bias[ 0:AB ]
          s.n_r[ s.aptr ] <<= s.nr_new
          s.n_c[ s.aptr ] <<= s.nc_new
          if s.nc_new < PSUM:
            s.band[ s.aptr ] <<= s.nc_new
          else:
            s.band[ s.aptr ] <<= PSUM
          s.n_out[ s.aptr ] <<= s.nc_new + zext( s.f_post == POST_REDMAX, Cnt.nbits )
          s.last_tile[ s.aptr ] <<= s.nc_new - 1
          s.aptr <<= ~s.aptr

    @update
    def up_mat_inst_rdy():
      s.inst.rdy @= ~s.alloc[ s.aptr ]

  def line_trace( s ):
    slots = "".join( "." if not s.alloc[k] else ( "s" if s.coll[k] else "c" ) for k in range( 2 ) )
    return slots
