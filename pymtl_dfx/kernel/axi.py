"""The AMBA buses of the kernel's boundary, declared once.

Each bus is a table of (signal, width, driven by the master?): AXI4 (one
memory master per HBM pseudo-channel and DDR port, and the program fetch),
AXI4-Lite (`s_axi_control`) and AXI4-Stream (the ring).  A width is an int
or a key ("A" address, "D" data, "S" strobe = D/8, "I" id) filled in by
`widths`.  From a table come the PyMTL3 interfaces the kernel's components
use inside (`AxiMasterIfc` / `AxiSlaveIfc`, ... : ports named as the
signals) and the flat ports of the top (`flat_ports`: `PREFIX_signal`, the
names Vitis, the IP packager and kernel.xml want).  kernel.xml and the
packaging are written from the same tables (`pymtl_dfx.kernel.interface`).
"""

from pymtl3 import *

M, S = True, False       # driven by the master / by the slave

AXI4 = (
  ( "awvalid", 1, M ), ( "awready", 1, S ), ( "awaddr", "A", M ), ( "awlen", 8, M ),
  ( "awsize", 3, M ), ( "awburst", 2, M ), ( "awid", "I", M ),
  ( "wvalid", 1, M ), ( "wready", 1, S ), ( "wdata", "D", M ), ( "wstrb", "S", M ),
  ( "wlast", 1, M ),
  ( "bvalid", 1, S ), ( "bready", 1, M ), ( "bresp", 2, S ), ( "bid", "I", S ),
  ( "arvalid", 1, M ), ( "arready", 1, S ), ( "araddr", "A", M ), ( "arlen", 8, M ),
  ( "arsize", 3, M ), ( "arburst", 2, M ), ( "arid", "I", M ),
  ( "rvalid", 1, S ), ( "rready", 1, M ), ( "rdata", "D", S ), ( "rresp", 2, S ),
  ( "rlast", 1, S ), ( "rid", "I", S ),
)

AXI4_LITE = (
  ( "awvalid", 1, M ), ( "awready", 1, S ), ( "awaddr", "A", M ),
  ( "wvalid", 1, M ), ( "wready", 1, S ), ( "wdata", "D", M ), ( "wstrb", "S", M ),
  ( "bvalid", 1, S ), ( "bready", 1, M ), ( "bresp", 2, S ),
  ( "arvalid", 1, M ), ( "arready", 1, S ), ( "araddr", "A", M ),
  ( "rvalid", 1, S ), ( "rready", 1, M ), ( "rdata", "D", S ), ( "rresp", 2, S ),
)

AXI4_STREAM = (
  ( "tvalid", 1, M ), ( "tready", 1, S ), ( "tdata", "D", M ), ( "tkeep", "S", M ),
  ( "tlast", 1, M ),
)

# AXI's burst and response codes
BURST_INCR = 0b01
RESP_OKAY, RESP_SLVERR, RESP_DECERR = 0b00, 0b10, 0b11
MEM_ADDR_BITS = 64       # every m_axi of a Vitis kernel (64-bit addresses)
LITE_DATA_BITS = 32
MEM_ID_BITS = 1          # one id: the kernel's masters keep their own order
STREAM_DATA_BITS = 512   # the ring's streams to the link kernels
PAGE_BYTES = 4096        # an AXI burst never crosses one


def widths( table, addr_bits=0, data_bits=0, id_bits=MEM_ID_BITS ):
  """signal -> (bits, driven by the master?) of a bus table."""
  keys = dict( A=addr_bits, D=data_bits, S=data_bits // 8, I=id_bits )
  return { n: ( keys[w] if isinstance( w, str ) else w, m ) for n, w, m in table }


def _declare( s, table, master, **kw ):
  for name, ( bits, by_master ) in widths( table, **kw ).items():
    setattr( s, name, OutPort( bits ) if by_master == master else InPort( bits ) )


class AxiMasterIfc( Interface ):
  def construct( s, addr_bits, data_bits, id_bits=MEM_ID_BITS ):
    _declare( s, AXI4, True, addr_bits=addr_bits, data_bits=data_bits, id_bits=id_bits )


class AxiSlaveIfc( Interface ):
  def construct( s, addr_bits, data_bits, id_bits=MEM_ID_BITS ):
    _declare( s, AXI4, False, addr_bits=addr_bits, data_bits=data_bits, id_bits=id_bits )


class AxiLiteMasterIfc( Interface ):
  def construct( s, addr_bits, data_bits=LITE_DATA_BITS ):
    _declare( s, AXI4_LITE, True, addr_bits=addr_bits, data_bits=data_bits )


class AxiLiteSlaveIfc( Interface ):
  def construct( s, addr_bits, data_bits=LITE_DATA_BITS ):
    _declare( s, AXI4_LITE, False, addr_bits=addr_bits, data_bits=data_bits )


class AxisMasterIfc( Interface ):
  def construct( s, data_bits=STREAM_DATA_BITS ):
    _declare( s, AXI4_STREAM, True, data_bits=data_bits )


class AxisSlaveIfc( Interface ):
  def construct( s, data_bits=STREAM_DATA_BITS ):
    _declare( s, AXI4_STREAM, False, data_bits=data_bits )


def flat_ports( s, prefix, table, master, inner, **kw ):
  """Declare `PREFIX_signal` ports on component `s` (outputs where `s` is
  the master when master=True) and connect each to the same-named port of
  the interface `inner`; returns the names."""
  names = []
  for name, ( bits, by_master ) in widths( table, **kw ).items():
    port = OutPort( bits ) if by_master == master else InPort( bits )
    setattr( s, f"{prefix}_{name}", port )
    connect( port, getattr( inner, name ) )
    names.append( f"{prefix}_{name}" )
  return names
