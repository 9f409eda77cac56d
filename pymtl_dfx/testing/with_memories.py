"""A unit with its memories inside: [DUT + Memory models] as one component.

Under --test-verilog the harness translates this whole component, so the
test memories (MemoryRTL's storage arrays) live inside the Verilated model
and only the host ports and the DUT's other streams cross Python <->
Verilog.  The DUT's `{name}_req[c]` / `{name}_resp[c]` go to memory `name`
(e.g. the DMA's hbm_* and ddr_*); every other stream port of the DUT
appears under its own name, and each memory's host port as
`{name}_host_req` / `{name}_host_resp`.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..hdl.wide_ports import stream_ports
from ..units.memory.models import MODELS
from ..units.memory.msgs import MemoryConfigError
from ..units.memory.ports import mk_host_types



class WithMemories( Component ):

  def construct( s, dut, level, memories ):
    """memories: name -> (MemorySpec, depth)."""
    s.dut = dut
    s.mem_names = sorted( memories )
    for name in s.mem_names:
      spec, depth = memories[ name ]
      reqs = getattr( dut, f"{name}_req", None )
      resps = getattr( dut, f"{name}_resp", None )
      if not isinstance( reqs, list ) or not isinstance( resps, list ) or \
         len( reqs ) != spec.channels or len( resps ) != spec.channels:
        raise MemoryConfigError(
          f"{type( dut ).__name__} needs {name}_req and {name}_resp lists of "
          f"{spec.channels} ports (one per {spec.name} channel)" )
      mem = MODELS[ level ]( spec, depth )
      setattr( s, f"{name}_mem", mem )
      for c in range( spec.channels ):
        connect( reqs[c], mem.req[c] )
        connect( mem.resp[c], resps[c] )
      H = mk_host_types( spec )
      setattr( s, f"{name}_host_req", RecvIfcRTL( H["Req"] ) )
      setattr( s, f"{name}_host_resp", SendIfcRTL( H["Resp"] ) )
      connect( getattr( s, f"{name}_host_req" ), mem.host_req )
      connect( mem.host_resp, getattr( s, f"{name}_host_resp" ) )
    to_memory = { f"{n}_{side}" for n in s.mem_names for side in ( "req", "resp" ) }
    for pname, ( ifc, is_recv ) in stream_ports( dut ).items():
      if pname in to_memory:
        continue
      inner = ifc if isinstance( ifc, list ) else [ ifc ]
      Ifc = RecvIfcRTL if is_recv else SendIfcRTL
      outer = [ Ifc( x.msg._dsl.Type ) for x in inner ]
      setattr( s, pname, outer if isinstance( ifc, list ) else outer[0] )
      for o, i in zip( outer, inner ):
        connect( o, i )

  def line_trace( s ):
    mems = " ".join( getattr( s, f"{n}_mem" ).line_trace() for n in s.mem_names )
    return f"{s.dut.line_trace()} | {mems}"
