"""Split ports wider than pymtl3's Verilator import can carry into fields.

pymtl3 turns each top-level port of a Verilator model into a Python Bits,
and Bits stop at 1,023 bits, so a d = 64 vector of FP16 (1,024 bits) or an
MFU weight tile cannot cross the boundary as one bitstruct.
`WidePortsRTL(dut)` wraps the DUT with the same val/rdy interfaces, except
that each message is a group of ports, one per bitstruct field (a list
field becomes a list of ports).  The DUT's plain ports (an InPort or
OutPort of its own, or a list of them, e.g. a core's `idle`, `issued`,
`retired` and `core_id`; not clk and reset, which the wrapper drives) pass
through under the same names and types.  The wrapper is what gets
translated; the harness connects sources and sinks to its fields.  Inside
the wrapper the wires are the DUT's own, so the translated hardware is
unchanged.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

BITS_LIMIT = 1023


def fields_of( Type ):
  """(name, element type, count or None) for each field of a bitstruct."""
  out = []
  for name, ftype in Type.__bitstruct_fields__.items():
    if isinstance( ftype, list ):
      out.append( ( name, ftype[0], len( ftype ) ) )
    else:
      out.append( ( name, ftype, None ) )
  return out


def is_wide( Type ):
  return hasattr( Type, "__bitstruct_fields__" ) and Type.nbits > BITS_LIMIT


def _direction( obj ):
  """True for a receiving interface, False for a sending one, else None."""
  if isinstance( obj, RecvIfcRTL ):
    return True
  if isinstance( obj, SendIfcRTL ):
    return False
  return None


def plain_ports( component ):
  """The component's own InPorts and OutPorts and lists of them but clk and
  reset, name -> (port or list, is_in)."""
  ports = {}
  for name, obj in sorted( vars( component ).items() ):
    if name in ( "clk", "reset" ):
      continue
    first = obj[0] if isinstance( obj, list ) and obj else obj
    if isinstance( first, ( InPort, OutPort ) ):
      ports[ name ] = ( obj, isinstance( first, InPort ) )
  return ports


def stream_ports( component ):
  """The component's val/rdy interfaces and lists of them (e.g. one per
  memory channel), name -> (interface or list, is_recv)."""
  ports = {}
  for name, obj in sorted( vars( component ).items() ):
    first = obj[0] if isinstance( obj, list ) and obj else obj
    is_recv = _direction( first )
    if is_recv is not None:
      ports[ name ] = ( obj, is_recv )
  return ports


class _FieldIfcRTL( Interface ):
  """A val/rdy interface whose message is a group of field ports;
  `Data` is InPort on the receiving side, OutPort on the sending side."""

  def construct( s, Type, Data, Ready ):
    s.Type = Type
    for name, ftype, n in fields_of( Type ):
      setattr( s, name, [ Data( ftype ) for _ in range( n ) ] if n else Data( ftype ) )
    s.val = Data()
    s.rdy = Ready()

  def __str__( s ):
    return f"{'*' if s.val & s.rdy else ' '}"


class FieldRecvIfcRTL( _FieldIfcRTL ):
  def construct( s, Type ):
    super().construct( Type, InPort, OutPort )


class FieldSendIfcRTL( _FieldIfcRTL ):
  def construct( s, Type ):
    super().construct( Type, OutPort, InPort )


def connect_fields( msg, group ):
  """Wire a bitstruct-typed port to a field group (either direction)."""
  for name, _, n in fields_of( group.Type ):
    a, b = getattr( msg, name ), getattr( group, name )
    if n:
      for i in range( n ):
        connect( a[i], b[i] )
    else:
      connect( a, b )


class WidePortsRTL( Component ):
  """The DUT with every wide stream interface split into field ports."""

  def construct( s, dut ):
    s.dut = dut
    s.wide = []
    for name, ( ifc, is_recv ) in stream_ports( dut ).items():
      inner = ifc if isinstance( ifc, list ) else [ ifc ]
      outer = [ s._outer( x, is_recv ) for x in inner ]
      # attached before connected: pymtl3 connects only named objects
      setattr( s, name, outer if isinstance( ifc, list ) else outer[0] )
      for i, o in zip( inner, outer ):
        connect_stream( i, o )
      if is_wide( inner[0].msg._dsl.Type ):
        s.wide.append( name )
    for name, ( port, is_in ) in plain_ports( dut ).items():
      inner = port if isinstance( port, list ) else [ port ]
      outer = [ ( InPort if is_in else OutPort )( p._dsl.Type ) for p in inner ]
      setattr( s, name, outer if isinstance( port, list ) else outer[0] )
      for i, o in zip( inner, outer ):
        connect( o, i )

  @staticmethod
  def _outer( ifc, is_recv ):
    Type = ifc.msg._dsl.Type
    if is_wide( Type ):
      return FieldRecvIfcRTL( Type ) if is_recv else FieldSendIfcRTL( Type )
    return RecvIfcRTL( Type ) if is_recv else SendIfcRTL( Type )

  def line_trace( s ):
    return s.dut.line_trace()



def connect_stream( outer_port, inner ):
  """Connect a harness-side stream interface to a DUT port, field by field
  when the DUT port is a field group."""
  if isinstance( inner, ( FieldRecvIfcRTL, FieldSendIfcRTL ) ):
    connect_fields( outer_port.msg, inner )
    connect( outer_port.val, inner.val )
    connect( outer_port.rdy, inner.rdy )
  else:
    connect( outer_port, inner )
