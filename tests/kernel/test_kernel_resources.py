"""The kernel's resource table (`kernel.resources.kernel_resources`): rows,
totals and the per-SLR floorplan add up, the core's rows are the per-card
estimate's, the shims are counted per instance, and docs/resources.md
shows the table as the code makes it."""

import pathlib

import pytest

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.kernel import resources as kr
from pymtl_dfx.resources.estimate import RESOURCES, U280, estimate_resources

ROOT = pathlib.Path( __file__ ).resolve().parents[2]


@pytest.fixture( params=[ DFXConfig(), DFXConfig( d=32, l=8, hbm_channels=8 ) ], ids=[ "paper", "small" ] )
def table( request ):
  return request.param, kr.kernel_resources( request.param )


def test_totals_and_slrs_add_up( table ):
  cfg, t = table
  counted = [ r for r in t["rows"] if r["source"] != "pending" ]
  for k in RESOURCES:
    assert t["totals"][k] == sum( r[k] for r in counted )
    assert t["totals"][k] == sum( s["totals"][k] for s in t["slrs"] )
    assert t["percent"][k] == pytest.approx( 100 * t["totals"][k] / U280[k] )
  assert sum( s["mfu_lanes"] for s in t["slrs"] ) == cfg.l
  assert t["pending"] == [ r["name"] for r in t["rows"] if r["source"] == "pending" ]
  assert all( r[k] == 0 for r in t["rows"] if r["source"] == "pending" for k in RESOURCES )


def test_the_core_is_the_estimate( table ):
  """Every core row is the per-card estimate's (the MFU lanes split over
  SLRs), so the core's part of the totals is the estimate's totals."""
  cfg, t = table
  est = estimate_resources( cfg )
  core = [ r for r in t["rows"] if r["name"].startswith( "core: " ) ]
  for k in RESOURCES:
    assert sum( r[k] for r in core ) == est["totals"][k], k
  lanes = [ r for r in core if "MFU lanes" in r["name"] ]
  assert len( lanes ) >= 2                   # the MPU is split over SLRs
  assert len( { r["slr"] for r in lanes } ) == len( lanes )


def test_the_paper_floorplan():
  t = kr.kernel_resources( DFXConfig() )
  assert kr.SLR_CAPACITY["DSP"] == 3008 and kr.SLR_CAPACITY["LUT"] == 434_560
  # the vector register file's URAMs and BRAMs fit the SLR it is placed in
  vrf = next( r for r in t["rows"] if r["name"] == "core: vector register file" )
  slr = t["slrs"][ vrf["slr"] ]
  assert vrf["URAM"] <= kr.SLR_CAPACITY["URAM"] and "URAM" not in slr["over"]
  assert "BRAM36" not in slr["over"]
  # the HBM side: every HBM adapter in SLR0 beside the HBM
  hbm = next( r for r in t["rows"] if r["name"] == "kernel: HBM AXI master adapters" )
  assert hbm["slr"] == 0 and hbm["count"] == 32
  for s in t["slrs"]:
    assert s["over"] == [ k for k in RESOURCES if s["totals"][k] > kr.SLR_CAPACITY[k] ]
  # with the FP16 adders on two DSPs each (Xilinx's IP), within a point of
  # the paper's 39.15 %; the MPU's share then exceeds one SLR's 3,008 DSPs
  adders = 16 * 63 + 2 * 16 + 64 + 64
  assert t["fp16_adders"] == adders
  assert t["dsp_fp_ip"]["DSP"] == t["totals"]["DSP"] + 2 * adders
  assert abs( t["dsp_fp_ip"]["percent"] - kr.PAPER_DSP_PERCENT ) < 1
  mpu_ip = 16 * 64 + 16 * 63 * 2
  assert mpu_ip > kr.SLR_CAPACITY["DSP"]
  assert all( s["dsp_fp_ip"] <= kr.SLR_CAPACITY["DSP"] for s in t["slrs"] )
  # the adders leave the fabric: 420 LUTs each (docs/resources.md's FP16 add)
  assert t["dsp_fp_ip"]["LUT"] == t["totals"]["LUT"] - adders * 420
  assert sum( s["lut_fp_ip"] for s in t["slrs"] ) == t["dsp_fp_ip"]["LUT"]


def test_shims_are_counted_per_instance( monkeypatch ):
  cfg = DFXConfig()
  monkeypatch.setitem( kr.SHIMS_SYNTHESISED, "MemAxiMasterRTL", ( 100, 200, 0, 0.5, 0, "test" ) )
  t = kr.kernel_resources( cfg )
  adapters = [ r for r in t["rows"] if "AXI master adapters" in r["name"] ]
  assert sum( r["count"] for r in adapters ) == cfg.hbm_channels + cfg.ddr_channels == 36
  assert sum( r["LUT"] for r in adapters ) == 36 * 100
  assert sum( r["BRAM36"] for r in adapters ) == 18
  monkeypatch.setitem( kr.SHIMS_SYNTHESISED, "MemAxiMasterRTL", None )
  before = kr.kernel_resources( cfg )
  assert t["totals"]["LUT"] - before["totals"]["LUT"] == 3600
  assert all( r["source"] == "synthesised" for r in adapters )
  assert "kernel: HBM AXI master adapters" in before["pending"]


def test_cells_to_resources():
  got = kr.cells_to_resources( { "LUT6": 10, "LUT2": 3, "SRLC32E": 2, "RAM32M16": 2, "FDRE": 40,
                                 "FDSE": 2, "DSP48E2": 1, "RAMB18E2": 3, "RAMB36E2": 1,
                                 "URAM288": 1, "CARRY8": 5, "MemAxiMasterRTL": 1 } )
  assert got == dict( LUT=10 + 3 + 2 + 16, FF=42, DSP=1, BRAM36=2.5, URAM=1 )


def test_docs_show_the_table():
  page = ( ROOT / "docs" / "resources.md" ).read_text()
  assert kr.markdown( kr.kernel_resources( DFXConfig() ) ) in page


def test_every_design_option_has_its_cost_and_an_slr():
  """Each design option (`config.DESIGN_FIELDS`) either has its measured
  difference in `DESIGN_SYNTHESISED` or changes the compiler only; with the
  profile `streaming` and `streaming-wide`'s DMA queue each such row is in
  the core's estimate and the kernel's floorplan, and the totals move by
  exactly the differences."""
  from pymtl_dfx import profiles
  from pymtl_dfx.config import DESIGN_FIELDS
  from pymtl_dfx.resources.estimate import COMPILER_ONLY_OPTIONS, DESIGN_SYNTHESISED
  assert set( DESIGN_SYNTHESISED ) | set( COMPILER_ONLY_OPTIONS ) == set( DESIGN_FIELDS )
  assert not set( DESIGN_SYNTHESISED ) & set( COMPILER_ONLY_OPTIONS )
  every = profiles.config( "streaming" ).replace(
    dma_inst_queue=profiles.values( "streaming-wide" )["dma_inst_queue"] )
  base, on = estimate_resources( DFXConfig() ), estimate_resources( every )
  names = { r["name"] for r in on["rows"] } - { r["name"] for r in base["rows"] }
  assert names == { f"design option: {k}" for k in DESIGN_SYNTHESISED }
  for k in RESOURCES:
    assert on["totals"][k] - base["totals"][k] == sum(
      diff.get( k, 0 ) for diff, _, _ in DESIGN_SYNTHESISED.values() ), k
  slr_rows = { r["name"] for r in kr.kernel_resources( every )["rows"] }
  assert { f"core: {n}" for n in names } <= slr_rows
