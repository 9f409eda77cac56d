"""`dfx verilog`: the RTL core as one lint-clean Verilog file with its file
list and config, and the same unit modules the Verilator appliance is built
from."""

import json
import os

import pytest

from pymtl_dfx.appliance.Appliance import Appliance
from pymtl_dfx.cli import main
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.core.verilog import modules, write_core_verilog
from pymtl_dfx.outputs import OutputPathError
from pymtl_dfx.hdl.rtlgen import translate

# small enough to translate in about a minute: the same units as the paper's
# core, narrower
SETTINGS = [ "d=32", "l=4", "hbm_channels=2", "vreg_entries=64", "mreg_entries=8",
             "psum_entries=4" ]


# a narrow core: below d=32 a memory word is one register entry (128 bits here)
NARROW = [ "d=8", "l=4", "hbm_channels=2", "vreg_entries=64", "mreg_entries=32",
           "psum_entries=4" ]


def write( out, settings ):
  argv = [ "verilog", "--out", str( out ), "--json" ]
  for kv in settings:
    argv += [ "--set", kv ]
  assert main( argv ) == 0
  return out


@pytest.fixture( scope="module" )
def written( tmp_path_factory ):
  return write( tmp_path_factory.mktemp( "verilog" ) / "core", SETTINGS )


def test_writes_one_top_a_file_list_and_the_config( written ):
  record = json.loads( ( written / "config.json" ).read_text() )
  files = ( written / "filelist.f" ).read_text().split()
  assert files == record["files"] == [ f"{record['top']}.v" ]
  assert sorted( os.listdir( written ) ) == sorted( files + [ "config.json", "filelist.f",
                                                               "lint.log" ] )
  assert DFXConfig.from_dict( record["config"] ) == DFXConfig().with_overrides( SETTINGS )
  text = ( written / files[0] ).read_text()
  assert f"module {record['top']}" in text
  # the FPGA core has the DMA's channels as ports, not the tests' memories
  assert "hbm_req" in text and "MemoryRTL" not in text


# the top an FPGA kernel instantiates: the status outputs and the ring
# position as plain ports, said in config.json as they are in the Verilog
def test_the_top_has_the_status_ports_and_the_ring_position( written ):
  import re
  record = json.loads( ( written / "config.json" ).read_text() )
  text = ( written / record["files"][0] ).read_text()
  header = re.search( rf"module {record['top']}\s*\((.*?)\);", text, re.S ).group( 1 )
  want = { "core_id": ( "in", 8 ), "idle": ( "out", 1 ), "issued": ( "out", 4 ),
           "retired": ( "out", 4 ) }
  assert { n: ( p["dir"], p["bits"] ) for n, p in record["ports"]["plain"].items() } == want
  for name, ( d, bits ) in want.items():
    assert re.search( rf"{d}put\s+logic \[{bits - 1}:0\] {name} ,", header ), name
  streams = record["ports"]["streams"]
  assert streams["ring_send"] == dict( dir="out", bits=streams["ring_send"]["bits"],
                                       channels=None, fields=True )
  assert streams["hbm_req"]["channels"] == 2 and "ring_recv__src" in header


def check_lint( out ):
  lint = json.loads( ( out / "config.json" ).read_text() )["lint"]
  assert lint["errors"] == 0 and lint["not_waived"] == []
  assert set( lint["warnings"] ) == set( lint["waivers"] )


def test_lint_is_clean_but_for_waived_classes( written ):
  check_lint( written )


def test_narrow_core_is_lint_clean( tmp_path ):
  out = write( tmp_path / "core", NARROW )
  record = json.loads( ( out / "config.json" ).read_text() )
  assert DFXConfig.from_dict( record["config"] ).mem_word_elems == 8
  assert "hbm_req" in ( out / record["files"][0] ).read_text()
  check_lint( out )


def test_its_units_are_the_modules_the_verilator_appliance_runs( written, tmp_path ):
  """The host's verilog level translates the whole appliance (cores with the
  test memories inside, links); every module of the written core other than
  its own top must be there byte for byte."""
  record = json.loads( ( written / "config.json" ).read_text() )
  ours = modules( ( written / record["files"][0] ).read_text() )
  cfg = DFXConfig().with_overrides( SETTINGS )
  path, _ = translate( Appliance( cfg, 1, None, 64, 64, "rtl" ), str( tmp_path ) )
  theirs = modules( open( path ).read() )
  units = { n: t for n, t in ours.items() if not n.startswith( ( "Core", "Ports_" ) ) }
  assert len( units ) >= 20      # every unit and its parts, not a handful
  differ = sorted( n for n, t in units.items() if theirs.get( n ) != t )
  assert differ == []


def test_refuses_a_directory_in_use( tmp_path ):
  ( tmp_path / "keep.v" ).write_text( "// someone's file\n" )
  with pytest.raises( OutputPathError, match="is a directory that is not empty" ):
    write_core_verilog( DFXConfig().with_overrides( SETTINGS ), tmp_path, lint=False )
  assert os.listdir( tmp_path ) == [ "keep.v" ]


def test_a_failed_write_leaves_nothing( tmp_path, monkeypatch ):
  """Whatever stops the translation (here an error standing for SIGTERM),
  neither the partial folder nor the parents made for it remain."""
  from pymtl_dfx.core import verilog

  def stops( component, out_dir ):
    assert os.path.basename( out_dir ).startswith( "core.dfx-partial-" )
    ( tmp_path / "seen" ).write_text( out_dir )
    open( os.path.join( out_dir, "half.v" ), "w" ).write( "module" )
    raise KeyboardInterrupt
  monkeypatch.setattr( "pymtl_dfx.hdl.rtlgen.translate", stops )
  with pytest.raises( KeyboardInterrupt ):
    verilog.write_core_verilog( DFXConfig().with_overrides( SETTINGS ),
                                tmp_path / "new" / "deeper" / "core", lint=False )
  assert os.listdir( tmp_path ) == [ "seen" ]
