"""The kernel's boundary, declared once: its buses and its register map.

`buses(cfg)` lists every bus of `dfx_kernel` (beside `ap_clk`, `ap_rst_n`
and `interrupt`); `register_map(cfg)` lists every register of
`s_axi_control`.  The RTL top (`KernelRTL`), kernel.xml, the packaging
Tcl, the link configs, the host runtime and the co-simulation's register
driver all read these two lists, so a port or an argument exists once.

Memory masters: one per HBM pseudo-channel (`m_axi_hbmNN`, the DMA stripes
word a over channel a mod C, so a port stays on its channel), one per DDR
port (`m_axi_ddrN`; the DMA's `ddr_channels` ports share the U280's two DDR4
banks, port i on bank i mod 2) and `m_axi_inst`, the program fetch (on
DDR bank 0).  The ring: `ring_tx` to the next card, `ring_rx` from the
previous one, 512-bit AXI4-Streams to the link kernels.
"""

from dataclasses import dataclass

from ..isa import INST_BITS
from ..units.control.msgs import UNITS
from .axi import (AXI4, AXI4_LITE, AXI4_STREAM, LITE_DATA_BITS, MEM_ADDR_BITS,
                  STREAM_DATA_BITS)

TOP = "dfx_kernel"
CTRL_ADDR_BITS = 12            # s_axi_control's address space: 4 KB
DDR_BANKS = 2                  # the U280's DDR4 channels


@dataclass( frozen=True )
class Bus:
  name: str            # the prefix of its ports on the top
  table: tuple         # axi.AXI4 / AXI4_LITE / AXI4_STREAM
  master: bool         # the kernel drives it as the master
  data_bits: int
  addr_bits: int = 0
  memory: str = ""     # "hbm", "ddr" or "inst" for a memory master
  channel: int = 0     # its HBM pseudo-channel or DDR port

  @property
  def kind( s ):
    return { AXI4: "m_axi", AXI4_LITE: "s_axi_lite", AXI4_STREAM: "axis" }[ s.table ]

  @property
  def bank( s ):
    """Where the link config places a memory master: HBM[c] or DDR[b]."""
    if s.memory == "hbm":
      return f"HBM[{s.channel}]"
    if s.memory == "ddr":
      return f"DDR[{s.channel % DDR_BANKS}]"
    if s.memory == "inst":
      return "DDR[0]"
    return None


def inst_data_bits():
  """The fetch master's width: one instruction per beat."""
  return max( 32, 1 << ( INST_BITS - 1 ).bit_length() )


def buses( cfg ):
  word = cfg.mem_word_bits
  out = [ Bus( "s_axi_control", AXI4_LITE, False, LITE_DATA_BITS, CTRL_ADDR_BITS ) ]
  out += [ Bus( f"m_axi_hbm{c:02d}", AXI4, True, word, MEM_ADDR_BITS, "hbm", c )
           for c in range( cfg.hbm_channels ) ]
  out += [ Bus( f"m_axi_ddr{c}", AXI4, True, word, MEM_ADDR_BITS, "ddr", c )
           for c in range( cfg.ddr_channels ) ]
  out += [ Bus( "m_axi_inst", AXI4, True, inst_data_bits(), MEM_ADDR_BITS, "inst" ) ]
  out += [ Bus( "ring_tx", AXI4_STREAM, True, STREAM_DATA_BITS ),
           Bus( "ring_rx", AXI4_STREAM, False, STREAM_DATA_BITS ) ]
  return out


@dataclass( frozen=True )
class Reg:
  name: str
  offset: int          # bytes; a 64-bit register is lo at offset, hi at offset + 4
  bits: int            # 32 or 64
  kind: str            # "ctrl", "arg" (written by the host before a start) or "status" (read-only)
  doc: str
  bus: str = ""        # an argument that is a buffer's base: the m_axi it addresses


CTRL_REGS = (
  Reg( "CTRL", 0x00, 32, "ctrl", "bit 0 ap_start (set by the host, cleared at ap_ready), "
       "bit 1 ap_done (clear on read), bit 2 ap_idle, bit 3 ap_ready (clear on read), "
       "bit 7 auto_restart" ),
  Reg( "GIE", 0x04, 32, "ctrl", "bit 0: global interrupt enable" ),
  Reg( "IER", 0x08, 32, "ctrl", "bit 0: interrupt on ap_done, bit 1: on ap_ready" ),
  Reg( "ISR", 0x0C, 32, "ctrl", "bit 0: ap_done seen, bit 1: ap_ready seen (toggle on write)" ),
)
ARGS_BASE = 0x10
SLOT = 8                      # every register after the four control ones takes 8 bytes

# sticky error bits of the `errors` status register
ERROR_BITS = { "hbm_resp": 0, "ddr_resp": 1, "inst_resp": 2, "ring_frame": 3 }


def register_map( cfg ):
  args = [ ( "inst_count", 32, "instructions to fetch and run", "" ),
           ( "inst_addr", 64, "the program's byte address (m_axi_inst)", "m_axi_inst" ) ]
  args += [ ( b.name[ len( "m_axi_" ): ], 64, f"base byte address of the {b.memory.upper()} "
              f"buffer behind {b.name}", b.name )
            for b in buses( cfg ) if b.memory in ( "hbm", "ddr" ) ]
  args += [ ( "ring_pos", 32, "this card's position on the ring (0 .. cores-1)", "" ) ]
  status = [ ( "cycles", 64, "cycles from ap_start to ap_done of the last run" ) ]
  status += [ ( f"busy_{u}", 64, f"cycles the {u} had an instruction in flight" ) for u in UNITS ]
  status += [ ( "errors", 32, "sticky error bits (cleared by reset): " + ", ".join(
                f"bit {b} {n}" for n, b in ERROR_BITS.items() ) ),
              ( "ring_tx_beats", 32, "beats sent on ring_tx" ),
              ( "ring_rx_beats", 32, "beats taken from ring_rx" ),
              ( "ring_tx_stalls", 32, "cycles ring_tx was valid but not ready (link back-pressure)" ) ]
  regs = list( CTRL_REGS )
  at = ARGS_BASE
  for name, bits, doc, bus in args:
    regs.append( Reg( name, at, bits, "arg", doc, bus ) )
    at += SLOT
  for name, bits, doc in status:
    regs.append( Reg( name, at, bits, "status", doc ) )
    at += SLOT
  assert at <= 1 << CTRL_ADDR_BITS, at
  return regs
