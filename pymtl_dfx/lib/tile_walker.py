"""The tile walker: `lib.tiling.tile_walk` as counters (the one
hardware definition of the MPU's tile order).

An n_r x n_c grid of tiles is walked in bands of `band = min(n_c,
psum_entries)` column tiles (the last band takes the rest); within a band,
row chunks ascend, and the walk crosses the band left to right on even row
chunks and right to left on odd ones (zigzag).  Besides (r, c) the walker
keeps the tile's place in the grid layout (`tiling.grid_index`, row- or
column-major) with adds only: a step across the band is +-step_c, a step
to the next row chunk is +step_r, and a new band starts one step_c past the
end of the previous band's first row chunk (recorded as it is passed), so
no multiplier is needed.

`RasterTileWalkerRTL` is the raster walk (`tiling.tile_walk(...,
raster=True)`, `DFXConfig.mpu_raster_walk`): every row chunk crosses the
band left to right, so a step across is +step_c and a turn goes to
step_r past the row chunk's first tile of the band, kept in a register
(again adds only).  It is its own class, not a construct argument, so the
zigzag walker's Verilog (its module name) stays as it was;
`tile_walker_rtl(nbits, psum_entries, raster)` picks one.

  start        load n_r, n_c, cmajor; the walker is at tile (0, 0)
  step         move to the next tile (ignored after the last)
  r, c, pos, gi  the current tile: row chunk, column tile, position in the
               band (its partial-sum entry) and grid index
  r_first      r is the first row chunk (0)
  r_last       r is the last row chunk (n_r - 1)
  last         the current tile is the last of the walk
  nxt_gi       the grid index the next `step` moves to (so a user can
               address the next tile in the same cycle it steps)

`TileWalkerCL` is the same walk (either order) on Python values.
"""

from pymtl3 import *

from .tiling import grid_index, tile_walk


class TileWalkerRTL( Component ):

  raster = 0       # the walk across a band: zigzag; 1 in RasterTileWalkerRTL

  def construct( s, nbits, psum_entries ):
    T = mk_bits( nbits )

    s.start  = InPort()
    s.n_r    = InPort( T )
    s.n_c    = InPort( T )
    s.cmajor = InPort()
    s.step   = InPort()
    s.r      = OutPort( T )
    s.c      = OutPort( T )
    s.pos    = OutPort( T )
    s.gi     = OutPort( T )
    s.last   = OutPort()
    s.nxt_gi = OutPort( T )
    s.r_first = OutPort()
    s.r_last  = OutPort()

    s.nr     = Wire( T )
    s.nc     = Wire( T )
    s.band   = Wire( T )
    s.step_c = Wire( T )         # grid-index step to the next column tile
    s.step_r = Wire( T )         # ... to the next row chunk
    s.b0     = Wire( T )         # first column tile of the band
    s.bw     = Wire( T )         # tiles in this band
    s.k      = Wire( T )         # position in the band, in walk order
    s.gnext  = Wire( T )         # grid index of the next band's first tile
    s.row_end = Wire()           # k is the band's last tile of this row chunk
    s.band_end = Wire()          # ... and r the last row chunk
    s.next_b0 = Wire( T )
    s.start_band = Wire( T )     # min(n_c, psum_entries) of the start operands

    s.r_r  = Wire( T )
    s.gi_r = Wire( T )
    s.r //= s.r_r
    s.gi //= s.gi_r

    if s.raster:
      s._raster_blocks( T, psum_entries )
      return

    @update
    def up_walker_comb():
      if s.r_r[0]:
        s.pos @= s.bw - s.k - 1
      else:
        s.pos @= s.k
      s.c @= s.b0 + s.pos
      s.row_end @= s.k + 1 == s.bw
      s.r_first @= s.r_r == 0
      s.r_last @= s.r_r + 1 == s.nr
      s.band_end @= s.row_end & s.r_last
      s.next_b0 @= s.b0 + s.band
      s.last @= s.band_end & ( s.next_b0 >= s.nc )
      if ~s.row_end:
        if s.r_r[0]:
          s.nxt_gi @= s.gi_r - s.step_c
        else:
          s.nxt_gi @= s.gi_r + s.step_c
      elif ~s.band_end:
        s.nxt_gi @= s.gi_r + s.step_r
      elif s.r_r == 0:
        s.nxt_gi @= s.gi_r + s.step_c      # one row chunk: the band ends on row 0
      else:
        s.nxt_gi @= s.gnext
      if s.n_c < T( psum_entries ):
        s.start_band @= s.n_c
      else:
        s.start_band @= T( psum_entries )

    @update_ff
    def up_walker_ff():
      if s.start:
        s.nr <<= s.n_r
        s.nc <<= s.n_c
        s.band <<= s.start_band
        s.bw <<= s.start_band
        if s.cmajor:
          s.step_c <<= s.n_r
          s.step_r <<= 1
        else:
          s.step_c <<= 1
          s.step_r <<= s.n_c
        s.b0 <<= 0
        s.k <<= 0
        s.r_r <<= 0
        s.gi_r <<= 0
      elif s.step & ~s.last:
        s.gi_r <<= s.nxt_gi
        if ~s.row_end:
          s.k <<= s.k + 1
        elif ~s.band_end:
          s.k <<= 0
          s.r_r <<= s.r_r + 1
          if s.r_r == 0:
            s.gnext <<= s.gi_r + s.step_c
        else:
          s.k <<= 0
          s.r_r <<= 0
          s.b0 <<= s.next_b0
          if s.nc - s.next_b0 < s.band:
            s.bw <<= s.nc - s.next_b0

  # The raster blocks restate the zigzag's shared counters rather than share
  # blocks with them: splitting the zigzag's two blocks would change the
  # Verilog of every design without the option (and cold every Verilator
  # model's cache); only `pos`, `nxt_gi` and `row_gi` differ.
  def _raster_blocks( s, T, psum_entries ):
    s.row_gi = Wire( T )         # grid index of this row chunk's first tile of the band

    @update
    def up_walker_comb_raster():
      s.pos @= s.k
      s.c @= s.b0 + s.k
      s.row_end @= s.k + 1 == s.bw
      s.r_first @= s.r_r == 0
      s.r_last @= s.r_r + 1 == s.nr
      s.band_end @= s.row_end & s.r_last
      s.next_b0 @= s.b0 + s.band
      s.last @= s.band_end & ( s.next_b0 >= s.nc )
      if ~s.row_end:
        s.nxt_gi @= s.gi_r + s.step_c
      elif ~s.band_end:
        s.nxt_gi @= s.row_gi + s.step_r   # the next row chunk, back at the band's left
      elif s.r_r == 0:
        s.nxt_gi @= s.gi_r + s.step_c      # one row chunk: the band ends on row 0
      else:
        s.nxt_gi @= s.gnext
      if s.n_c < T( psum_entries ):
        s.start_band @= s.n_c
      else:
        s.start_band @= T( psum_entries )

    @update_ff
    def up_walker_ff_raster():
      if s.start:
        s.nr <<= s.n_r
        s.nc <<= s.n_c
        s.band <<= s.start_band
        s.bw <<= s.start_band
        if s.cmajor:
          s.step_c <<= s.n_r
          s.step_r <<= 1
        else:
          s.step_c <<= 1
          s.step_r <<= s.n_c
        s.b0 <<= 0
        s.k <<= 0
        s.r_r <<= 0
        s.gi_r <<= 0
        s.row_gi <<= 0
      elif s.step & ~s.last:
        s.gi_r <<= s.nxt_gi
        if ~s.row_end:
          s.k <<= s.k + 1
        elif ~s.band_end:
          s.k <<= 0
          s.r_r <<= s.r_r + 1
          s.row_gi <<= s.nxt_gi
          if s.r_r == 0:
            s.gnext <<= s.gi_r + s.step_c
        else:
          s.k <<= 0
          s.r_r <<= 0
          s.row_gi <<= s.nxt_gi
          s.b0 <<= s.next_b0
          if s.nc - s.next_b0 < s.band:
            s.bw <<= s.nc - s.next_b0

  def line_trace( s ):
    return f"({int( s.r_r )},{int( s.c )})"


class RasterTileWalkerRTL( TileWalkerRTL ):
  """`TileWalkerRTL` walking every row chunk left to right (raster)."""

  raster = 1


def tile_walker_rtl( nbits, psum_entries, raster=0 ):
  """The walker of `DFXConfig.mpu_raster_walk`'s order."""
  return ( RasterTileWalkerRTL if raster else TileWalkerRTL )( nbits, psum_entries )


class TileWalkerCL:
  """`TileWalkerRTL` on Python values: the tiles in walk order, from
  `tiling.tile_walk` (a helper object, like `FifoCL`): (r, c), grid index,
  position in the band and first/last row chunk flags; `raster` as
  `RasterTileWalkerRTL`."""

  def __init__( s, n_r, n_c, cmajor=0, psum_entries=1, raster=0 ):
    s.n_r = n_r
    s.band = band = max( 1, min( n_c, psum_entries ) )
    s.tiles = list( tile_walk( n_r, n_c, band, bool( raster ) ) )
    s.gis = [ grid_index( r, c, n_r, n_c, cmajor ) for r, c in s.tiles ]
    s.i = 0

  def __len__( s ):
    return len( s.tiles )

  def gi( s, ahead=0 ):
    return s.gis[ s.i + ahead ]

  def rc( s, ahead=0 ):
    return s.tiles[ s.i + ahead ]

  def pos( s, ahead=0 ):
    return s.tiles[ s.i + ahead ][1] % s.band

  def r_first( s, ahead=0 ):
    return s.tiles[ s.i + ahead ][0] == 0

  def r_last( s, ahead=0 ):
    return s.tiles[ s.i + ahead ][0] == s.n_r - 1

  def last( s ):
    return s.i + 1 >= len( s.gis )

  def step( s ):
    if not s.last():
      s.i += 1
