"""How a matrix becomes the MPU's weight stream: d x l tiles in zigzag order.

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
entry.
"""

import functools

import numpy as np

F16 = np.float16


def ceil_div( a, b ):
  return -( -a // b )


def band_width( cols, l, psum_entries ):
  """Column tiles per band: as many as the partial-sum buffer holds."""
  return max( 1, min( ceil_div( cols, l ), psum_entries ) )


@functools.lru_cache( maxsize=1024 )
def tile_order( rows, cols, d, l, band ):
  """Tuple of (row_chunk, col_tile) in stream order."""
  n_r, n_c = ceil_div( rows, d ), ceil_div( cols, l )
  order = []
  for b0 in range( 0, n_c, band ):
    band_cols = list( range( b0, min( b0 + band, n_c ) ) )
    for r in range( n_r ):
      order += [ ( r, c ) for c in ( band_cols if r % 2 == 0 else band_cols[::-1] ) ]
  return tuple( order )


def stream_vectors( rows, cols, d, l ):
  """Number of d-element vectors a rows x cols matrix occupies in the stream."""
  return ceil_div( rows, d ) * ceil_div( cols, l ) * l


@functools.lru_cache( maxsize=1024 )
def _order_arrays( rows, cols, d, l, band ):
  order = np.array( tile_order( rows, cols, d, l, band ), dtype=np.int64 )
  return order[:, 0], order[:, 1]


def to_stream( w, d, l, band ):
  """[rows, cols] FP16 matrix -> [n_vectors, d] stream in tile order."""
  rows, cols = w.shape
  n_r, n_c = ceil_div( rows, d ), ceil_div( cols, l )
  pad = np.zeros( ( n_r * d, n_c * l ), F16 )
  pad[ :rows, :cols ] = w
  tiles = pad.reshape( n_r, d, n_c, l ).transpose( 0, 2, 3, 1 )   # [r, c, l, d]
  rs, cs = _order_arrays( rows, cols, d, l, band )
  return np.ascontiguousarray( tiles[ rs, cs ].reshape( -1, d ) )


def from_stream( vectors, rows, cols, d, l, band ):
  """Inverse of `to_stream`: the [rows, cols] matrix the MPU multiplies by."""
  n_r, n_c = ceil_div( rows, d ), ceil_div( cols, l )
  rs, cs = _order_arrays( rows, cols, d, l, band )
  if vectors.shape != ( len( rs ) * l, d ):
    raise ValueError( f"weight stream holds {vectors.shape[0]} vectors of {vectors.shape[1]}; "
                      f"a {rows} x {cols} matrix needs {len( rs ) * l} of {d}" )
  tiles = np.empty( ( n_r, n_c, l, d ), vectors.dtype )
  tiles[ rs, cs ] = vectors.reshape( -1, l, d )
  return tiles.transpose( 0, 3, 1, 2 ).reshape( n_r * d, n_c * l )[ :rows, :cols ]
