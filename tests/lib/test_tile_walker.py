"""TileWalkerRTL and TileWalkerCL walk every grid like `tiling.tile_walk` (r,
c, position in the band, first/last row chunk, grid index, last, and the
next grid index), row- and column-major, one and many bands, in the zigzag
and the raster order (RasterTileWalkerRTL); under --test-verilog in
Verilator."""

import pytest
from pymtl3 import *

from pymtl_dfx.lib.tiling import grid_index, tile_walk
from pymtl_dfx.lib.tile_walker import TileWalkerCL, tile_walker_rtl
from pymtl_dfx.testing.harness import _plain_opts, elaborate_for

GRIDS = [ ( 1, 1 ), ( 1, 5 ), ( 3, 1 ), ( 2, 3 ), ( 3, 7 ), ( 4, 8 ), ( 5, 9 ), ( 3, 17 ) ]


class WalkerTop( Component ):

  raster = 0       # a class attribute, so the zigzag top keeps its module name

  def construct( s, psum_entries ):
    s.dut = tile_walker_rtl( 12, psum_entries, s.raster )

  def line_trace( s ):
    return s.dut.line_trace()


class RasterWalkerTop( WalkerTop ):
  raster = 1


@pytest.mark.parametrize( "raster", [ 0, 1 ] )
@pytest.mark.parametrize( "psum_entries", [ 1, 2, 4, 16 ] )
def test_walker_follows_tile_walk( psum_entries, raster, cmdline_opts ):
  top = ( RasterWalkerTop if raster else WalkerTop )( psum_entries )
  th = elaborate_for( top, "rtl", _plain_opts( cmdline_opts ) )
  w = th.dut
  th.sim_reset()
  for n_r, n_c in GRIDS:
    band = max( 1, min( n_c, psum_entries ) )
    for cmajor in ( 0, 1 ):
      walk = list( tile_walk( n_r, n_c, band, raster ) )
      gis = [ grid_index( r, c, n_r, n_c, cmajor ) for r, c in walk ]
      cl = TileWalkerCL( n_r, n_c, cmajor, psum_entries, raster )
      assert cl.gis == gis
      w.start @= 1
      w.n_r @= n_r
      w.n_c @= n_c
      w.cmajor @= cmajor
      w.step @= 0
      th.sim_tick()
      w.start @= 0
      for i, ( r, c ) in enumerate( walk ):
        # a bubble every third tile: step is a request, not a clock
        if i % 3 == 2:
          w.step @= 0
          th.sim_tick()
        w.step @= 1
        th.sim_eval_combinational()
        where = f"grid {n_r}x{n_c} cmajor={cmajor} band={band} raster={raster} tile {i}"
        assert ( int( w.r ), int( w.c ), int( w.gi ) ) == ( r, c, gis[i] ), where
        assert int( w.pos ) == c % band, where
        assert ( int( w.r_first ), int( w.r_last ) ) == ( r == 0, r == n_r - 1 ), where
        assert cl.rc() == ( r, c ) and cl.pos() == c % band, where
        assert ( cl.r_first(), cl.r_last() ) == ( r == 0, r == n_r - 1 ), where
        assert int( w.last ) == ( i == len( walk ) - 1 ), where
        if i + 1 < len( walk ):
          assert int( w.nxt_gi ) == gis[ i + 1 ], where
        assert cl.gi() == gis[i] and cl.last() == ( i == len( walk ) - 1 )
        cl.step()
        th.sim_tick()
      # stepping past the last tile stays on it
      assert ( int( w.r ), int( w.c ), int( w.last ) ) == ( *walk[-1], 1 )


def test_raster_walk_crosses_every_row_chunk_left_to_right():
  """The two orders differ only in the direction of odd row chunks, and the
  raster walk's tile after a turn takes entry 0 (the zigzag's reuses the
  last entry, the accumulator hazard the raster order avoids)."""
  n_r, n_c, band = 3, 5, 4
  zig, ras = list( tile_walk( n_r, n_c, band ) ), list( tile_walk( n_r, n_c, band, True ) )
  assert ras == [ ( 0, 0 ), ( 0, 1 ), ( 0, 2 ), ( 0, 3 ), ( 1, 0 ), ( 1, 1 ), ( 1, 2 ), ( 1, 3 ),
                  ( 2, 0 ), ( 2, 1 ), ( 2, 2 ), ( 2, 3 ), ( 0, 4 ), ( 1, 4 ), ( 2, 4 ) ]
  assert zig[ 4:8 ] == [ ( 1, 3 ), ( 1, 2 ), ( 1, 1 ), ( 1, 0 ) ]
  assert sorted( zig ) == sorted( ras )
