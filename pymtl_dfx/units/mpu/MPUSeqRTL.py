"""The MPU's control: the command register, the tile traversal and the
output count.

The traversal is `compiler.tiling.tile_order` as counters: bands of
`band` column tiles; within a band, row chunks in ascending order; across
the band left to right on even row chunks and right to left on odd ones.
A tile's partial-sum entry is its position in the band.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL

from ...isa import PostOp
from .msgs import Elems, MPUCmd


class MPUSeqRTL( Component ):

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
    s.n_r     = Wire( Elems )
    s.n_c     = Wire( Elems )
    s.band    = Wire( Elems )
    s.b0      = Wire( Elems )        # first column tile of the band
    s.bw      = Wire( Elems )        # tiles in this band
    s.r       = Wire( Elems )
    s.rbase   = Wire( Elems )        # r * d
    s.k       = Wire( Elems )        # position in the band, in traversal order
    s.outs    = Wire( Elems )
    s.pos     = Wire( Elems )        # column position in the band

    s.next_n_c  = Wire( Elems )
    s.next_band = Wire( Elems )

    @update
    def up_seq_comb():
      s.cmd.rdy @= ~s.active
      s.cmd_fire @= s.cmd.val & ~s.active
      s.issue_val @= s.active & s.issuing
      if s.r[0]:
        s.pos @= s.bw - 1 - s.k
      else:
        s.pos @= s.k
      s.entry @= trunc( s.pos, Entry )
      s.tile @= s.b0 + s.pos
      s.first @= s.r == 0
      s.last @= s.r == s.n_r - 1
      s.rows_left @= s.cur.rows - s.rbase
      s.next_n_c @= ( s.cmd.msg.cols + ( l - 1 ) ) >> log2_l
      if s.next_n_c < psum_entries:
        s.next_band @= s.next_n_c
      else:
        s.next_band @= psum_entries

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
        s.n_r <<= ( s.cmd.msg.rows + ( d - 1 ) ) >> log2_d
        s.n_c <<= s.next_n_c
        s.band <<= s.next_band
        s.b0 <<= 0
        s.bw <<= s.next_band
        s.r <<= 0
        s.rbase <<= 0
        s.k <<= 0
        s.outs <<= 0
      else:
        if s.issue_fire:
          if s.k + 1 < s.bw:
            s.k <<= s.k + 1
          else:
            s.k <<= 0
            if s.r + 1 < s.n_r:
              s.r <<= s.r + 1
              s.rbase <<= s.rbase + d
            else:
              s.r <<= 0
              s.rbase <<= 0
              s.b0 <<= s.b0 + s.band
              if s.b0 + s.band >= s.n_c:
                s.issuing <<= 0
              elif s.n_c - ( s.b0 + s.band ) < s.band:
                s.bw <<= s.n_c - ( s.b0 + s.band )
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
    return f"r{int(s.r)}k{int(s.k)}o{int(s.outs)}"
