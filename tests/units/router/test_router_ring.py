"""The router behind its stream boundary: 2 and 4 routers on a ring of
links, at fl (RouterFL), cl (RouterCL) and rtl (RouterRTL; Verilator
under --test-verilog), against the FL appliance's RouterFunc."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import RouterOp, encode, make
from pymtl_dfx.testing import run_stream_test, select_or_skip
from pymtl_dfx.testing.levels import run_matching_cl
from pymtl_dfx.units.control.msgs import DoneMsg, InstMsg
from pymtl_dfx.units.regfile.state import VectorRegisterFile
from pymtl_dfx.units.router.LinkRTL import link_params
from pymtl_dfx.units.router.models import LINK_MODELS
from pymtl_dfx.funcsim.RouterFunc import RouterFunc
from pymtl_dfx.testing.router_ring import run_ring
from pymtl_dfx.units.router.streams import expected_writes, mk_router_types

from pymtl_dfx.testing.funcsim_ring import Ring  # RouterFunc cores on a ring: the reference

F16 = np.float16
# 4-cycle links at the line rate, 31.25 words/cycle (no framing overhead;
# test_framed_link_rate checks the default's)
CFG = DFXConfig( d=64, l=16, ring_latency_ns=20, ring_frame_overhead_bytes=0 )
ENTRIES = 64


def register_files( cores, syncs, seed ):
  rng = np.random.default_rng( seed )
  rfs = [ VectorRegisterFile( ENTRIES, CFG.d ) for _ in range( cores ) ]
  for rf in rfs:              # every lane starts with something: untouched lanes must stay
    rf.mem[:] = rng.standard_normal( rf.mem.shape ).astype( F16 )
  return rfs


def fl_reference( rfs, syncs ):
  """Register files after `syncs` on the FL appliance's routers."""
  ref = [ VectorRegisterFile( rf.entries, rf.d ) for rf in rfs ]
  for r, rf in zip( ref, rfs ):
    r.mem[:] = rf.mem
  insts = [ InstMsg( encode( make( RouterOp.SYNC, rf=b, len=n ) ) ) for b, n in syncs ]
  run_stream_test( Ring( RouterFunc, CFG, ref ),
                   sources={ f"recv{i}": ( InstMsg, insts ) for i in range( len( rfs ) ) },
                   sinks={ f"send{i}": ( DoneMsg, [ DoneMsg( 1 ) ] * len( syncs ) )
                           for i in range( len( rfs ) ) }, level="fl" )
  return ref


def syncs_for( cores, seg ):
  """Two back-to-back syncs on disjoint blocks."""
  blocks = -( -cores * seg // CFG.d )
  return [ ( 1, seg ), ( 2 + blocks, seg ) ]


def level_ok( level ):
  select_or_skip( level, fl=1, cl=1, rtl=1 )


# every core ends with the same all-gathered vector, bit-exact against RouterFunc
@pytest.mark.parametrize( "cores,seg,fwd", [
  ( 2, 64, 2 ), ( 2, 100, 2 ), ( 4, 1, 2 ), ( 4, 100, 2 ), ( 4, 256, 1 ),
] )
def test_ring_all_gather( cores, seg, fwd, level, cmdline_opts ):
  level_ok( level )
  syncs = syncs_for( cores, seg )
  rfs = register_files( cores, syncs, seed=cores * 1000 + seg )
  ref = fl_reference( rfs, syncs )
  want = expected_writes( CFG, rfs, *syncs[0] ), expected_writes( CFG, rfs, *syncs[1] )
  r = run_ring( level, CFG, rfs, syncs, cmdline_opts, max_delay=3, seed=seg, fwd_entries=fwd )
  for i, ( rf, rr ) in enumerate( zip( rfs, ref ) ):
    assert np.array_equal( N.bits( rf.mem ), N.bits( rr.mem ) ), f"core {i} differs from RouterFunc"
    for b, n in syncs:
      assert np.array_equal( N.bits( rf.read( b, cores * n ) ), N.bits( rfs[0].read( b, cores * n ) ) )
    got = sorted( r.writes[i], key=lambda m: int( m.addr ) )
    assert got == want[0][i] + want[1][i]
  assert all( len( r.arrivals[ f"done{i}" ] ) == 2 for i in range( cores ) )


# the ring position is the routers' core_id input: the RTL ring above is one
# router module for every position, and that module's Verilog names no
# position (its next core's index is computed from the input)
def test_one_router_module_serves_every_position( tmp_path ):
  from pymtl_dfx.core.verilog import modules
  from pymtl_dfx.hdl.rtlgen import translate
  from pymtl_dfx.testing.router_ring import RouterRing
  cfg = CFG
  path, _ = translate( RouterRing( "rtl", cfg, 4 ), str( tmp_path ) )
  found = modules( open( path ).read() )
  routers = [ n for n in found if n.startswith( "RouterRTL" ) ]
  assert len( routers ) == 1, sorted( found )
  text = found[ routers[0] ]
  assert "input  logic [7:0] core_id" in text
  assert text.count( "RouterDpathRTL" ) >= 1


# CL == RTL: every rf_wr and done in the same cycle, with the same contents
@pytest.mark.parametrize( "cores,seg,delay", [ ( 2, 256, 3 ), ( 4, 200, 3 ), ( 4, 256, 0 ) ] )
def test_cl_matches_rtl( cores, seg, delay, level, cmdline_opts ):
  if level != "rtl":
    pytest.skip( "one comparison, run as the rtl case (Verilator under --test-verilog)" )
  syncs = syncs_for( cores, seg )
  run_matching_cl( level, cmdline_opts, lambda lv, opts: run_ring(
    lv, CFG, register_files( cores, syncs, seed=7 ), syncs, opts, max_delay=delay, seed=seg ),
    key=lambda r: ( r.arrivals, r.writes, r.cycles ) )


# the link alone: latency, then the configured rate (W=64 at 31.25 words/cycle)
def test_link_latency_and_rate( level, cmdline_opts ):
  Link = select_or_skip( level, **LINK_MODELS )
  Packet = mk_router_types( CFG )["Packet"]
  L, num, den, cost, entries = link_params( CFG )
  assert ( L, num, den, cost ) == ( 4, 125, 4, 256 )
  pkts = [ Packet( 0, k, [ k ] * CFG.router_words ) for k in range( 40 ) ]
  r = run_stream_test( Link( CFG, Packet ), sources={ "recv": ( Packet, pkts ) },
                       sinks={ "send": ( Packet, pkts ) }, level=level, cmdline_opts=cmdline_opts )
  t = r.arrivals["send"]
  gaps = np.diff( t )
  assert set( gaps ) <= { 2, 3 }
  # packet k starts in cycle floor(k * 2.048) (64 words at 125/4 a cycle)
  assert t[-1] - t[0] == 39 * cost // num


# the default link pays 66 bytes of UDP/IPv4/Ethernet framing per 128-byte
# packet: 2000/97 payload words a cycle, a packet every 3.104 cycles
def test_framed_link_rate( level, cmdline_opts ):
  cfg = CFG.replace( ring_frame_overhead_bytes=DFXConfig().ring_frame_overhead_bytes )
  Link = select_or_skip( level, **LINK_MODELS )
  Packet = mk_router_types( cfg )["Packet"]
  L, num, den, cost, entries = link_params( cfg )
  assert ( L, num, den, cost ) == ( 4, 2000, 97, 64 * 97 )
  pkts = [ Packet( 0, k, [ k ] * cfg.router_words ) for k in range( 40 ) ]
  r = run_stream_test( Link( cfg, Packet ), sources={ "recv": ( Packet, pkts ) },
                       sinks={ "send": ( Packet, pkts ) }, level=level, cmdline_opts=cmdline_opts )
  t = r.arrivals["send"]
  assert set( np.diff( t ) ) <= { 3, 4 }
  assert t[-1] - t[0] == 39 * cost // num
