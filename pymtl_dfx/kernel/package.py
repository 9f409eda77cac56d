"""The Vitis packaging of `dfx_kernel` for the U280 (`dfx fpga`).

Every file is written from the kernel's boundary as `interface` declares
it (`buses(cfg)`, `register_map(cfg)`), so a port, a register or an
argument exists once:

  dfx_kernel.sv, filelist.f  the kernel's RTL (`kernel_rtl`, the lead's
                     `kernel.verilog.write_kernel_sv`)
  kernel.xml         the kernel's ports and arguments for v++/XRT
  package_kernel.tcl Vivado's IP packager: the bus-to-clock associations,
                     the register map, `sdx_kernel true`, the integrity check
  gen_xo.tcl         `package_xo`: the .xo v++ links
  link_hw.cfg        one card: `sp=` every memory master, `slr=`, the ring's
                     streams to the Aurora link kernels and their GT ports
  link_hw_emu.cfg    hw_emu: kernels in a ring on one device
  Makefile           the exact vivado and v++ commands
  resources.json/.md the per-card estimate and the SLR floorplan's argument
  config.json        the DFXConfig, the top, the files, the RTL's lint
  README.md          every file and the build commands

`write_kernel_folder(cfg, out_dir)` writes them all or nothing
(`atomic.atomic_dir`).
"""

import json
import math
import os
import re

from ..config import ConfigError
from . import interface as I
from .axi import widths

PLATFORM = "xilinx_u280_gen3x16_xdma_1_202211_1"
PART = "xcu280-fsvh2892-2L-e"
VENDOR, LIBRARY, VERSION = "pymtl-dfx", "kernel", "1.0"
VLNV = f"{VENDOR}:{LIBRARY}:{I.TOP}:{VERSION}"
CU = f"{I.TOP}_1"                       # the compute unit's name on one card
U280_SLRS = 3
# Where the U280's parts sit (UG1314 / the platform's floorplan): the HBM
# stacks and their 32 AXI ports at the bottom of SLR0, DDR4 bank 0 in SLR0
# and bank 1 in SLR1, the QSFP28 GTs beside SLR2.
HBM_SLR, QSFP_SLR = "SLR0", "SLR2"
# The link kernels the ring is built for: AuroraFlow (pc2/Aurora-HLS), Aurora
# 64B/66B on 4 x 25.78 Gb/s lanes with native flow control, one kernel per
# QSFP28 port (aurora_flow_0.xo on QSFP0, aurora_flow_1.xo on QSFP1, built
# with that repository's `make aurora`).  A ring is cabled card i QSFP1 ->
# card i+1 QSFP0: ring_tx leaves through aurora_flow_1, ring_rx arrives
# through aurora_flow_0.
AURORA = ( "aurora_flow_0", "aurora_flow_1" )
RING_TX_LINK, RING_RX_LINK = f"{AURORA[1]}.tx_axis", f"{AURORA[0]}.rx_axis"
# The paper's MFU on DSPs (Xilinx's floating-point IP: a multiplier on one
# DSP48E2, an adder on two), beside the per-SLR DSP count.
PAPER_MFU_DSP = 3072

FILES = ( "kernel.xml", "package_kernel.tcl", "gen_xo.tcl", "link_hw.cfg", "link_hw_emu.cfg",
          "Makefile", "resources.json", "resources.md", "config.json", "README.md" )


class PackageError( ConfigError ):
  """A config the U280 kernel cannot be packaged for."""


# -- the kernel's RTL, and its ports -------------------------------------------------------

def kernel_rtl( cfg, out_dir ):
  """Write the kernel's Verilog into out_dir: the one call to
  `pymtl_dfx.kernel.verilog.write_kernel_sv` (dfx_kernel.sv and its file
  list); returns its record {"top", "files", "lint", ...}."""
  try:
    from .verilog import write_kernel_sv
  except ImportError as e:
    raise PackageError( f"the kernel's RTL writer (pymtl_dfx.kernel.verilog.write_kernel_sv) "
                        f"is missing from this install: {e}" ) from None
  return write_kernel_sv( cfg, out_dir )


def kernel_resources( cfg ):
  """The kernel's resource table (`kernel.resources.kernel_resources`: the
  core's units, the kernel's own modules synthesised, per SLR)."""
  from .resources import kernel_resources as table
  return table( cfg )


def expected_ports( cfg ):
  """name -> (direction, width) of every port of dfx_kernel's top, from the
  buses: ap_clk, ap_rst_n, interrupt, then each bus's `PREFIX_signal`."""
  ports = { "ap_clk": ( "input", 1 ), "ap_rst_n": ( "input", 1 ), "interrupt": ( "output", 1 ) }
  for b in I.buses( cfg ):
    for name, ( bits, by_master ) in widths( b.table, b.addr_bits, b.data_bits ).items():
      ports[ f"{b.name}_{name}" ] = ( "output" if by_master == b.master else "input", bits )
  return ports


_PORT = re.compile( r"^\s*(input|output|inout)\s+(?:(?:wire|logic|reg|var)\s+)?(?:signed\s+)?"
                    r"(?:\[\s*([^\]:]+?)\s*:\s*([^\]]+?)\s*\]\s*)?(\w+)\s*$" )


def _int( expr ):
  expr = expr.strip()
  if not re.fullmatch( r"[\d\s()+\-*]+", expr ):
    raise ValueError( f"port range {expr!r} is not a constant" )
  return int( eval( expr, { "__builtins__": {} } ) )       # digits and + - * only


def kernel_ports( verilog_text, top=I.TOP ):
  """name -> (direction, width) of the ports of module `top`'s ANSI header
  in a Verilog / SystemVerilog text (comments ignored)."""
  text = re.sub( r"//[^\n]*|/\*.*?\*/", "", verilog_text, flags=re.S )
  m = re.search( rf"\bmodule\s+{re.escape( top )}\b\s*(#\s*\((?:[^()]|\([^()]*\))*\)\s*)?\(",
                 text )
  if not m:
    raise ValueError( f"no module {top} in the text" )
  depth, i = 1, m.end()
  while depth and i < len( text ):
    depth += { "(": 1, ")": -1 }.get( text[i], 0 )
    i += 1
  ports = {}
  for item in text[ m.end(): i - 1 ].split( "," ):
    if not item.strip():
      continue
    p = _PORT.match( item.replace( "\n", " " ) )
    if not p:
      raise ValueError( f"cannot read the port {' '.join( item.split() )!r} of {top}" )
    direction, hi, lo, name = p.groups()
    ports[ name ] = ( direction, abs( _int( hi ) - _int( lo ) ) + 1 if hi is not None else 1 )
  return ports


# -- kernel.xml ----------------------------------------------------------------------------

def stream_type( bits ):
  return f"stream<ap_axiu<{bits},0,0,0>>&"


def kernel_args( cfg ):
  """The kernel's arguments in kernel.xml's order: every `arg` register
  (a buffer base on its m_axi port, a scalar on s_axi_control), then the
  ring's streams.  Each: dict(name, qualifier, port, offset, size, type)."""
  out = []
  for r in I.register_map( cfg ):
    if r.kind != "arg":
      continue
    if r.bus:
      out.append( dict( name=r.name, qualifier=1, port=r.bus, offset=r.offset, size=8,
                        type="void*" ) )
    else:
      out.append( dict( name=r.name, qualifier=0, port="s_axi_control", offset=r.offset,
                        size=r.bits // 8, type="uint" if r.bits == 32 else "ulong" ) )
  for b in I.buses( cfg ):
    if b.kind == "axis":
      out.append( dict( name=b.name, qualifier=4, port=b.name, offset=0, size=0,
                        type=stream_type( b.data_bits ) ) )
  return out


def _xml( text ):
  return ( text.replace( "&", "&amp;" ).replace( "<", "&lt;" ).replace( ">", "&gt;" )
           .replace( '"', "&quot;" ) )


def kernel_xml( cfg ):
  lines = [ '<?xml version="1.0" encoding="UTF-8"?>',
            "<!-- dfx_kernel for the U280, written by `dfx fpga` from "
            "pymtl_dfx.kernel.interface -->",
            '<root versionMajor="1" versionMinor="6">',
            f'  <kernel name="{I.TOP}" language="ip_c" vlnv="{VLNV}" attributes="" '
            f'preferredWorkGroupSizeMultiple="0" workGroupSize="1" interrupt="true" '
            f'hwControlProtocol="ap_ctrl_hs">',
            "    <ports>" ]
  for b in I.buses( cfg ):
    if b.kind == "s_axi_lite":
      lines.append( f'      <port name="{b.name}" mode="slave" range="{1 << b.addr_bits:#x}" '
                    f'dataWidth="{b.data_bits}" portType="addressable" base="0x0"/>' )
    elif b.kind == "m_axi":
      lines.append( f'      <port name="{b.name}" mode="master" range="{( 1 << b.addr_bits ) - 1:#X}" '
                    f'dataWidth="{b.data_bits}" portType="addressable" base="0x0"/>'
                    .replace( "0X", "0x" ) )
    else:
      mode = "write_only" if b.master else "read_only"
      lines.append( f'      <port name="{b.name}" mode="{mode}" dataWidth="{b.data_bits}" '
                    f'portType="stream"/>' )
  lines.append( "    </ports>" )
  lines.append( "    <args>" )
  for k, a in enumerate( kernel_args( cfg ) ):
    lines.append( f'      <arg name="{a["name"]}" addressQualifier="{a["qualifier"]}" id="{k}" '
                  f'port="{a["port"]}" size="{a["size"]:#x}" offset="{a["offset"]:#x}" '
                  f'hostOffset="0x0" hostSize="{a["size"]:#x}" type="{_xml( a["type"] )}"/>' )
  lines += [ "    </args>", "  </kernel>", "</root>", "" ]
  return "\n".join( lines )


# -- package_kernel.tcl and gen_xo.tcl ------------------------------------------------

# The CTRL register's fields (the ap_ctrl_hs map, interface.CTRL_REGS' doc).
CTRL_FIELDS = ( ( "AP_START", 0, 1, "read-write" ), ( "AP_DONE", 1, 1, "read-only" ),
                ( "AP_IDLE", 2, 1, "read-only" ), ( "AP_READY", 3, 1, "read-only" ),
                ( "AUTO_RESTART", 7, 1, "read-write" ) )


def _tcl_str( text ):
  return "{" + text.replace( "{", "(" ).replace( "}", ")" ) + "}"


def package_kernel_tcl( cfg, files ):
  """Vivado's IP packager run on the kernel's sources (filelist.f's, in the
  folder): the IP goes to $packaged (gen_xo.tcl sets it; build/packaged_kernel
  when the script runs alone)."""
  hz = cfg.clock_mhz * 1_000_000
  out = [ "# Package dfx_kernel as a Vitis RTL kernel (sourced by gen_xo.tcl, which sets",
          "# $packaged; alone: vivado -mode batch -source package_kernel.tcl). Written by",
          "# `dfx fpga` from pymtl_dfx.kernel.interface.",
          f"set part {PART}",
          "set here [file dirname [file normalize [info script]]]",
          "if {![info exists packaged]} { set packaged [file join $here build packaged_kernel] }",
          "create_project -force -part $part dfx_kernel_pack [file join $here build pack]",
          "set sources {}",
          "set fl [open [file join $here filelist.f]]",
          "foreach line [split [read $fl] \\n] {",
          "  set line [string trim $line]",
          "  if {$line ne {} && [string index $line 0] ne {#}} { lappend sources [file join $here $line] }",
          "}",
          "close $fl",
          "add_files -norecurse $sources",
          f"set_property top {I.TOP} [current_fileset]",
          "update_compile_order -fileset sources_1",
          f"ipx::package_project -root_dir $packaged -vendor {VENDOR} -library {LIBRARY} "
          f"-taxonomy /KernelIP -import_files -set_current false",
          "ipx::unload_core [file join $packaged component.xml]",
          "ipx::edit_ip_in_project -upgrade true -name dfx_kernel_edit -directory $packaged "
          "[file join $packaged component.xml]",
          "set core [ipx::current_core]",
          f"set_property version {VERSION} $core",
          "foreach up [ipx::get_user_parameters -of_objects $core] {",
          "  ipx::remove_user_parameter [get_property NAME $up] $core",
          "}",
          "",
          "# every bus runs on ap_clk; ap_rst_n is its active-low reset",
          "ipx::associate_bus_interfaces -clock ap_clk -reset ap_rst_n $core" ]
  for b in I.buses( cfg ):
    out.append( f"ipx::associate_bus_interfaces -busif {b.name} -clock ap_clk $core" )
  out += [ "set clk [ipx::get_bus_interfaces ap_clk -of_objects $core]",
           "set freq [ipx::add_bus_parameter FREQ_HZ $clk]",
           f"set_property value {hz} $freq",
           "set_property value_resolve_type user $freq",
           "set irq [ipx::add_bus_interface interrupt $core]",
           "set_property abstraction_type_vlnv xilinx.com:signal:interrupt_rtl:1.0 $irq",
           "set_property bus_type_vlnv xilinx.com:signal:interrupt:1.0 $irq",
           "set irqmap [ipx::add_port_map INTERRUPT $irq]",
           "set_property physical_name interrupt $irqmap",
           "set sens [ipx::add_bus_parameter SENSITIVITY $irq]",
           "set_property value LEVEL_HIGH $sens",
           "",
           "# s_axi_control's register map (pymtl_dfx.kernel.interface.register_map)",
           "set map [ipx::add_memory_map s_axi_control $core]",
           "set block [ipx::add_address_block reg0 $map]",
           f"set_property range {1 << I.CTRL_ADDR_BITS:#x} $block",
           "set_property width 32 $block" ]
  for r in I.register_map( cfg ):
    out += [ f"set reg [ipx::add_register {r.name} $block]",
             f"set_property address_offset {r.offset:#05x} $reg",
             f"set_property size {r.bits} $reg",
             f"set_property description {_tcl_str( r.doc )} $reg" ]
    if r.kind == "status":
      out.append( "set_property access read-only $reg" )
    if r.bus:
      out += [ "set busif [ipx::add_register_parameter ASSOCIATED_BUSIF $reg]",
               f"set_property value {r.bus} $busif" ]
    if r.name == "CTRL":
      for name, bit, n, access in CTRL_FIELDS:
        out += [ f"set field [ipx::add_field {name} $reg]",
                 f"set_property bit_offset {bit} $field",
                 f"set_property bit_width {n} $field",
                 f"set_property access {access} $field" ]
  out += [ "set_property slave_memory_map_ref s_axi_control "
           "[ipx::get_bus_interfaces s_axi_control -of_objects $core]",
           "",
           "set_property xpm_libraries {XPM_CDC XPM_MEMORY XPM_FIFO} $core",
           "set_property sdx_kernel true $core",
           "set_property sdx_kernel_type rtl $core",
           "set_property supported_families {virtexuplusHBM Production} $core",
           "ipx::create_xgui_files $core",
           "ipx::update_checksums $core",
           "ipx::check_integrity -kernel $core",
           "ipx::save_core $core",
           "close_project -delete",
           "" ]
  return "\n".join( out )


def gen_xo_tcl():
  return "\n".join( [
    "# vivado -mode batch -source gen_xo.tcl -tclargs XO: package dfx_kernel and make XO.",
    "# Written by `dfx fpga`.",
    "if {$::argc != 1} {",
    "  puts \"usage: vivado -mode batch -source gen_xo.tcl -tclargs <dfx_kernel.xo>\"",
    "  exit 1",
    "}",
    "set xo [lindex $::argv 0]",
    "set here [file dirname [file normalize [info script]]]",
    "set packaged [file join $here build packaged_kernel]",
    "source [file join $here package_kernel.tcl]",
    "if {[file exists $xo]} { file delete -force $xo }",
    f"package_xo -xo_path $xo -kernel_name {I.TOP} -ip_directory $packaged "
    f"-kernel_xml [file join $here kernel.xml]",
    "" ] )


# -- the link configs ------------------------------------------------------------------

def slr_plan( cfg, resources=None ):
  """The floorplan from the resource estimate: per resource the share of one
  SLR (a third of the U280), the SLRs the core needs at least, and the
  `slr=` lines.  A kernel larger than one SLR is not given an slr= (UG1393:
  v++ spreads it, and an assignment would fail in implementation); the
  link kernels sit beside their GTs."""
  from ..resources.estimate import U280
  est = resources or kernel_resources( cfg )
  per_slr = { k: v / U280_SLRS for k, v in U280.items() }
  share = { k: est["totals"][k] / per_slr[k] for k in U280 }
  need = max( 1, max( math.ceil( s - 1e-9 ) for s in share.values() ) )
  lines = [ f"slr={a}:{QSFP_SLR}" for a in AURORA ]
  if need == 1:
    lines.insert( 0, f"slr={CU}:{HBM_SLR}" )
  return dict( per_slr=per_slr, share=share, slrs=need, lines=lines,
               spans=need > 1, paper_mfu_dsp=PAPER_MFU_DSP,
               paper_mfu_slrs=math.ceil( PAPER_MFU_DSP / per_slr["DSP"] ) )


def memory_masters( cfg ):
  return [ b for b in I.buses( cfg ) if b.bank ]


def _sp_lines( cfg, cu ):
  return [ f"sp={cu}.{b.name}:{b.bank}" for b in memory_masters( cfg ) ]


def link_hw_cfg( cfg, plan ):
  """One card's link config.  Every card of a ring runs the same xclbin (its
  ring position is a register), so this one file serves each of them."""
  out = [ "# v++ -l -t hw: one U280 card of a ring of "
          f"{cfg.cores} (every card the same xclbin; ring_pos is a register).",
          "# Written by `dfx fpga` from pymtl_dfx.kernel.interface.",
          "[connectivity]",
          f"nk={I.TOP}:1:{CU}" ]
  out += [ f"nk={a}:1:{a}" for a in AURORA ]
  out += [ "", "# every memory master on its own bank: HBM pseudo-channel c for m_axi_hbm<c>,",
           "# DDR bank i mod 2 for m_axi_ddr<i>, the program on DDR[0]" ]
  out += _sp_lines( cfg, CU )
  out += [ "", "# floorplan (resources.md): " + (
    f"the core needs {plan['slrs']} SLRs, so {CU} is not pinned (v++ spreads a kernel "
    f"larger than one SLR); the link kernels sit beside the QSFP GTs"
    if plan["spans"] else f"the core fits one SLR: {HBM_SLR}, beside the HBM ports" ) ]
  out += plan["lines"]
  out += [ "", "# the ring: out through QSFP1 to the next card, in through QSFP0 from the previous",
           f"stream_connect={CU}.ring_tx:{RING_TX_LINK}",
           f"stream_connect={RING_RX_LINK}:{CU}.ring_rx",
           "", "# the GT ports and their reference and init clocks (the platform's names)",
           f"connect=io_clk_qsfp0_refclkb_00:{AURORA[0]}/gt_refclk_0",
           f"connect={AURORA[0]}/gt_port:io_gt_qsfp0_00",
           f"connect={AURORA[0]}/init_clk:ii_level0_wire/ulp_m_aclk_freerun_ref_00",
           f"connect=io_clk_qsfp1_refclkb_00:{AURORA[1]}/gt_refclk_1",
           f"connect={AURORA[1]}/gt_port:io_gt_qsfp1_00",
           f"connect={AURORA[1]}/init_clk:ii_level0_wire/ulp_m_aclk_freerun_ref_00", "" ]
  return "\n".join( out )


def emu_kernels( cfg ):
  """Kernels of the hw_emu ring: the config's ring, at least 2 (v++ refuses a
  stream from a kernel to itself; at cores=1 the router never sends, so the
  second kernel only closes the loop)."""
  return max( 2, cfg.cores )


def link_hw_emu_cfg( cfg ):
  n = emu_kernels( cfg )
  cus = [ f"{I.TOP}_{k + 1}" for k in range( n ) ]
  out = [ f"# v++ -l -t hw_emu: {n} kernels in a ring on one device (GT links do not",
          "# emulate); kernel k's ring_tx feeds kernel k+1's ring_rx. Written by `dfx fpga`.",
          "[connectivity]",
          f"nk={I.TOP}:{n}:{'.'.join( cus )}" ]
  for cu in cus:
    out += _sp_lines( cfg, cu )
  for k, cu in enumerate( cus ):
    out.append( f"stream_connect={cu}.ring_tx:{cus[ ( k + 1 ) % n ]}.ring_rx" )
  out.append( "" )
  return "\n".join( out )


def link_config( text ):
  """{key: [values]} of a v++ config's [connectivity] lines (comments
  dropped)."""
  out = {}
  for line in text.splitlines():
    line = line.split( "#", 1 )[0].strip()
    if "=" in line and not line.startswith( "[" ):
      k, _, v = line.partition( "=" )
      out.setdefault( k.strip(), [] ).append( v.strip() )
  return out


# -- Makefile -----------------------------------------------------------------------------

def makefile( cfg ):
  mhz = cfg.clock_mhz
  return "\n".join( [
    f"# Build dfx_kernel for {PLATFORM} (Vitis 2022.2 or later). Written by `dfx fpga`.",
    "#   make xo            dfx_kernel.xo (Vivado's IP packager)",
    "#   make xclbin        build_hw/dfx_kernel.xclbin, one card of the ring (needs AURORA_XO)",
    "#   make hw_emu        build_hw_emu/dfx_kernel.xclbin, the emulated ring",
    f"PLATFORM ?= {PLATFORM}",
    "# the two AuroraFlow kernels (pc2/Aurora-HLS `make aurora`)",
    "AURORA_XO ?= aurora_flow_0.xo aurora_flow_1.xo",
    f"KERNEL_MHZ ?= {mhz}",
    "VPP ?= v++",
    "VIVADO ?= vivado",
    "SOURCES := $(shell cat filelist.f)",
    "",
    ".PHONY: xo xclbin hw hw_emu clean",
    "xo: dfx_kernel.xo",
    "xclbin hw: build_hw/dfx_kernel.xclbin",
    "hw_emu: build_hw_emu/dfx_kernel.xclbin",
    "",
    "dfx_kernel.xo: $(SOURCES) filelist.f kernel.xml package_kernel.tcl gen_xo.tcl",
    "\t$(VIVADO) -mode batch -nojournal -nolog -source gen_xo.tcl -tclargs $@",
    "",
    "build_hw/dfx_kernel.xclbin: dfx_kernel.xo link_hw.cfg",
    "\tmkdir -p build_hw",
    "\t$(VPP) -l -t hw --platform $(PLATFORM) --kernel_frequency $(KERNEL_MHZ) "
    "--config link_hw.cfg --temp_dir build_hw/tmp -o $@ dfx_kernel.xo $(AURORA_XO)",
    "",
    "build_hw_emu/dfx_kernel.xclbin: dfx_kernel.xo link_hw_emu.cfg",
    "\tmkdir -p build_hw_emu",
    "\t$(VPP) -l -t hw_emu --platform $(PLATFORM) --kernel_frequency $(KERNEL_MHZ) "
    "--config link_hw_emu.cfg --temp_dir build_hw_emu/tmp -o $@ dfx_kernel.xo",
    "",
    "clean:",
    "\trm -rf build build_hw build_hw_emu dfx_kernel.xo .Xil *.log *.jou",
    "" ] )


# -- resources ----------------------------------------------------------------------------

def resources_record( cfg, est, plan ):
  return dict( estimate=est, slr=dict( per_slr=plan["per_slr"], share=plan["share"],
                                       slrs=plan["slrs"], spans=plan["spans"],
                                       paper_mfu_dsp=plan["paper_mfu_dsp"],
                                       paper_mfu_slrs=plan["paper_mfu_slrs"],
                                       slr_lines=plan["lines"] ) )


def resources_md( cfg, est, plan ):
  from ..resources.estimate import U280, U280_SOURCE
  ks = list( U280 )
  out = [ f"# Resources of dfx_kernel at d={cfg.d}, l={cfg.l} (per card)", "",
          "The estimate of `pymtl_dfx.kernel.resources.kernel_resources` (Yosys "
          "`synth_xilinx -family xcup` unit numbers times instance counts, the core's and "
          "the kernel's own modules; docs/resources.md), "
          f"against the U280 ({U280_SOURCE}) and one of its {U280_SLRS} SLRs (a third of each "
          "resource; the shell takes part of SLR0 and SLR1 on top).", "",
          "| row | how | " + " | ".join( ks ) + " |",
          "|---|---|" + "---|" * len( ks ) ]
  for r in est["rows"]:
    out.append( f"| {r['name']} | {r['how']} ({r['source']}) | "
                + " | ".join( f"{r[k]:,}" for k in ks ) + " |" )
  out.append( "| **total** | | " + " | ".join( f"**{est['totals'][k]:,}**" for k in ks ) + " |" )
  out.append( "| % of the U280 | | " + " | ".join( f"{est['percent'][k]:.1f} %" for k in ks )
              + " |" )
  out.append( "| one SLR | | " + " | ".join( f"{plan['per_slr'][k]:,.0f}" for k in ks ) + " |" )
  out.append( "| share of one SLR | | " + " | ".join( f"{plan['share'][k]:.2f}" for k in ks )
              + " |" )
  binding = max( ks, key=lambda k: plan["share"][k] )
  out += [ "", "## Floorplan", "",
           f"By this estimate the core needs at least **{plan['slrs']} SLR(s)**: {binding} binds "
           f"({est['totals'][binding]:,} of {plan['per_slr'][binding]:,.0f} per SLR, "
           f"{plan['share'][binding]:.2f} SLRs). The paper's MFU alone uses "
           f"{PAPER_MFU_DSP:,} DSPs (Xilinx's floating-point IP: a multiplier on one DSP, an "
           f"adder on two), more than one SLR's {plan['per_slr']['DSP']:,.0f}: "
           f"{plan['paper_mfu_slrs']} SLRs for the MFU, which is why the paper splits the core "
           "across SLRs.", "",
           "The split: the MFU's l lanes are independent columns of a tile (lane j reads its "
           "own d weights and the shared input vector, and gives one sum to the accumulator), "
           "so they divide between SLRs with only the input vector and one FP16 result per "
           "lane crossing a boundary. The DMA, the HBM masters and the control stay in "
           f"{HBM_SLR}, where the 32 HBM AXI ports are; the VPU and the register file next to "
           "the lanes that hold the most columns; the router with the link kernels in "
           f"{QSFP_SLR}, beside the QSFP GTs.", "",
           "In the link config: " + ( f"{CU} gets no `slr=` (UG1393: v++ spreads a kernel "
                                      "larger than one SLR, and an assignment would fail in "
                                      "implementation); the lane split is placed by Vivado "
                                      "(pblocks per lane group are the next step once the "
                                      "kernel's hierarchy is fixed)" if plan["spans"]
                                      else f"the core fits one SLR and is pinned to {HBM_SLR}" )
           + f"; the Aurora kernels are pinned to {QSFP_SLR}: "
           + ", ".join( f"`{x}`" for x in plan["lines"] ) + ".", "",
           "Not estimated: " + "; ".join( est["left_out"] ) + ".", "",
           "## Per SLR", "",
           "The rows placed on the three SLRs (`kernel.resources`; the MFU lanes split where "
           "the LUTs leave room), with the DSP and LUT counts if the FP16 adders go on DSPs as "
           "Xilinx's floating-point IP puts them:", "" ]
  from .resources import markdown
  out += markdown( est ).split( "\n" )
  return "\n".join( out ) + "\n"


# -- README -------------------------------------------------------------------------------

def readme( cfg, record, plan ):
  masters = memory_masters( cfg )
  hbm = sum( 1 for b in masters if b.memory == "hbm" )
  ddr = sum( 1 for b in masters if b.memory == "ddr" )
  rtl = ", ".join( f"`{f}`" for f in record["rtl"]["files"] )
  return "\n".join( [
    f"# dfx_kernel for the Alveo U280 (d={cfg.d}, l={cfg.l}, a ring of {cfg.cores})", "",
    f"Written by `dfx fpga` (pymtl_dfx {record['pymtl_dfx']}) for the DFXConfig in "
    "`config.json`; every file comes from the kernel's buses and register map "
    "(`pymtl_dfx.kernel.interface`). Platform `" + PLATFORM + f"` (part `{PART}`), Vitis "
    "2022.2 or later.", "",
    "## Files", "",
    f"- {rtl}: the kernel's RTL (SystemVerilog: Vivado picks the language by extension), "
    "top `dfx_kernel`; `filelist.f` lists the sources in compile order.",
    f"- `kernel.xml`: the ports (`s_axi_control` slave, {hbm} HBM masters `m_axi_hbmNN`, "
    f"{ddr} DDR master(s) `m_axi_ddrN`, the program fetch `m_axi_inst`, the ring streams "
    "`ring_tx` (write_only) and `ring_rx` (read_only)) and the arguments at their "
    "`s_axi_control` offsets: one 64-bit base per memory master (on its port), the scalars "
    "`inst_count` and `ring_pos`, the two streams. `ap_ctrl_hs` with the interrupt.",
    "- `package_kernel.tcl`: Vivado's IP packager on the sources: every bus associated with "
    "`ap_clk` (reset `ap_rst_n`), the clock's FREQ_HZ, the interrupt, the whole register map "
    "(arguments and read-only status: cycles, busy cycles per unit, sticky errors, ring "
    "counters), `sdx_kernel true`, `sdx_kernel_type rtl`, `ipx::check_integrity -kernel`.",
    "- `gen_xo.tcl`: sources `package_kernel.tcl`, then `package_xo` with `kernel.xml`.",
    "- `link_hw.cfg`: one card: `nk=dfx_kernel:1`, an `sp=` for every memory master (HBM "
    "pseudo-channel c for `m_axi_hbm<c>`, DDR bank i mod 2 for `m_axi_ddr<i>`, the program on "
    "DDR[0]), the `slr=` floorplan (`resources.md`), `ring_tx` to the next card through "
    "`aurora_flow_1` (QSFP1) and `ring_rx` from the previous one through `aurora_flow_0` "
    "(QSFP0), and the GT ports. Every card of the ring runs the same xclbin: the card's "
    "position is the `ring_pos` register, the ring size a build parameter.",
    f"- `link_hw_emu.cfg`: {emu_kernels( cfg )} kernels in a ring on one device, "
    "`stream_connect` from each `ring_tx` to the next `ring_rx` (GT links do not emulate).",
    "- `Makefile`: the exact commands (below).",
    "- `resources.json`, `resources.md`: the per-card resource estimate against the U280 and "
    "one SLR, and the floorplan's argument.",
    "- `config.json`: the DFXConfig, the top, the files, the RTL writer's record (lint).",
  ] + ( [ "- `lint.log`: Verilator's `--lint-only -Wall` of the RTL (the waived classes and "
          "their reasons are in `config.json`)." ] if "lint.log" in record["files"] else [] ) + [
    "- `README.md`: this page.", "",
    "## The ring's link", "",
    "The ring is built for AuroraFlow (pc2/Aurora-HLS): Aurora 64B/66B on the four 25.78 Gb/s "
    "lanes of a QSFP28 port, with native flow control, so a full receiver back-pressures the "
    "sender instead of dropping (the UDP stacks over the 100G MAC drop on a receive overflow). "
    "Build its two kernels with that repository's `make aurora` (`aurora_flow_0.xo` for QSFP0, "
    "`aurora_flow_1.xo` for QSFP1) and point `AURORA_XO` at them. Cable card i's QSFP1 to card "
    "i+1's QSFP0 (the last card's QSFP1 to card 0's QSFP0; a ring of one card needs no cable: "
    "its router never sends). The reverse halves of the two links (`aurora_flow_0.tx_axis`, "
    "`aurora_flow_1.rx_axis`) carry nothing; v++ ties their unconnected inputs to 0.", "",
    "## Build", "",
    "```",
    "source /opt/xilinx/xrt/setup.sh && source <Vitis 2022.2>/settings64.sh",
    "make xo          # vivado -mode batch -source gen_xo.tcl -tclargs dfx_kernel.xo",
    "make xclbin AURORA_XO='path/aurora_flow_0.xo path/aurora_flow_1.xo'",
    f"                 # v++ -l -t hw --platform {PLATFORM} --kernel_frequency {cfg.clock_mhz}",
    "                 #     --config link_hw.cfg -o build_hw/dfx_kernel.xclbin dfx_kernel.xo $(AURORA_XO)",
    "make hw_emu      # v++ -l -t hw_emu ... --config link_hw_emu.cfg -o build_hw_emu/dfx_kernel.xclbin",
    "```", "",
    "Run: `dfx generate --level fpga --xclbin build_hw/dfx_kernel.xclbin --cores N ...` "
    "(XRT's Python bindings, `pyxrt`, from /opt/xilinx/xrt/python), one card per device.", "",
    "## Floorplan", "",
    ( f"The estimate needs {plan['slrs']} SLRs (resources.md): `dfx_kernel_1` is not pinned, "
      "and v++ spreads it; " if plan["spans"] else
      f"The core fits one SLR by the estimate and is pinned to {HBM_SLR} beside the HBM; " )
    + f"the Aurora kernels sit in {QSFP_SLR}. The paper's MFU uses {PAPER_MFU_DSP:,} DSPs, "
    f"more than one SLR's {plan['per_slr']['DSP']:,.0f}, so the paper splits the core across "
    "SLRs; resources.md says how.", "" ] )


# -- the folder ----------------------------------------------------------------------------

def write_files( cfg, work, rtl ):
  """Every file beside the RTL into `work`; returns the config.json record."""
  from .. import __version__
  est = kernel_resources( cfg )
  plan = slr_plan( cfg, est )
  made = set( os.listdir( work ) )        # the RTL writer's files (and its lint.log)
  record = dict( top=I.TOP, kernel=I.TOP, platform=PLATFORM, part=PART, vlnv=VLNV,
                 config=cfg.to_dict(), pymtl_dfx=__version__, rtl=rtl,
                 files=sorted( made | set( FILES ) ),
                 memory_masters={ b.name: b.bank for b in memory_masters( cfg ) },
                 floorplan=dict( slrs=plan["slrs"], slr=plan["lines"] ) )
  texts = { "kernel.xml": kernel_xml( cfg ),
            "package_kernel.tcl": package_kernel_tcl( cfg, rtl["files"] ),
            "gen_xo.tcl": gen_xo_tcl(),
            "link_hw.cfg": link_hw_cfg( cfg, plan ),
            "link_hw_emu.cfg": link_hw_emu_cfg( cfg ),
            "Makefile": makefile( cfg ),
            "resources.json": json.dumps( resources_record( cfg, est, plan ), indent=2 ) + "\n",
            "resources.md": resources_md( cfg, est, plan ),
            "README.md": readme( cfg, record, plan ),
            "config.json": json.dumps( record, indent=2 ) + "\n" }
  for name, text in texts.items():
    with open( os.path.join( work, name ), "w" ) as f:
      f.write( text )
  return record


def write_kernel_folder( cfg, out_dir ):
  """The whole U280 folder for `cfg` in out_dir (new or empty), all or
  nothing; returns the config.json record.  A lint failure keeps
  Verilator's log (`rtlgen.keeping_refused_log`: OUT.lint.log) and names it."""
  from ..atomic import atomic_dir
  from ..bounds import check_dfx
  from ..hdl.rtlgen import LintRefusal, keeping_refused_log, lint_failure
  check_dfx( cfg, rtl=True )             # the U280's channels and sizes (`bounds`)
  with keeping_refused_log( out_dir, PackageError ), atomic_dir( out_dir, "--out" ) as work:
    rtl = kernel_rtl( cfg, work )
    missing = [ f for f in rtl["files"] if not os.path.isfile( os.path.join( work, f ) ) ]
    if missing or not os.path.isfile( os.path.join( work, "filelist.f" ) ):
      raise PackageError( f"the kernel's RTL writer did not write {missing or 'filelist.f'}" )
    lint = rtl.get( "lint" )
    log_path = os.path.join( work, "lint.log" )
    log = open( log_path ).read() if os.path.isfile( log_path ) else ""
    failure = lint and lint_failure( lint, log )
    if failure:
      raise LintRefusal( f"{I.TOP} ({lint['verilator']} Verilator {lint['version']})", failure, log )
    record = write_files( cfg, work, rtl )
  return record
