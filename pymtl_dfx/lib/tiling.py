"""How a matrix becomes the MPU's weight stream: d x l tiles in zigzag (or raster) order.

A rows x cols matrix W (Hugging Face Conv1D orientation: y = x W) is cut into
d x l tiles: row chunk r covers inputs [r*d, (r+1)*d), column tile c covers
outputs [c*l, (c+1)*l); edges are padded with zeros.  A tile travels as l
vectors of d elements, vector j being column c*l + j (the d weights one MFU
lane multiplies with the input chunk).

Tile order (the one definition; the compiler lays weights out in it and the
MPU consumes the stream in it): column tiles are taken in bands of `band`
tiles (the partial-sum buffer holds one l-wide partial sum per tile of the
band); within a band, row chunks go in ascending order so every output's
chunks accumulate in ascending order (the order `numerics.matvec` fixes),
and the direction across the band alternates between row chunks (zigzag), so
the last tile of one row chunk and the first of the next share a partial-sum
entry.  The raster walk (`raster`, `DFXConfig.mpu_raster_walk`) crosses the
band left to right on every row chunk instead, so the tile after a turn
uses the entry written `band` tiles earlier; each output's chunks still
accumulate in ascending order, so the numerics are the same.

Grid layout (the one definition; how matrices live in HBM): the tiles form
an n_r x n_c grid, each tile l consecutive d-element vectors (contiguous),
tile (r, c) at vector `grid_index(r, c, n_r, n_c, cmajor) * l` of the
region: row-major (cmajor=0: r*n_c + c; weights and V) or column-major
(cmajor=1: c*n_r + r; K^T, so a growing context appends tiles).  One
`hbm_read mpu` (rows, vecs, cmajor) walks the grid in tile order itself.
"""

import functools

import numpy as np

from .arith import ceil_div

F16 = np.float16


def band_width( cols, l, psum_entries ):
  """Column tiles per band: as many as the partial-sum buffer holds."""
  return max( 1, min( ceil_div( cols, l ), psum_entries ) )


def tile_walk( n_r, n_c, band, raster=False ):
  """(row_chunk, col_tile) of an n_r x n_c tile grid in stream order: bands
  of `band` column tiles, row chunks ascending, zigzag across the band (or
  left to right on every row chunk: `raster`)
  (`lib.tile_walker.TileWalkerRTL` is these counters in hardware)."""
  for b0 in range( 0, n_c, band ):
    bw = min( band, n_c - b0 )
    for r in range( n_r ):
      for k in range( bw ):
        yield r, b0 + ( bw - 1 - k if r % 2 and not raster else k )


@functools.lru_cache( maxsize=1024 )
def tile_order( rows, cols, d, l, band, raster=False ):
  """Tuple of (row_chunk, col_tile) in stream order."""
  return tuple( tile_walk( ceil_div( rows, d ), ceil_div( cols, l ), band, bool( raster ) ) )


def grid_index( r, c, n_r, n_c, cmajor ):
  """Tile (r, c)'s place in the grid layout (in tiles)."""
  return c * n_r + r if cmajor else r * n_c + c


class GridError( ValueError ):
  pass


def read_grid( rows, vecs, d, l, psum_entries ):
  """(n_r, n_c, band) of `hbm_read mpu rows=.. vecs=..`: the one place the
  DMA's geometry comes from the instruction (the hardware divides too)."""
  if vecs % l:
    raise GridError( f"vecs={vecs} is not a multiple of l={l}: the weight stream is "
                     f"whole {d} x {l} tiles" )
  n_tiles = vecs // l
  if n_tiles and rows == 0:
    raise GridError( f"rows=0 with vecs={vecs}: a matrix read needs its row count" )
  n_r = ceil_div( rows, d )
  if n_tiles % max( n_r, 1 ):
    raise GridError( f"vecs={vecs} is {n_tiles} tiles, not a whole number of columns of "
                     f"ceil(rows={rows} / d={d}) = {n_r} row chunks" )
  n_c = n_tiles // n_r if n_r else 0
  return n_r, n_c, max( 1, min( n_c, psum_entries ) )


def grid_tiles( n_r, n_c, band, cmajor, raster=False ):
  """Grid indices of the tiles in stream order (int64 array)."""
  return np.fromiter( ( grid_index( r, c, n_r, n_c, cmajor )
                        for r, c in tile_walk( n_r, n_c, band, raster ) ), np.int64, n_r * n_c )


def stream_vectors( rows, cols, d, l ):
  """Number of d-element vectors a rows x cols matrix occupies in the stream."""
  return ceil_div( rows, d ) * ceil_div( cols, l ) * l


@functools.lru_cache( maxsize=1024 )
def _order_arrays( rows, cols, d, l, band, raster=False ):
  order = np.array( tile_order( rows, cols, d, l, band, raster ), dtype=np.int64 )
  return order[:, 0], order[:, 1]


def to_stream( w, d, l, band, raster=False ):
  """[rows, cols] FP16 matrix -> [n_vectors, d] stream in tile order."""
  rows, cols = w.shape
  n_r, n_c = ceil_div( rows, d ), ceil_div( cols, l )
  pad = np.zeros( ( n_r * d, n_c * l ), F16 )
  pad[ :rows, :cols ] = w
  tiles = pad.reshape( n_r, d, n_c, l ).transpose( 0, 2, 3, 1 )   # [r, c, l, d]
  rs, cs = _order_arrays( rows, cols, d, l, band, bool( raster ) )
  return np.ascontiguousarray( tiles[ rs, cs ].reshape( -1, d ) )


def from_stream( vectors, rows, cols, d, l, band, raster=False ):
  """Inverse of `to_stream`: the [rows, cols] matrix the MPU multiplies by."""
  n_r, n_c = ceil_div( rows, d ), ceil_div( cols, l )
  rs, cs = _order_arrays( rows, cols, d, l, band, bool( raster ) )
  if vectors.shape != ( len( rs ) * l, d ):
    raise ValueError( f"weight stream holds {vectors.shape[0]} vectors of {vectors.shape[1]}; "
                      f"a {rows} x {cols} matrix needs {len( rs ) * l} of {d}" )
  tiles = np.empty( ( n_r, n_c, l, d ), vectors.dtype )
  tiles[ rs, cs ] = vectors.reshape( -1, l, d )
  return tiles.transpose( 0, 3, 1, 2 ).reshape( n_r * d, n_c * l )[ :rows, :cols ]


def to_grid( w, d, l, cmajor=0 ):
  """[rows, cols] FP16 matrix -> [n_r * n_c * l, d] vectors in grid layout."""
  rows, cols = w.shape
  n_r, n_c = ceil_div( rows, d ), ceil_div( cols, l )
  pad = np.zeros( ( n_r * d, n_c * l ), F16 )
  pad[ :rows, :cols ] = w
  tiles = pad.reshape( n_r, d, n_c, l ).transpose( 0, 2, 3, 1 )   # [r, c, l, d]
  if cmajor:
    tiles = tiles.transpose( 1, 0, 2, 3 )
  return np.ascontiguousarray( tiles.reshape( -1, d ) )


def grid_to_stream( vectors, n_r, n_c, band, cmajor, l, raster=False ):
  """Grid-layout vectors -> the weight stream (tiles in stream order)."""
  d = vectors.shape[1]
  tiles = vectors.reshape( -1, l, d )
  return np.ascontiguousarray( tiles[ grid_tiles( n_r, n_c, band, cmajor, raster ) ].reshape( -1, d ) )
