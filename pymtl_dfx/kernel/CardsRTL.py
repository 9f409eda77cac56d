"""The cards of a co-simulation: `cfg.cores` kernels (`KernelRTL`, one
image for all, told their ring position by a register), each with its HBM,
DDR and program memory behind AXI4 slaves, joined in a ring by link models.

    ctl{i}_* (AXI4-Lite from the host) -> kernel i -> irq[i] (its interrupt)
    kernel i m_axi_hbmNN -> AxiMemSlaveRTL -> hbm[i] channel NN  (host port hbm_host_*[i])
    kernel i m_axi_ddrN  -> AxiMemSlaveRTL -> ddr[i] port N      (host port ddr_host_*[i])
    kernel i m_axi_inst  -> AxiMemSlaveRTL -> imem[i]            (host port inst_host_*[i])
    kernel i ring_tx -> LinkModelRTL -> kernel (i+1) % n ring_rx

This is the card as the U280 offers it to the kernel: the memories are the
project's `MemoryRTL` (the rates and latencies of `DFXConfig`), each bus at
its own base address (`buffer_bases`: where XRT would have placed the
buffers, 256 MB apart as HBM pseudo-channels are), and their host ports are
how XRT's buffer writes and reads reach them.  `fail[i]` makes every slave
of card i answer SLVERR (the error tests).  Everything here is RTL, so the
whole is one Verilator model.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..units.dma.msgs import mk_dma_types
from ..units.memory.MemoryRTL import MemoryRTL
from ..units.memory.ports import mk_host_types
from .axi import AXI4, AXI4_LITE, AXI4_STREAM, STREAM_DATA_BITS, widths
from .AxiMemSlaveRTL import AxiMemSlaveRTL
from .InstFetchRTL import inst_memory_spec
from .interface import CTRL_ADDR_BITS, buses
from .KernelRTL import KernelRTL
from .LinkModelRTL import LinkModelRTL

BUFFER_STRIDE = 1 << 28          # 256 MB: one HBM pseudo-channel


def buffer_bases( cfg ):
  """bus name -> the byte address of its buffer, for every memory master."""
  return { b.name: ( k + 1 ) * BUFFER_STRIDE
           for k, b in enumerate( x for x in buses( cfg ) if x.memory ) }


def inst_spec( cfg, inst_words ):
  return inst_memory_spec( inst_words, cfg.ddr_latency_cycles, cfg.mem_outstanding )


def _join( kernel, prefix, ifc, table, **kw ):
  for sig in widths( table, **kw ):
    connect( getattr( kernel, f"{prefix}_{sig}" ), getattr( ifc, sig ) )


class CardsRTL( Component ):

  def construct( s, cfg, hbm_depth, ddr_depth, inst_depth, link=None ):
    n = cfg.cores
    T = mk_dma_types( cfg )
    I = inst_spec( cfg, inst_depth )
    specs = { "hbm": T["hbm"], "ddr": T["ddr"], "inst": I }
    depth = { "hbm": hbm_depth, "ddr": ddr_depth, "inst": inst_depth }
    bases = buffer_bases( cfg )
    s.kernels = [ KernelRTL( cfg ) for _ in range( n ) ]
    for m in ( "hbm", "ddr", "inst" ):
      setattr( s, m, [ MemoryRTL( specs[m], depth[m] ) for _ in range( n ) ] )
      H = mk_host_types( specs[m] )
      setattr( s, f"{m}_host_req", [ RecvIfcRTL( H["Req"] ) for _ in range( n ) ] )
      setattr( s, f"{m}_host_resp", [ SendIfcRTL( H["Resp"] ) for _ in range( n ) ] )
    s.irq = [ OutPort() for _ in range( n ) ]   # Verilator renames a top port named interrupt
    s.fail = [ InPort() for _ in range( n ) ]

    mems = [ b for b in buses( cfg ) if b.memory ]
    # one list per memory: pymtl3 translates a list of components as one
    # module, so a list's members must share their parameters
    for m in ( "hbm", "ddr", "inst" ):
      setattr( s, f"{m}_slaves", [ [ AxiMemSlaveRTL( specs[m] ) for b in mems if b.memory == m ]
                                   for _ in range( n ) ] )
    lite = widths( AXI4_LITE, addr_bits=CTRL_ADDR_BITS, data_bits=32 )
    for i, k in enumerate( s.kernels ):
      s.irq[i] //= k.interrupt
      for m in ( "hbm", "ddr", "inst" ):
        getattr( s, f"{m}_host_req" )[i] //= getattr( s, m )[i].host_req
        getattr( s, m )[i].host_resp //= getattr( s, f"{m}_host_resp" )[i]
      # the host's AXI4-Lite master drives the inputs of these ports
      for sig, ( bits, by_master ) in lite.items():
        port = InPort( bits ) if by_master else OutPort( bits )
        setattr( s, f"ctl{i}_{sig}", port )
        connect( port, getattr( k, f"s_axi_control_{sig}" ) )
      for b in mems:
        slave = getattr( s, f"{b.memory}_slaves" )[i][ b.channel ]
        _join( k, b.name, slave.axi, AXI4, addr_bits=b.addr_bits, data_bits=b.data_bits )
        slave.base //= Bits64( bases[ b.name ] )
        slave.fail //= s.fail[i]
        slave.req //= getattr( s, b.memory )[i].req[ b.channel ]
        getattr( s, b.memory )[i].resp[ b.channel ] //= slave.resp

    if n == 1:          # one card sends nothing on the ring
      k = s.kernels[0]
      k.ring_tx_tready //= Bits1( 1 )
      for sig, ( bits, _ ) in widths( AXI4_STREAM, data_bits=STREAM_DATA_BITS ).items():
        if sig != "tready":
          connect( getattr( k, f"ring_rx_{sig}" ), mk_bits( bits )( 0 ) )
    else:
      s.links = [ LinkModelRTL( **( link or {} ) ) for _ in range( n ) ]
      for i, l in enumerate( s.links ):
        for sig in widths( AXI4_STREAM, data_bits=STREAM_DATA_BITS ):
          connect( getattr( s.kernels[i], f"ring_tx_{sig}" ), getattr( l.rx, sig ) )
          connect( getattr( l.tx, sig ), getattr( s.kernels[ ( i + 1 ) % n ], f"ring_rx_{sig}" ) )

  def line_trace( s ):
    return " | ".join( k.line_trace() for k in s.kernels )
