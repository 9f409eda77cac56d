"""A read-only table in synthesisable PyMTL3: a list of constants read by a
dynamic index.

The table translates to one Verilog `localparam` array read in an
`always_comb`, the form synthesis tools infer a ROM from.  The earlier form,
one constant-driven wire per entry, made Verilator build every entry of every
instance as state set at start-up: on the 1-core test appliance (32 VPU lanes,
each with rsqrt, exp, reciprocal and GELU tables) that was 189 k assignments,
29 MB of the 89 MB of generated C++.  A `localparam` is one shared constant.

pymtl3 3.1 already translates a list of constants read by an update block as
a `localparam` array, but its Verilog visitor only indexes such a list by a
constant; `_index_constant_lists_by_signals()` teaches it the dynamic index
(applied on import, so every translation of a design with a ROM has it).
pymtl3's Yosys backend drops constant declarations, so there the table is
a tree of 2:1 muxes on the index bits (the resource reports in reports/ go
through that backend).

The contents come from the caller (the special-function units pass
`pymtl_dfx.numerics` tables), never restated.
"""

from pymtl3 import *
from pymtl3.passes.backends.verilog.translation.behavioral import VBehavioralTranslatorL1 as _vl1
from pymtl3.passes.backends.yosys.translation.behavioral import YosysBehavioralTranslatorL1 as _yl1
from pymtl3.passes.rtlir import BehavioralRTLIR as _bir
from pymtl3.passes.rtlir import RTLIRType as _rt


def _is_const_list( node ):
  return isinstance( node, _bir.FreeVar ) and isinstance( node.Type, _rt.Array )


def _verilog_index( s, node ):
  node.idx._top_expr = True
  return f"__const__{node.value.name}[{s.visit( node.idx )}]"


def _yosys_index( s, node ):
  # a balanced tree of 2:1 muxes on the index bits: Yosys maps it to LUTs in
  # seconds (a shift of one wide concatenation took it over ten minutes)
  node.idx._top_expr = 1
  idx = s.visit( node.idx )
  nbits = node.value.Type.get_sub_type().get_dtype().get_length()
  words = [ f"{nbits}'d{int( v )}" for v in node.value.obj ]
  top = max( 1, ( len( words ) - 1 ).bit_length() )
  words += [ f"{nbits}'d0" ] * ( ( 1 << top ) - len( words ) )

  def tree( bit, base ):
    if bit < 0:
      return words[ base ]
    return f"( ( ( {idx} >> {bit} ) & 1'b1 ) ? {tree( bit - 1, base + ( 1 << bit ) )} : {tree( bit - 1, base )} )"

  return tree( top - 1, 0 )


def _patch( visitor, index_list, name_list=None ):
  if visitor.__dict__.get( "_dfx_const_lists" ):
    return
  freevar, index = visitor.visit_FreeVar, visitor.visit_Index

  def visit_FreeVar( s, node ):
    return name_list( node ) if _is_const_list( node ) else freevar( s, node )

  def visit_Index( s, node ):
    return index_list( s, node ) if _is_const_list( node.value ) else index( s, node )

  if name_list is not None:
    visitor.visit_FreeVar = visit_FreeVar
  visitor.visit_Index = visit_Index
  visitor._dfx_const_lists = True


def _index_constant_lists_by_signals():
  _patch( _vl1.BehavioralRTLIRToVVisitorL1, _verilog_index, lambda node: f"__const__{node.name}" )
  _patch( _yl1.YosysBehavioralRTLIRToVVisitorL1, _yosys_index )


_index_constant_lists_by_signals()


class RomRTL( Component ):

  def construct( s, Type, values ):
    table = [ Type( int( v ) ) for v in values ]
    s.addr = InPort( max( 1, clog2( len( table ) ) ) )
    s.out  = OutPort( Type )

    @update
    def up_rom_read():
      s.out @= table[ s.addr ]

  def line_trace( s ):
    return f"[{s.addr}]={s.out}"
