"""The U280 packaging (`pymtl_dfx.kernel.package`, `dfx fpga`): kernel.xml
against the RTL's ports, the Tcl scripts run in tclsh with every Vivado
command stubbed and recorded, the link configs' memory banks and streams,
and the folder written all or nothing."""

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from pymtl_dfx import cli
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.kernel import interface as I
from pymtl_dfx.kernel import package as P
from pymtl_dfx.kernel.axi import widths

PAPER = DFXConfig()
SMALL = DFXConfig( d=8, l=4, hbm_channels=2, vreg_entries=64, mreg_entries=32, psum_entries=4 )
RING4 = DFXConfig( cores=4 )
CONFIGS = { "paper": PAPER, "small": SMALL, "ring4": RING4 }
SMALL_SET = [ "--set", "d=8", "--set", "l=4", "--set", "hbm_channels=2", "--set", "vreg_entries=64",
              "--set", "mreg_entries=32", "--set", "psum_entries=4" ]


# -- a stand-in for the kernel's RTL writer (the real one: kernel.verilog) -----------------

def standin_header( cfg, drop=(), extra=(), wide=() ):
  """A module header with the ports the buses imply, written from the bus
  tables directly; `drop`/`extra`/`wide` break it on purpose."""
  ports = [ "input  logic ap_clk", "input  wire ap_rst_n", "output logic interrupt" ]
  for b in I.buses( cfg ):
    for name, ( bits, by_master ) in widths( b.table, b.addr_bits, b.data_bits ).items():
      full = f"{b.name}_{name}"
      if full in drop:
        continue
      bits += full in wide
      d = "output" if by_master == b.master else "input "
      ports.append( f"{d} logic {f'[{bits - 1}:0] ' if bits > 1 else ''}{full}" )
  ports += list( extra )
  return ( "// stand-in\nmodule dfx_kernel /* the top */ (\n  " + ",\n  ".join( ports )
           + "\n);\nendmodule\n" )


def standin_writer( **broken ):
  def write_kernel_sv( cfg, out_dir ):
    with open( os.path.join( out_dir, "dfx_kernel.sv" ), "w" ) as f:
      f.write( standin_header( cfg, **broken ) )
    with open( os.path.join( out_dir, "filelist.f" ), "w" ) as f:
      f.write( "dfx_kernel.sv\n" )
    return dict( top="dfx_kernel", files=[ "dfx_kernel.sv" ], lint=dict( errors=0 ) )
  return write_kernel_sv


@pytest.fixture
def standin( monkeypatch ):
  monkeypatch.setattr( P, "kernel_rtl", standin_writer() )


def _folder( tmp_path, cfg, name="out" ):
  out = tmp_path / name
  P.write_kernel_folder( cfg, out )
  return out


# -- kernel.xml against the RTL's ports ------------------------------------------------------

def xml_check( xml_text, ports, cfg ):
  """Every problem between kernel.xml and the top's ports (both ways) and
  the register map; [] when they agree."""
  k = ET.fromstring( xml_text ).find( "kernel" )
  bad = []
  if k.get( "hwControlProtocol" ) != "ap_ctrl_hs" or k.get( "name" ) != I.TOP:
    bad.append( "kernel attributes" )
  xports = { p.get( "name" ): p for p in k.find( "ports" ) }
  for n in ( "ap_clk", "ap_rst_n", "interrupt" ):
    if n not in ports:
      bad.append( f"the RTL lacks {n}" )
  claimed = { "ap_clk", "ap_rst_n", "interrupt" }
  for name, p in xports.items():
    sig = { s: v for s, v in ports.items() if s.startswith( name + "_" ) }
    claimed |= set( sig )
    mode, width = p.get( "mode" ), int( p.get( "dataWidth" ) )
    if mode in ( "master", "slave" ):
      data_out = "wdata" if mode == "master" else "rdata"
      if sig.get( f"{name}_{data_out}" ) != ( "output", width ):
        bad.append( f"{name}: {data_out} is {sig.get( f'{name}_{data_out}' )}, kernel.xml says "
                    f"{width} bits {mode}" )
    else:
      want = "output" if mode == "write_only" else "input"
      if sig.get( f"{name}_tdata" ) != ( want, width ) or f"{name}_tvalid" not in sig:
        bad.append( f"{name}: tdata is {sig.get( f'{name}_tdata' )}, kernel.xml says {mode} {width}" )
    bus = { b.name: b for b in I.buses( cfg ) }.get( name )
    want_sig = { f"{name}_{s}" for s in widths( bus.table, bus.addr_bits, bus.data_bits ) } \
      if bus else set()
    if set( sig ) != want_sig:
      bad.append( f"{name}: RTL signals differ: {sorted( set( sig ) ^ want_sig )[:4]}" )
  for extra in sorted( set( ports ) - claimed ):
    bad.append( f"the RTL's {extra} is on no kernel.xml port" )
  regs = { r.name: r for r in I.register_map( cfg ) }
  args = { a.get( "name" ): a for a in k.find( "args" ) }
  for a in args.values():
    port, q = a.get( "port" ), a.get( "addressQualifier" )
    if port not in xports:
      bad.append( f"arg {a.get( 'name' )} on a missing port {port}" )
    if q in ( "0", "1" ):
      r = regs.get( a.get( "name" ) )
      if r is None or r.kind != "arg" or int( a.get( "offset" ), 16 ) != r.offset \
         or int( a.get( "size" ), 16 ) != r.bits // 8 or ( r.bus or "s_axi_control" ) != port:
        bad.append( f"arg {a.get( 'name' )} differs from the register map" )
    elif q == "4" and xports[ port ].get( "portType" ) != "stream":
      bad.append( f"stream arg {a.get( 'name' )} on a non-stream port" )
  for name, p in xports.items():
    if p.get( "mode" ) != "slave" and not any( a.get( "port" ) == name for a in args.values() ):
      bad.append( f"port {name} has no argument" )
  for r in regs.values():
    if r.kind == "arg" and r.name not in args:
      bad.append( f"register {r.name} is no argument" )
  return bad


@pytest.mark.parametrize( "which", CONFIGS )
def test_kernel_xml_matches_the_rtl_ports( which, tmp_path, standin ):
  cfg = CONFIGS[ which ]
  out = _folder( tmp_path, cfg )
  ports = P.kernel_ports( ( out / "dfx_kernel.sv" ).read_text() )
  assert ports == P.expected_ports( cfg )
  assert xml_check( ( out / "kernel.xml" ).read_text(), ports, cfg ) == []


@pytest.mark.parametrize( "broken, says", [
  ( dict( drop=( "m_axi_hbm01_wdata", ) ), "m_axi_hbm01: wdata" ),
  ( dict( wide=( "ring_rx_tdata", ) ), "ring_rx: tdata" ),
  ( dict( extra=( "input logic [7:0] debug_in", ) ), "debug_in is on no kernel.xml port" ),
  ( dict( drop=( "s_axi_control_bresp", ) ), "s_axi_control: RTL signals differ" ) ] )
def test_the_port_check_finds_a_wrong_top( broken, says ):
  ports = P.kernel_ports( standin_header( SMALL, **broken ) )
  bad = xml_check( P.kernel_xml( SMALL ), ports, SMALL )
  assert any( says in b for b in bad ), bad


def test_kernel_ports_reads_headers():
  text = """module other( input a ); endmodule
  module dfx_kernel #( parameter W = 8 ) (
    input  logic [ 63 : 0 ] m_axi_x_araddr,   // an address
    output wire signed [2*8-1:0] y,
    input clk /* 1 bit */
  );"""
  assert P.kernel_ports( text ) == { "m_axi_x_araddr": ( "input", 64 ), "y": ( "output", 16 ),
                                     "clk": ( "input", 1 ) }
  with pytest.raises( ValueError, match="no module dfx_kernel" ):
    P.kernel_ports( "module top( input a ); endmodule" )
  with pytest.raises( ValueError, match="not a constant" ):
    P.kernel_ports( "module dfx_kernel( input [W-1:0] a );" )


@pytest.mark.parametrize( "which", CONFIGS )
def test_against_the_real_top_when_it_is_there( which ):
  """The header of the real top (`kernel.verilog.wrapper_text`, the module
  `write_kernel_sv` writes first, without the translation below it), when
  this tree has the kernel's components."""
  V = pytest.importorskip( "pymtl_dfx.kernel.verilog", reason="the kernel's RTL is not whole yet" )
  cfg = CONFIGS[ which ]
  ports = P.kernel_ports( V.wrapper_text( cfg ) )
  assert ports == P.expected_ports( cfg )
  assert xml_check( P.kernel_xml( cfg ), ports, cfg ) == []


# -- the Tcl scripts, run with Vivado's commands stubbed ---------------------------------

VIVADO = ( "create_project add_files set_property get_property current_fileset "
           "update_compile_order close_project package_xo "
           "ipx::package_project ipx::unload_core ipx::edit_ip_in_project ipx::current_core "
           "ipx::get_user_parameters ipx::remove_user_parameter ipx::associate_bus_interfaces "
           "ipx::get_bus_interfaces ipx::add_bus_parameter ipx::add_bus_interface "
           "ipx::add_port_map ipx::add_memory_map ipx::add_address_block ipx::add_register "
           "ipx::add_register_parameter ipx::add_field ipx::create_xgui_files "
           "ipx::update_checksums ipx::check_integrity ipx::save_core" ).split()

PRELUDE = r"""
set ::calls {}
proc stub_result {cmd argl} {
  switch -- $cmd {
    ipx::current_core { return core }
    ipx::get_user_parameters { return {} }
    ipx::add_register { return "register:[lindex $argl 0]" }
    ipx::add_field { return "field:[lindex $argl 0]" }
    default { return "$cmd:[llength $::calls]" }
  }
}
namespace eval ::ipx {}
foreach cmd {%s} {
  proc $cmd {args} [format {lappend ::calls [list %%s {*}$args]; return [stub_result %%s $args]} $cmd $cmd]
}
proc unknown {args} { puts stderr "not a stubbed command: $args"; exit 3 }
set ::argv [list %s]
set ::argc 1
source %s
foreach c $::calls { puts [join $c "\x1f"] }
"""


def tcl_calls( folder, tmp_path, script_name="gen_xo.tcl" ):
  tclsh = shutil.which( "tclsh" ) or ( "/usr/bin/tclsh" if os.path.exists( "/usr/bin/tclsh" ) else None )
  if tclsh is None:
    pytest.skip( "no tclsh (the Makefile's DEB_TOOLS installs the `tcl` package)" )
  script = tmp_path / "dry_run.tcl"
  script.write_text( PRELUDE % ( " ".join( VIVADO ), tmp_path / "dfx_kernel.xo",
                                 folder / script_name ) )
  r = subprocess.run( [ tclsh, str( script ) ], capture_output=True, text=True, timeout=60 )
  assert r.returncode == 0, r.stderr
  return [ line.split( "\x1f" ) for line in r.stdout.splitlines() ]


@pytest.mark.parametrize( "which", [ "paper", "small" ] )
def test_tcl_dry_run_records_the_packaging( which, tmp_path, standin ):
  cfg = CONFIGS[ which ]
  out = _folder( tmp_path, cfg )
  calls = tcl_calls( out, tmp_path )
  names = [ c[0] for c in calls ]
  assert set( names ) <= set( VIVADO )
  # every bus on ap_clk, and the reset
  assoc = { c[2] for c in calls if c[:2] == [ "ipx::associate_bus_interfaces", "-busif" ]
            and c[3:5] == [ "-clock", "ap_clk" ] and c[5] == "core" }
  assert assoc == { b.name for b in I.buses( cfg ) }
  assert [ "ipx::associate_bus_interfaces", "-clock", "ap_clk", "-reset", "ap_rst_n", "core" ] in calls
  # every register at its offset and size; a buffer's base on its bus
  props = {}
  for c in calls:
    if c[0] == "set_property" and len( c ) == 4:
      props.setdefault( c[3], {} )[ c[1] ] = c[2]
  made = [ c[1] for c in calls if c[0] == "ipx::add_register" ]
  assert made == [ r.name for r in I.register_map( cfg ) ]
  for r in I.register_map( cfg ):
    p = props[ f"register:{r.name}" ]
    assert int( p["address_offset"], 16 ) == r.offset and int( p["size"] ) == r.bits, r
    assert ( p.get( "access" ) == "read-only" ) == ( r.kind == "status" ), r
  buses_of = [ c for c in calls if c[0] == "ipx::add_register_parameter" ]
  assert len( buses_of ) == sum( 1 for r in I.register_map( cfg ) if r.bus )
  assert props["core"]["sdx_kernel"] == "true" and props["core"]["sdx_kernel_type"] == "rtl"
  # the integrity check after the whole register map, before the save
  assert names.index( "ipx::check_integrity" ) > max( i for i, n in enumerate( names )
                                                        if n == "ipx::add_register" )
  assert [ "ipx::check_integrity", "-kernel", "core" ] in calls
  assert names.index( "ipx::save_core" ) > names.index( "ipx::check_integrity" )
  # the sources from filelist.f, and package_xo with kernel.xml
  added = next( c for c in calls if c[0] == "add_files" )
  assert added[1] == "-norecurse" and added[2].split() == [ str( out / "dfx_kernel.sv" ) ]
  xo = next( c for c in calls if c[0] == "package_xo" )
  opt = dict( zip( xo[1::2], xo[2::2] ) )
  assert opt["-kernel_name"] == I.TOP and opt["-kernel_xml"] == str( out / "kernel.xml" )
  assert opt["-xo_path"] == str( tmp_path / "dfx_kernel.xo" )
  assert names.index( "package_xo" ) > names.index( "ipx::save_core" )
  freq = [ c for c in calls if c[:3] == [ "set_property", "value", str( cfg.clock_mhz * 10**6 ) ] ]
  assert freq
  # package_kernel.tcl alone: the same packaging, into build/packaged_kernel, and no .xo
  alone = tcl_calls( out, tmp_path, "package_kernel.tcl" )
  assert alone == [ c for c in calls if c[0] != "package_xo" ]
  assert next( c for c in alone if c[0] == "ipx::package_project" )[2] == \
    str( out / "build" / "packaged_kernel" )


# -- the link configs -------------------------------------------------------------------------

def link_problems( cfg, text, cus ):
  """Every memory master of every compute unit without its sp= (or on the
  wrong bank), and every stream endpoint left unconnected or self-driven."""
  c = P.link_config( text )
  bad = []
  sp = dict( v.rsplit( ":", 1 ) for v in c.get( "sp", [] ) )
  for cu in cus:
    for b in P.memory_masters( cfg ):
      if sp.get( f"{cu}.{b.name}" ) != b.bank:
        bad.append( f"{cu}.{b.name}: sp {sp.get( f'{cu}.{b.name}' )}, want {b.bank}" )
  pairs = [ v.split( ":" )[:2] for v in c.get( "stream_connect", [] ) ]
  srcs, dsts = [ s for s, _ in pairs ], [ d for _, d in pairs ]
  for cu in cus:
    for b in I.buses( cfg ):
      if b.kind == "axis":
        side = srcs if b.master else dsts
        if side.count( f"{cu}.{b.name}" ) != 1:
          bad.append( f"{cu}.{b.name} is connected {side.count( f'{cu}.{b.name}' )} times" )
  for s, d in pairs:
    if s.split( "." )[0] == d.split( "." )[0]:
      bad.append( f"{s} drives its own kernel" )
  for bank in sp.values():
    kind, _, n = bank.partition( "[" )
    if not ( kind == "HBM" and 0 <= int( n[:-1] ) < 32 or kind == "DDR" and int( n[:-1] ) in ( 0, 1 ) ):
      bad.append( f"no such bank {bank}" )
  return bad


@pytest.mark.parametrize( "which", CONFIGS )
def test_link_configs_place_every_master_and_connect_every_stream( which ):
  cfg = CONFIGS[ which ]
  plan = P.slr_plan( cfg )
  hw = P.link_hw_cfg( cfg, plan )
  assert link_problems( cfg, hw, [ P.CU ] ) == []
  c = P.link_config( hw )
  assert f"{P.CU}.ring_tx:{P.RING_TX_LINK}" in c["stream_connect"]
  assert f"{P.RING_RX_LINK}:{P.CU}.ring_rx" in c["stream_connect"]
  assert { v.split( ":" )[0] for v in c["nk"] } == { I.TOP, *P.AURORA }
  gts = [ v for v in c["connect"] if "gt_port:io_gt_qsfp" in v ]
  assert len( gts ) == 2
  assert { f"slr={v}" for v in c["slr"] } == set( plan["lines"] ) and all( v.endswith( "SLR2" ) for v in c["slr"]
                                                           if v.startswith( "aurora" ) )
  emu = P.link_hw_emu_cfg( cfg )
  n = P.emu_kernels( cfg )
  cus = [ f"{I.TOP}_{k + 1}" for k in range( n ) ]
  assert P.link_config( emu )["nk"] == [ f"{I.TOP}:{n}:{'.'.join( cus )}" ]
  assert link_problems( cfg, emu, cus ) == []


def test_link_check_finds_a_missing_sp_and_a_loose_stream():
  cfg = SMALL
  hw = P.link_hw_cfg( cfg, P.slr_plan( cfg ) )
  broken = hw.replace( f"sp={P.CU}.m_axi_hbm01:HBM[1]\n", "" ).replace(
    f"stream_connect={P.RING_RX_LINK}:{P.CU}.ring_rx\n", "" )
  bad = link_problems( cfg, broken, [ P.CU ] )
  assert any( "m_axi_hbm01" in b for b in bad ) and any( "ring_rx" in b for b in bad )


def test_the_floorplan_follows_the_estimate():
  plan = P.slr_plan( PAPER )
  # the paper's MFU alone is more DSPs than one SLR has
  assert PAPER.d * PAPER.l * 3 == P.PAPER_MFU_DSP and plan["paper_mfu_slrs"] == 2
  assert plan["per_slr"]["DSP"] == 3008
  assert plan["spans"] and not any( v.startswith( P.CU ) for v in plan["lines"] )
  # a core that fits one SLR is pinned beside the HBM
  small = P.slr_plan( SMALL )
  assert small["slrs"] == 1 and f"{P.CU}:SLR0" in small["lines"][0]


# -- the folder and `dfx fpga` ----------------------------------------------------------------

def test_dfx_fpga_writes_the_whole_folder( tmp_path, capsys, standin ):
  out = tmp_path / "u280"
  assert cli.main( [ "fpga", "--out", str( out ), "--json", *SMALL_SET, "--cores", "2" ] ) == 0
  rec = json.loads( capsys.readouterr().out )
  assert sorted( os.listdir( out ) ) == sorted( rec["files"] )
  assert set( P.FILES ) | { "dfx_kernel.sv", "filelist.f" } == set( rec["files"] )
  assert rec["config"]["cores"] == 2 and rec["config"]["d"] == 8
  assert DFXConfig.from_dict( json.loads( ( out / "config.json" ).read_text() )["config"] ) \
    == SMALL.replace( cores=2 )
  res = json.loads( ( out / "resources.json" ).read_text() )
  from pymtl_dfx.kernel.resources import kernel_resources
  assert res["estimate"]["totals"] == kernel_resources( SMALL.replace( cores=2 ) )["totals"]
  readme = ( out / "README.md" ).read_text()
  for f in rec["files"]:
    assert f"`{f}`" in readme, f
  mk = ( out / "Makefile" ).read_text()
  assert f"PLATFORM ?= {P.PLATFORM}" in mk and "v++ -l -t hw " not in mk
  assert "$(VPP) -l -t hw --platform $(PLATFORM)" in mk and "--config link_hw_emu.cfg" in mk
  assert not [ p for p in os.listdir( tmp_path ) if ".dfx-partial-" in p ]


def _one_line( capsys, argv, code, says ):
  assert cli.main( argv ) == code
  err = capsys.readouterr().err.strip()
  assert len( err.splitlines() ) == 1 and says in err, err
  return err


def test_dfx_fpga_bad_inputs( tmp_path, capsys, standin ):
  full = tmp_path / "full"
  full.mkdir()
  ( full / "x" ).write_text( "mine" )
  a_file = tmp_path / "f"
  a_file.write_text( "" )
  _one_line( capsys, [ "fpga", "--out", str( tmp_path / "a" ), "--set", "nope=1" ], 2, "nope" )
  _one_line( capsys, [ "fpga", "--out", str( full ) ], 1, "not empty" )
  _one_line( capsys, [ "fpga", "--out", str( a_file ) ], 1, "not a directory" )
  _one_line( capsys, [ "fpga", "--out", str( tmp_path / "b" ), *SMALL_SET, "--set",
                       "hbm_channel_mb=512" ], 2, "holds 256 MB" )
  _one_line( capsys, [ "fpga", "--out", str( tmp_path / "c" ), "--set", "hbm_channels=64",
                       "--set", "d=8", "--set", "l=4" ], 2, "hbm_channels <= 32" )
  _one_line( capsys, [ "fpga", "--out", str( tmp_path / "d" ), "--cores", "2", "--set", "cores=3" ],
             2, "disagree" )
  assert ( full / "x" ).read_text() == "mine"
  assert sorted( os.listdir( tmp_path ) ) == [ "f", "full" ]


def test_a_failure_leaves_no_folder( tmp_path, capsys, monkeypatch ):
  def broken( cfg, out_dir ):
    ( open( os.path.join( out_dir, "dfx_kernel.sv" ), "w" ) ).close()
    raise P.PackageError( "lint of dfx_kernel failed" )
  monkeypatch.setattr( P, "kernel_rtl", broken )
  _one_line( capsys, [ "fpga", "--out", str( tmp_path / "new" / "u280" ), *SMALL_SET ], 1,
             "lint of dfx_kernel failed" )
  assert os.listdir( tmp_path ) == []
  # a writer that forgets its file list
  monkeypatch.setattr( P, "kernel_rtl", lambda cfg, out: dict( top="dfx_kernel",
                                                               files=[ "dfx_kernel.sv" ] ) )
  _one_line( capsys, [ "fpga", "--out", str( tmp_path / "u" ), *SMALL_SET ], 1, "did not write" )
  assert os.listdir( tmp_path ) == []
  # Ctrl-C (and SIGTERM, which dfx turns into one) while the RTL is written
  def interrupted( cfg, out_dir ):
    ( open( os.path.join( out_dir, "dfx_kernel.sv" ), "w" ) ).close()
    raise KeyboardInterrupt
  monkeypatch.setattr( P, "kernel_rtl", interrupted )
  _one_line( capsys, [ "fpga", "--out", str( tmp_path / "k" ), *SMALL_SET ], 130, "interrupted" )
  assert os.listdir( tmp_path ) == []


# what Verilator 5.006 said of the kernel at 32 HBM channels before its
# argument registers became one instance per word
REFUSED_LOG = ( "%Warning-UNUSEDSIGNAL: dfx_kernel.sv:3:7: Signal is not used: 'x'\n"
                "%Error-BLKLOOPINIT: dfx_kernel.sv:7:18: Unsupported: Delayed assignment to array "
                "inside for loops (non-delayed is ok - see docs)\n"
                "%Error: Exiting due to 1 error(s)\n" )


def lint_failing_writer( cfg, out_dir ):
  for name, text in ( ( "dfx_kernel.sv", "module dfx_kernel; endmodule\n" ),
                      ( "filelist.f", "dfx_kernel.sv\n" ), ( "lint.log", REFUSED_LOG ) ):
    with open( os.path.join( out_dir, name ), "w" ) as f:
      f.write( text )
  return dict( top="dfx_kernel", files=[ "dfx_kernel.sv" ],
               lint=dict( verilator="debian", version="5.006", errors=1, not_waived=[] ) )


def test_a_lint_failure_says_why_and_keeps_the_log( tmp_path, capsys, monkeypatch ):
  monkeypatch.setattr( P, "kernel_rtl", lint_failing_writer )
  err = _one_line( capsys, [ "fpga", "--out", str( tmp_path / "u280" ), *SMALL_SET ], 1,
                   "lint of dfx_kernel (debian Verilator 5.006) failed: 1 error(s); first: "
                   "%Error-BLKLOOPINIT: dfx_kernel.sv:7:18" )
  assert "not waived" not in err and "Exiting" not in err
  assert err.endswith( f"the whole log: {tmp_path / 'u280.lint.log'}" )
  assert os.listdir( tmp_path ) == [ "u280.lint.log" ]
  assert ( tmp_path / "u280.lint.log" ).read_text() == REFUSED_LOG
  # a second failure replaces the log; an --out whose parents dfx made keeps its log in a
  # scratch folder (the parents go with the refused folder)
  _one_line( capsys, [ "fpga", "--out", str( tmp_path / "u280" ), *SMALL_SET ], 1, "1 error(s)" )
  err = _one_line( capsys, [ "fpga", "--out", str( tmp_path / "new" / "u280" ), *SMALL_SET ], 1,
                   "the whole log: " )
  kept = err.rsplit( "the whole log: ", 1 )[1]
  assert open( kept ).read() == REFUSED_LOG and "dfx-lint-" in kept
  shutil.rmtree( os.path.dirname( kept ) )
  assert os.listdir( tmp_path ) == [ "u280.lint.log" ]


def test_dfx_fpga_at_the_papers_config( tmp_path, capsys ):
  """The README's `dfx fpga` at the paper's d=64, l=16 and 32 HBM channels,
  with the real RTL writer: the slowest packaging test (~1.5 min, most of
  it the two lints)."""
  pytest.importorskip( "pymtl_dfx.kernel.verilog" )
  from pymtl_dfx.hdl.rtlgen import verilator_command
  out = tmp_path / "u280"
  assert cli.main( [ "fpga", "--out", str( out ), "--json" ] ) == 0
  rec = json.loads( capsys.readouterr().out )
  assert DFXConfig.from_dict( rec["config"] ) == PAPER
  assert len( rec["memory_masters"] ) >= PAPER.hbm_channels
  for v, lint in rec["rtl"]["lints"].items():
    assert lint["errors"] == 0 and lint["not_waived"] == [], ( v, lint )
  verilator_command( "debian" )          # Debian's lint was among them (it is on PATH)
  assert "debian" in rec["rtl"]["lints"]
  assert sorted( os.listdir( out ) ) == sorted( rec["files"] )
