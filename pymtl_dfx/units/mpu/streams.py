"""What the register file manager and the DMA send the MPU engine for one
matrix instruction, and how its output becomes the instruction's result.

The one definition of the engine's stream contract (see `msgs`): the tests
drive every level with it, and the CL/RTL register file manager follows it.
"""

import numpy as np

from ...lib.tiling import band_width, tile_order, to_stream
from ...lib.arith import ceil_div
from ...isa import ComputeOp as C, PostOp
from .golden import to_array, to_fields
from .msgs import MPUCmd, mk_mpu_types

F16 = np.float16


def mpu_cmd( inst, op ):
  return MPUCmd( int( op ), int( inst.post ), int( inst.rows ), int( inst.cols ),
                 int( inst.mask ), int( inst.scale ) )


def band_of( cmd, cfg ):
  return band_width( int( cmd.cols ), cfg.l, cfg.psum_entries )


def order_of( cmd, cfg ):
  return tile_order( int( cmd.rows ), int( cmd.cols ), cfg.d, cfg.l, band_of( cmd, cfg ),
                     cfg.mpu_raster_walk )


def finish_order( cmd, cfg ):
  """Column tiles in the order their last row chunk is multiplied."""
  last = ceil_div( int( cmd.rows ), cfg.d ) - 1
  return [ c for r, c in order_of( cmd, cfg ) if r == last ]


def mpu_streams( cmd, x, w, bias, cfg ):
  """Messages for every input port: x (rows), w (rows x cols), bias (cols or
  None).  x is read as whole register-file entries, so lanes past `rows`
  carry whatever `x` holds there (the engine must ignore them)."""
  T = mk_mpu_types( cfg.d, cfg.l, cfg.psum_entries )
  d, l = cfg.d, cfg.l
  rows, cols = int( cmd.rows ), int( cmd.cols )
  n_r = ceil_div( rows, d )
  x = np.asarray( x, F16 )
  if x.size < n_r * d:
    raise ValueError( f"x holds {x.size} elements; rows={rows} reads {n_r} entries of {d}" )
  vectors = to_stream( np.asarray( w, F16 ), d, l, band_of( cmd, cfg ), cfg.mpu_raster_walk )
  tiles = vectors.reshape( -1, l * d )
  order = order_of( cmd, cfg )
  msgs = {
    "cmd": [ cmd ],
    "x": [ T["X"]( to_fields( x[ r * d:( r + 1 ) * d ] ) ) for r, _ in order ],
    "w": [ T["W"]( to_fields( t ) ) for t in tiles ],
  }
  if int( cmd.op ) == C.CONV1D:
    b = np.zeros( ceil_div( cols, l ) * l, F16 )
    b[ :cols ] = bias
    msgs["bias"] = [ T["Bias"]( to_fields( b[ c * l:( c + 1 ) * l ] ) )
                     for c in finish_order( cmd, cfg ) ]
  return msgs


def mpu_result( cmd, out_msgs, cfg ):
  """(max or None, y[cols]) from the engine's output messages."""
  l, cols = cfg.l, int( cmd.cols )
  y = np.zeros( ceil_div( cols, l ) * l, F16 )
  top = None
  for m in out_msgs:
    if int( m.max ):
      top = to_array( m.v )[0]
    else:
      t = int( m.tile )
      y[ t * l:( t + 1 ) * l ] = to_array( m.v )
  return top, y[ :cols ]


def expected_out( cmd, y, top, cfg ):
  """The output messages of an instruction whose result is y (and the
  REDMAX maximum `top`): the inverse of `mpu_result`."""
  T = mk_mpu_types( cfg.d, cfg.l, cfg.psum_entries )
  l, cols = cfg.l, int( cmd.cols )
  pad = np.zeros( ceil_div( cols, l ) * l, F16 )
  pad[ :cols ] = y
  out = [ T["Out"]( c, 0, to_fields( pad[ c * l:( c + 1 ) * l ] ) )
          for c in finish_order( cmd, cfg ) ]
  if int( cmd.post ) == PostOp.REDMAX:
    out.append( T["Out"]( 0, 1, to_fields( np.r_[ F16( top ), np.zeros( l - 1, F16 ) ] ) ) )
  return out
