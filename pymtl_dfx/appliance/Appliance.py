"""N DFX cores on a ring, each built from the stream units (`core.Core`).

Core i's ring_send goes through a link (one QSFP hop: `LinkCL`, or
`LinkRTL` when the routers are RTL) to core (i + 1) % N's ring_recv.  Per
core, the appliance exposes the core's boundary as lists indexed by core:
inst[i], {hbm,ddr}_host_req[i] / _resp[i], idle[i], issued[i], retired[i].
With `runtime_id=True` every core is the one `Core( ..., runtime_id=True )`
(its ring position an input, as on the FPGA: one module for every core)
and the appliance ties core i's `core_id` input to i.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..core.Core import Core, resolve_levels
from ..units.control.msgs import UNITS
from ..units.control.msgs import InstMsg
from ..units.dma.msgs import mk_dma_types
from ..units.memory.ports import mk_host_types
from ..units.router.LinkRTL import LinkCL, LinkRTL
from ..units.router.msgs import mk_ring_packet
from ..units.router.ports import CoreIdT


class Appliance( Component ):

  def construct( s, cfg, cores, levels=None, hbm_depth=1024, ddr_depth=256, level=None,
                 runtime_id=False ):
    s.levels = resolve_levels( levels, level )
    Link = LinkRTL if s.levels["router"] in ( "rtl", "verilog" ) else LinkCL
    Packet = mk_ring_packet( cfg )
    T = mk_dma_types( cfg )
    s.cores = [ Core( cfg, None if runtime_id else i, cores, levels, hbm_depth, ddr_depth,
                      level, runtime_id=runtime_id )
                for i in range( cores ) ]
    if runtime_id:
      for i, c in enumerate( s.cores ):
        c.core_id //= CoreIdT( i )
    s.links = [ Link( cfg, Packet ) for _ in range( cores ) ]
    n = cores
    s.inst = [ RecvIfcRTL( InstMsg ) for _ in range( n ) ]
    s.idle = [ OutPort() for _ in range( n ) ]
    s.issued = [ OutPort( len( UNITS ) ) for _ in range( n ) ]
    s.retired = [ OutPort( len( UNITS ) ) for _ in range( n ) ]
    for m in ( "hbm", "ddr" ):
      H = mk_host_types( T[m] )
      setattr( s, f"{m}_host_req", [ RecvIfcRTL( H["Req"] ) for _ in range( n ) ] )
      setattr( s, f"{m}_host_resp", [ SendIfcRTL( H["Resp"] ) for _ in range( n ) ] )
    for i, c in enumerate( s.cores ):
      s.inst[i] //= c.inst
      s.idle[i] //= c.idle
      s.issued[i] //= c.issued
      s.retired[i] //= c.retired
      s.hbm_host_req[i] //= c.hbm_host_req
      s.hbm_host_resp[i] //= c.hbm_host_resp
      s.ddr_host_req[i] //= c.ddr_host_req
      s.ddr_host_resp[i] //= c.ddr_host_resp
      c.ring_send //= s.links[i].recv
      s.links[i].send //= s.cores[ ( i + 1 ) % n ].ring_recv

  def line_trace( s ):
    return " | ".join( f"{c.line_trace()}{l.line_trace()}" for c, l in zip( s.cores, s.links ) )
