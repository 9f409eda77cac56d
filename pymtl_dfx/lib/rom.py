"""A read-only table in synthesisable PyMTL3: constant-driven wires read by
a dynamic index.

This form translates to a Verilog unpacked array with one assign per entry,
which Verilator and Yosys accept.  The contents come from the caller (the
special-function units pass `pymtl_dfx.numerics` tables), never restated.
"""

from pymtl3 import *


class RomRTL( Component ):

  def construct( s, Type, values ):
    values = tuple( int( v ) for v in values )
    s.addr = InPort( max( 1, clog2( len( values ) ) ) )
    s.out  = OutPort( Type )

    s.entries = [ Wire( Type ) for _ in values ]
    for i, v in enumerate( values ):
      s.entries[i] //= Type( v )

    @update
    def up_rom_read():
      s.out @= s.entries[ s.addr ]

  def line_trace( s ):
    return f"[{s.addr}]={s.out}"
