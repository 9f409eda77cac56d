"""The one integer ceiling division."""

import math

from pymtl_dfx.lib.arith import ceil_div


def test_ceil_div_rounds_up():
  for b in range( 1, 10 ):
    for a in range( -20, 60 ):
      assert ceil_div( a, b ) == math.ceil( a / b ), ( a, b )
  assert ceil_div( 0, 7 ) == 0
  assert ceil_div( 64, 64 ) == 1 and ceil_div( 65, 64 ) == 2


def test_ceil_div_is_exact_past_float_precision():
  big = 2**70 + 1                     # a / b in floating point loses the +1
  assert ceil_div( big, 2 ) == 2**69 + 1
  assert ceil_div( big * 3, 3 ) == big
