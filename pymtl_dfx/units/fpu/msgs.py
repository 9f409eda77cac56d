"""Message types of the FP16 operators (widths from `pymtl_dfx.config`)."""

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
