"""The vector register file's FPGA mapping (`resources.vrf_banking`): its
arithmetic by hand, its ports against RFStorageRTL's, and its row in the
per-card estimate."""

import pytest

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.resources import estimate as resources
from pymtl_dfx.resources.vrf_banking import ELEMENT_PORTS, READ_PORTS, WRITE_PORTS, vrf_banks


def test_paper_size_by_hand():
  b = vrf_banks( DFXConfig() )                  # d=64, 2,048 entries, W=64
  # 6 x 4 copies; the router's reader (4) and writer (6) share one: 9 by lane
  assert ( b["copies"], b["lane_copies"], b["uram_copies"] ) == ( 24, 9, 15 )
  assert b["BRAM36"] == 9 * 64                  # one 2K x 18 RAMB36 per lane
  assert b["URAM"] == 15 * 16                   # 64 lanes / 4 per URAM288, 2K of 4K deep
  assert b["FF"] == 2048 * 64 * 2               # 2 bits name one of 4 writers
  assert b["flip_flops_as_written"] == 2_097_152
  assert b["flip_flops_as_written"] / resources.U280["FF"] > 0.8


def test_depth_width_and_wide_windows():
  b = vrf_banks( DFXConfig( d=32, vreg_entries=4096 ) )
  assert b["BRAM36"] == 9 * 32 * 2 and b["URAM"] == 15 * 8
  b = vrf_banks( DFXConfig( vreg_entries=8192 ) )
  assert b["BRAM36"] == 9 * 64 * 4 and b["URAM"] == 15 * 16 * 2
  # a 128-word window touches a lane in two entries: two interleaved banks
  wide = vrf_banks( DFXConfig( router_words=128 ) )
  assert wide["per_lane_banks"] == 2 and wide["BRAM36"] == 9 * 64 * 2
  assert wide["URAM"] == 240


def test_ports_are_rfstorages():
  from pymtl3 import InPort
  from pymtl_dfx.units.regfile.RFStorageRTL import RFStorageRTL
  cfg = DFXConfig( d=4, l=2, vreg_entries=8, router_words=4 )
  rf = RFStorageRTL( cfg )
  rf.elaborate()
  reads = len( rf.e_rd_addr ) + 2                 # + b_rd_addr, r_rd_addr
  writes = [ n for n in vars( rf ) if n.endswith( "_w_en" ) and isinstance( getattr( rf, n ), InPort ) ]
  assert ( reads, len( writes ) ) == ( len( READ_PORTS ), len( WRITE_PORTS ) )
  # the element-addressed ports are the flat-address ones: the router's
  assert rf.r_rd_addr.get_type() is rf.r_w_addr.get_type() is not rf.e_rd_addr[0].get_type()
  assert set( ELEMENT_PORTS ) <= set( READ_PORTS ) | set( WRITE_PORTS )


@pytest.mark.parametrize( "cfg", [ DFXConfig(), DFXConfig( d=32, l=8, vreg_entries=1024 ) ] )
def test_the_estimate_uses_it( cfg ):
  est = resources.estimate_resources( cfg )
  row = next( r for r in est["rows"] if r["name"] == "vector register file" )
  b = vrf_banks( cfg )
  assert ( row["BRAM36"], row["URAM"], row["FF"] ) == ( b["BRAM36"], b["URAM"], b["FF"] )
  assert est["totals"]["URAM"] == b["URAM"]
