"""The MPU's control: the command register, the tile traversal and the
output count.

The traversal is `lib.tiling.tile_order`, walked by a
`lib.tile_walker.TileWalkerRTL` (the one hardware definition of the order,
shared with the DMA and the register file manager): bands of `band` column
tiles; within a band, row chunks in ascending order; across the band left to
right on even row chunks and right to left on odd ones (`MPUSeqRasterRTL`:
left to right on every row chunk, `DFXConfig.mpu_raster_walk`).  A tile's
partial-sum entry is its position in the band.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL

from ...isa import PostOp
from ...lib.tile_walker import tile_walker_rtl
from .msgs import Elems, MPUCmd


class MPUSeqRTL( Component ):

  raster = 0       # the walk's order: a class attribute, so the zigzag keeps its module name

  def construct( s, d, l, psum_entries, Entry ):
    for name, v in ( ( "d", d ), ( "l", l ), ( "psum_entries", psum_entries ) ):
      if v < 1 or v & ( v - 1 ):
        raise ValueError( f"MPUSeqRTL: {name}={v} must be a power of two" )
    log2_d, log2_l = d.bit_length() - 1, l.bit_length() - 1

    s.cmd = RecvIfcRTL( MPUCmd )
    s.cur = OutPort( MPUCmd )        # the command being executed

    # tile issue: the tag of the next tile, and whether it was taken
    s.issue_val  = OutPort()
    s.issue_fire = InPort()
    s.entry      = OutPort( Entry )
    s.first      = OutPort()
    s.last       = OutPort()
    s.tile       = OutPort( Elems )
    s.rows_left  = OutPort( Elems )  # input lanes inside the matrix: rows - r*d

    # output side
    s.out_fire    = InPort()         # a column tile left the engine
    s.max_pending = OutPort()        # REDMAX: all tiles out, the maximum is next
    s.max_fire    = InPort()
    s.cmd_fire    = OutPort()

    s.active  = Wire()
    s.issuing = Wire()
    s.n_c     = Wire( Elems )
    s.outs    = Wire( Elems )

    # the tile order: started by the command, stepped by each issue
    s.walk = tile_walker_rtl( Elems.nbits, psum_entries, s.raster )
    s.walk.start //= s.cmd_fire
    s.walk.step //= s.issue_fire
    s.walk.cmajor //= 0

    s.next_n_c  = Wire( Elems )

    @update
    def up_seq_comb():
      s.cmd.rdy @= ~s.active
      s.cmd_fire @= s.cmd.val & ~s.active
      s.issue_val @= s.active & s.issuing
      s.entry @= trunc( s.walk.pos, Entry )
      s.tile @= s.walk.c
      s.first @= s.walk.r_first
      s.last @= s.walk.r_last
      s.rows_left @= s.cur.rows - ( s.walk.r << log2_d )

    # the next command's grid, in a block apart from the walker's outputs
    @update
    def up_seq_grid():
      s.next_n_c @= ( s.cmd.msg.cols + ( l - 1 ) ) >> log2_l
      s.walk.n_r @= ( s.cmd.msg.rows + ( d - 1 ) ) >> log2_d
      s.walk.n_c @= s.next_n_c

    @update_ff
    def up_seq_state():
      if s.reset:
        s.active <<= 0
        s.issuing <<= 0
        s.max_pending <<= 0
      elif s.cmd_fire:
        s.cur <<= s.cmd.msg
        s.active <<= 1
        s.issuing <<= 1
        s.max_pending <<= 0
        s.n_c <<= s.next_n_c
        s.outs <<= 0
      else:
        if s.issue_fire & s.walk.last:
          s.issuing <<= 0
        if s.out_fire:
          s.outs <<= s.outs + 1
          if s.outs + 1 == s.n_c:
            if s.cur.post == PostOp.REDMAX:
              s.max_pending <<= 1
            else:
              s.active <<= 0
        if s.max_fire:
          s.max_pending <<= 0
          s.active <<= 0

  def line_trace( s ):
    if not s.active:
      return "idle "
    return f"r{int(s.walk.r)}p{int(s.walk.pos)}o{int(s.outs)}"


class MPUSeqRasterRTL( MPUSeqRTL ):
  """`MPUSeqRTL` walking the raster order (`RasterTileWalkerRTL`)."""

  raster = 1
