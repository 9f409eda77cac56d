"""What each DMA instruction does (the DMA's FL behaviour).

Memories are FP16 arrays of [words, E]: one row per memory word of E =
`DFXConfig.mem_word_elems` elements, the ISA's address unit.  A d-element
vector is d/E consecutive words.

`hbm_write tr pos=t` stores row t of V into the row-chunk-major tile layout
(`compiler.layout`): element e of the vector goes to column c = e // l,
lane j = e % l of row chunk r = t // d, position i = t % d, i.e. element i of
vector ((r * n_col_tiles + c) * l + j) of the region, n_col_tiles being
ceil(len / l) for the vector's len = vecs * d elements.

`hbm_read mpu rows=R vecs=N [cmajor]` reads the N vectors at addr as a tile
grid (`lib.tiling` grid layout: n_r = ceil(R/d) row chunks, n_c =
N / (l*n_r) column tiles, row- or column-major) and returns its tiles in the
MPU's stream order (`tiling.tile_walk`, bands of min(n_c, psum_entries),
zigzag or, with `raster`, `DFXConfig.mpu_raster_walk`, raster).
"""

import numpy as np

from ...lib.tiling import GridError, grid_to_stream, read_grid
from ...isa import DmaOp as D
from ...lib.arith import ceil_div

F16 = np.float16


class MemoryError_( IndexError ):
  pass


def _span( mem, addr, n_words, name, what ):
  if addr < 0 or addr + n_words > mem.shape[0]:
    raise MemoryError_( f"{what} of {n_words} words at {name} {addr:#x} runs past its "
                        f"{mem.shape[0]} words" )
  return mem[ addr: addr + n_words ]


def mpu_grid( inst, d, l, psum_entries ):
  """(n_r, n_c, band) of an `hbm_read mpu`; a bad geometry raises GridError
  naming the fields."""
  try:
    return read_grid( int( inst.rows ), int( inst.vecs ), d, l, psum_entries )
  except GridError as e:
    raise GridError( f"hbm_read mpu: {e}" ) from None


def check_plain_read( inst ):
  if int( inst.rows ) or int( inst.cmajor ):
    raise GridError( f"hbm_read without mpu: rows={int( inst.rows )} and "
                     f"cmajor={int( inst.cmajor )} must be 0 (they describe a matrix read)" )


def dma_op( op, inst, rf, hbm, ddr, l, psum_entries=None, raster=0 ):
  """Execute one DMA instruction; `hbm_read mpu` returns the [vecs, d] block
  for the MPU's weight stream (its tiles in stream order, `raster` or
  zigzag; needs psum_entries), every other op returns None."""
  d = rf.d
  word_elems = hbm.shape[1]
  addr, vecs, reg = int( inst.addr ), int( inst.vecs ), int( inst.rf )
  n_words = vecs * d // word_elems
  if op == D.HBM_READ:
    if inst.mpu:
      if psum_entries is None:
        raise TypeError( "dma_op: hbm_read mpu needs psum_entries (its band width)" )
      n_r, n_c, band = mpu_grid( inst, d, l, psum_entries )
      grid = _span( hbm, addr, n_words, "HBM", "hbm_read" ).reshape( vecs, d )
      return grid_to_stream( grid, n_r, n_c, band, int( inst.cmajor ), l, raster )
    check_plain_read( inst )
    block = _span( hbm, addr, n_words, "HBM", "hbm_read" ).reshape( vecs, d )
    rf.write( reg, block )
  elif op == D.DDR_READ:
    rf.write( reg, _span( ddr, addr, n_words, "DDR", "ddr_read" ) )
  elif op == D.DDR_WRITE:
    _span( ddr, addr, n_words, "DDR", "ddr_write" )[:] = \
      rf.read_entries( reg, vecs ).reshape( n_words, word_elems )
  elif op == D.HBM_WRITE and not inst.tr:
    _span( hbm, addr, n_words, "HBM", "hbm_write" )[:] = \
      rf.read_entries( reg, vecs ).reshape( n_words, word_elems )
  elif op == D.HBM_WRITE:
    v = rf.read( reg, vecs * d )
    n_ct = ceil_div( v.size, l )
    r, i = divmod( int( inst.pos ), d )
    c, j = np.divmod( np.arange( v.size ), l )
    vec_index = ( r * n_ct + c ) * l + j
    span = ( ( r + 1 ) * n_ct * l ) * d // word_elems
    region = _span( hbm, addr, span, "HBM", "hbm_write tr" ).reshape( -1, d )
    region[ vec_index, i ] = v
  else:
    raise ValueError( f"{op.mnemonic} is not a DMA instruction" )
  return None
