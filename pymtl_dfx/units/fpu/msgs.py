"""Message types of the FP16 operators (widths from `pymtl_dfx.config`)."""

import functools

from pymtl3 import *

from ...config import FP16_BITS

FP16 = mk_bits( FP16_BITS )


@bitstruct
class FP16AddReq:
  sub: Bits1          # 1: a - b
  a:   FP16
  b:   FP16


@bitstruct
class FP16MulReq:
  a: FP16
  b: FP16


@functools.lru_cache( maxsize=None )
def mk_fp16_vec( n ):
  """n FP16 values as one message (a list field `v`: past 1,023 bits pymtl3
  cannot make one Bits, and Verilator runs split it with `WidePortsRTL`)."""
  return mk_bitstruct( f"FP16Vec_{n}", { "v": [ FP16 ] * n } )
