"""Message types of the matrix processing unit, sized by d and l.

The MPU engine's boundary (the same at FL, CL and RTL):

- `cmd`:  one `MPUCmd` per matrix instruction (its op, post-op and sizes);
- `x`:    one d-element input chunk per weight tile, in tile order
          (`lib.tiling.tile_order`): the chunk of rows the tile covers;
- `w`:    one d x l weight tile per message, as l column vectors of d
          (element j*d + i is row i of column j), in tile order;
- `bias`: CONV1D only: one l-element bias slice per column tile, in the
          order the column tiles finish (`finish_order`);
- `out`:  one `MPUOut` per column tile in finishing order (lanes past
          `cols` are +0), then for post-op REDMAX one message with `max`
          set and the maximum in lane 0.
"""

import functools

from pymtl3 import *

from ...config import FP16_BITS
from ...isa.fields import ELEMS_BITS, OPCODE_BITS, POST_BITS
from ..fpu.msgs import mk_fp16_vec

FP16 = mk_bits( FP16_BITS )
Elems = mk_bits( ELEMS_BITS )


@functools.lru_cache( maxsize=None )
def mk_lane_req( d ):
  """One MFU lane's operands: d inputs and d weights (list fields: a d=64
  vector is 1,024 bits, past pymtl3's largest Bits)."""
  return mk_bitstruct( f"MFULaneReq_{d}", { "x": [ FP16 ] * d, "w": [ FP16 ] * d } )


@bitstruct
class MPUCmd:
  op:    mk_bits( OPCODE_BITS )
  post:  mk_bits( POST_BITS )
  rows:  Elems
  cols:  Elems
  mask:  Elems
  scale: FP16


@functools.lru_cache( maxsize=None )
def mk_mpu_out( l ):
  return mk_bitstruct( f"MPUOut_{l}", { "tile": Elems, "max": Bits1, "v": [ FP16 ] * l } )


@functools.lru_cache( maxsize=None )
def mk_mpu_types( d, l, psum_entries ):
  """Boundary types and the pipeline registers' contents."""
  Entry = mk_bits( max( 1, ( psum_entries - 1 ).bit_length() ) )
  tag = { "entry": Entry, "first": Bits1, "last": Bits1, "tile": Elems }
  name = f"{d}_{l}_{psum_entries}"
  return dict(
    X=mk_fp16_vec( d ), W=mk_fp16_vec( d * l ), Bias=mk_fp16_vec( l ), Out=mk_mpu_out( l ),
    Entry=Entry,
    Sums=mk_bitstruct( f"MFUSums_{name}", { **tag, "s": [ FP16 ] * l } ),
    Acc=mk_bitstruct( f"MPUAcc_{name}", { **tag, "s": [ FP16 ] * l } ),
    Post=mk_bitstruct( f"MPUPost_{l}", { "tile": Elems, "v": [ FP16 ] * l } ),
  )

