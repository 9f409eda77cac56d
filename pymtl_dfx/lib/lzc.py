"""Leading-zero counter: the priority encoder every FP normaliser needs."""

from pymtl3 import *


class LeadingZerosRTL( Component ):
  """`out` = number of zeros above the highest one of `in_` (nbits if none)."""

  def construct( s, nbits ):
    s.in_ = InPort( nbits )
    s.out = OutPort( nbits.bit_length() )

    @update
    def up_lzc():
      s.out @= nbits
      for i in range( nbits ):
        if s.in_[i]:
          s.out @= nbits - 1 - i

  def line_trace( s ):
    return f"lz({s.in_})={s.out}"
