"""`dfx_kernel`'s logic: the RTL core behind the kernel's AXI boundary.

    s_axi_control -> ControlRegsRTL --start, args--> InstFetchRTL -> core.inst
                           ^  status                  (m_axi_inst)
                     KernelStatusRTL <- issued/retired, error pulses, ring beats
    core.hbm_req[c] / hbm_resp[c] <-> MemAxiMasterRTL -> m_axi_hbmNN (base: arg hbmNN)
    core.ddr_req[c] / ddr_resp[c] <-> MemAxiMasterRTL -> m_axi_ddrN  (base: arg ddrN)
    core.ring_send -> RingTxRTL -> ring_tx      ring_rx -> RingRxRTL -> core.ring_recv
    arg ring_pos -> core.core_id (one image serves every card of the ring)

Every bus is declared from `interface.buses(cfg)` as flat ports named
`<bus>_<signal>` (what Vitis, the IP packager and kernel.xml want), beside
`interrupt`.  pymtl3's implicit `clk` and active-high `reset` become
`ap_clk` and `ap_rst_n` in the generated wrapper (`verilog.py`): the only
hand-shaped Verilog, because translation cannot rename them or invert a
reset.

A run: ap_start latches the arguments (`ControlRegsRTL`) and starts the
fetch of `inst_count` instructions from `inst_addr`; it ends (ap_done)
when every instruction was fetched and the core is idle, i.e. every
instruction retired, which for a DMA write means its AXI write responses
came back (`MemAxiMasterRTL` acknowledges a write on BRESP only).
"""

from pymtl3 import *
from pymtl3.passes.backends.verilog import VerilogTranslationPass

from ..core.Core import Core
from ..units.dma.msgs import mk_dma_types
from .axi import flat_ports
from .ControlRegsRTL import ControlRegsRTL
from .InstFetchRTL import InstFetchRTL
from .interface import TOP, buses, register_map
from .KernelStatusRTL import KernelStatusRTL
from .MemAxiMasterRTL import MemAxiMasterRTL
from .RingRxRTL import RingRxRTL
from .RingTxRTL import RingTxRTL

INNER = f"{TOP}_logic"       # the translated module; `TOP` is the wrapper


class KernelRTL( Component ):

  # its `interrupt` port has the name Vitis requires, a C++ word that
  # Verilator warns of where the module is a class of its own
  verilator_waivers = ( "SYMRSVDWORD", )

  def construct( s, cfg ):
    s.set_metadata( VerilogTranslationPass.explicit_module_name, INNER )
    T = mk_dma_types( cfg )
    s.core = Core( cfg, 0, cfg.cores, level="rtl", memories=False, runtime_id=True )
    s.regs = ControlRegsRTL( cfg )
    s.status = KernelStatusRTL( cfg )
    s.fetch = InstFetchRTL()
    s.hbm = [ MemAxiMasterRTL( T["hbm"] ) for _ in range( T["hbm"].channels ) ]
    s.ddr = [ MemAxiMasterRTL( T["ddr"] ) for _ in range( T["ddr"].channels ) ]
    s.tx = RingTxRTL( cfg )
    s.rx = RingRxRTL( cfg )

    # the boundary, from the one declaration of the kernel's buses
    s.interrupt = OutPort()
    s.interrupt //= s.regs.interrupt
    inner = { "s_axi_control": s.regs.s_axi, "m_axi_inst": s.fetch.axi,
              "ring_tx": s.tx.axis, "ring_rx": s.rx.axis }
    for b in buses( cfg ):
      if b.memory in ( "hbm", "ddr" ):
        inner[ b.name ] = getattr( s, b.memory )[ b.channel ].axi
      flat_ports( s, b.name, b.table, b.master, inner[ b.name ],
                  addr_bits=b.addr_bits, data_bits=b.data_bits )

    # memories: channel c of the core's HBM / DDR on its own master
    for m in ( "hbm", "ddr" ):
      for c, master in enumerate( getattr( s, m ) ):
        getattr( s.core, f"{m}_req" )[c] //= master.req
        master.resp //= getattr( s.core, f"{m}_resp" )[c]
        master.base //= getattr( s.regs, f"arg_{m}{c:02d}" if m == "hbm" else f"arg_{m}{c}" )

    # the program, the ring position
    s.fetch.start //= s.regs.start
    s.fetch.addr //= s.regs.arg_inst_addr
    s.fetch.count //= s.regs.arg_inst_count
    s.fetch.inst //= s.core.inst
    s.core.core_id //= s.regs.arg_ring_pos[0:8]
    s.core.ring_send //= s.tx.pkt
    s.rx.pkt //= s.core.ring_recv

    # the end of a run: everything fetched and the core idle, seen from the
    # cycle after the start on (the fetch raises busy at the start's edge)
    s.armed = Wire()
    s.finish = Wire()

    @update
    def up_kernel_finish():
      s.finish @= s.regs.busy & s.armed & ~s.fetch.busy & s.core.idle

    @update_ff
    def up_kernel_armed():
      if s.reset | s.finish:
        s.armed <<= 0
      elif s.regs.start:
        s.armed <<= 1

    s.regs.done //= s.finish
    s.status.start //= s.regs.start
    s.status.done //= s.finish
    s.status.issued //= s.core.issued
    s.status.retired //= s.core.retired
    for r in register_map( cfg ):
      if r.kind == "status":
        connect( getattr( s.regs, f"st_{r.name}" ), getattr( s.status, f"st_{r.name}" ) )

    s.err_hbm = Wire()
    s.err_ddr = Wire()

    NH, ND = len( s.hbm ), len( s.ddr )

    @update
    def up_kernel_errors():
      s.err_hbm @= 0
      for c in range( NH ):
        if s.hbm[c].error:
          s.err_hbm @= 1
      s.err_ddr @= 0
      for c in range( ND ):
        if s.ddr[c].error:
          s.err_ddr @= 1

    s.status.err_hbm_resp //= s.err_hbm
    s.status.err_ddr_resp //= s.err_ddr
    s.status.err_inst_resp //= s.fetch.error
    s.status.err_ring_frame //= s.rx.error

    @update
    def up_kernel_ring_counts():
      s.status.ring_tx_fire @= s.tx.axis.tvalid & s.tx.axis.tready
      s.status.ring_rx_fire @= s.rx.axis.tvalid & s.rx.axis.tready
      s.status.ring_tx_stall @= s.tx.axis.tvalid & ~s.tx.axis.tready

  def line_trace( s ):
    return f"{s.regs.line_trace()} {s.fetch.line_trace()} {s.core.line_trace()}"
