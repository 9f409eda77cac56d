"""HBM and DDR channel models at fl, cl and rtl (Verilator under
--test-verilog): random reads, writes and strobed writes on every channel
and on the host port, against a Python model of the contents; CL == RTL
cycle stamps; a streaming channel sustains exactly its spec's rate."""

import math
import random

import numpy as np
import pytest

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.lib.rate_queue import RateRule, RateRuleError
from pymtl_dfx.testing import run_stream_test, select_or_skip
from pymtl_dfx.testing.levels import python_rtl, run_matching_cl
from pymtl_dfx.testing.with_memories import WithMemories
from pymtl_dfx.testing.memory_harness import run_memory
from pymtl_dfx.units.memory.msgs import MemoryConfigError, memory_spec
from pymtl_dfx.units.memory.MemoryCL import MemoryCL
from pymtl_dfx.units.memory.ports import mk_host_types

# 32 outstanding requests (the default is 64) keep the Verilator builds short
# and still exceed both latencies, so a channel can stream at its full rate
CFG = DFXConfig( d=32, l=2, hbm_channels=4, mem_outstanding=32 )
SPECS = { "hbm": memory_spec( CFG, "hbm" ), "ddr": memory_spec( CFG, "ddr" ),
          # 2 outstanding requests, fewer than the 4-cycle latency: channels and
          # the host's order FIFO fill and back-pressure
          "tight": memory_spec( CFG.replace( hbm_latency_ns=20, mem_outstanding=2 ), "hbm" ),
          # below d=32 a word is one register entry: 8 elements, 128 bits
          "narrow": memory_spec( CFG.replace( d=8 ), "hbm" ) }
DEPTH = 8


class Model:
  """The contents as FP16 element arrays, indexed by (channel, row % depth)."""

  def __init__( s, spec, depth ):
    s.spec, s.depth = spec, depth
    s.mem = np.zeros( ( spec.channels, depth, spec.word_elems ), np.uint16 )

  def access( s, c, row, wr, strb, data ):
    """One request; returns its response word."""
    elems = s.mem[ c, row % s.depth ]
    if not wr:
      return sum( int( e ) << ( 16 * k ) for k, e in enumerate( elems ) )
    for k in range( s.spec.word_elems ):
      if ( strb >> k ) & 1:
        elems[k] = ( data >> ( 16 * k ) ) & 0xFFFF
    return 0


def random_word( rng, spec ):
  return rng.getrandbits( spec.Word.nbits )


def random_strb( rng, spec ):
  return rng.choice( [ spec.all_elems, 0, rng.getrandbits( spec.word_elems ) ] )


class Traffic:
  """Requests and expected responses for the phased harness (host[0..2],
  dma[c]), built by applying them to the model in an order whose outcome
  every timing shares."""

  def __init__( s, spec, depth, n_dma, n_host, seed ):
    rng = random.Random( seed )
    s.spec, m = spec, Model( spec, depth )
    T, H = spec.types, mk_host_types( spec )
    C, half = spec.channels, depth // 2

    def dma_req( c, row, wr, strb, data ):
      return ( T["Req"]( wr, row, strb, data ),
               T["Resp"]( m.access( c, row, wr, strb, data ) ) )

    def host_req( addr, wr, strb, data ):
      return ( H["Req"]( wr, addr, strb, data ),
               H["Resp"]( m.access( addr % C, addr // C, wr, strb, data ) ) )

    def aliased( r ):     # any row that maps to r (the high bits are dropped)
      return r + depth * rng.randrange( 1 << ( spec.row_bits - depth.bit_length() + 1 ) )

    def random_req( rows ):
      wr = rng.random() < 0.5
      return aliased( rng.choice( rows ) ), wr, random_strb( rng, spec ) if wr else 0, \
             random_word( rng, spec ) if wr else 0

    # host phase 0: load every word, then some strobed writes and reads
    load = [ host_req( a, 1, spec.all_elems, random_word( rng, spec ) ) for a in range( C * depth ) ]
    load += [ host_req( rng.randrange( C * depth ), 1, random_strb( rng, spec ), random_word( rng, spec ) )
              for _ in range( depth ) ]
    # DMA on the low half of each channel's rows, host phase 1 on the high half
    s.dma = []
    for c in range( C ):
      s.dma.append( [ dma_req( c, *random_req( range( half ) ) ) for _ in range( n_dma ) ] )
    mixed = []
    for _ in range( n_host ):
      row, wr, strb, data = random_req( range( half, depth ) )
      mixed.append( host_req( row * C + rng.randrange( C ), wr, strb, data ) )
    readback = [ host_req( a, 0, 0, 0 ) for a in range( C * depth ) ]
    s.host = [ load, mixed, readback ]


def traffic_for( name, level, cmdline_opts, seed ):
  n = 12 if python_rtl( level, cmdline_opts ) else 48
  return Traffic( SPECS[ name ], DEPTH, n_dma=n, n_host=n, seed=seed )


def level_ok( level ):
  select_or_skip( level, fl=1, cl=1, rtl=1 )


# every response (both sides, every channel) as the model says, under random delays
@pytest.mark.parametrize( "name", [ "hbm", "ddr", "tight", "narrow" ] )
def test_random_traffic( name, level, cmdline_opts ):
  level_ok( level )
  tr = traffic_for( name, level, cmdline_opts, seed=sorted( SPECS ).index( name ) )
  run_memory( level, tr.spec, DEPTH, tr.host, tr.dma, cmdline_opts, max_delay=3, seed=5 )


# CL == RTL: every request accepted and every response delivered in the same cycle
@pytest.mark.parametrize( "name,delay", [ ( "hbm", 3 ), ( "ddr", 3 ), ( "ddr", 0 ), ( "tight", 3 ) ] )
def test_cl_matches_rtl( name, delay, level, cmdline_opts ):
  if level != "rtl":
    pytest.skip( "one comparison, run as the rtl case (Verilator under --test-verilog)" )
  tr = traffic_for( name, level, cmdline_opts, seed=11 )
  run_matching_cl( level, cmdline_opts, lambda lv, opts: run_memory(
    lv, tr.spec, DEPTH, tr.host, tr.dma, opts, max_delay=delay, seed=3 ),
    key=lambda r: ( r.sent, r.arrived ) )


# one read per channel per cycle, always-ready sinks: the k-th request of a
# channel is accepted floor(k / rate) cycles after its first and answered
# exactly `latency` cycles after its acceptance
@pytest.mark.parametrize( "name", [ "hbm", "ddr" ] )
def test_streaming_rate( name, level, cmdline_opts ):
  level_ok( level )
  if level == "fl":
    pytest.skip( "FL is untimed" )
  spec = SPECS[ name ]
  n = 40 if python_rtl( level, cmdline_opts ) else 200
  rng = random.Random( 7 )
  tr = Traffic( spec, DEPTH, n_dma=0, n_host=0, seed=7 )
  T, m = spec.types, Model( spec, DEPTH )
  for ( req, _ ) in tr.host[0]:
    a = int( req.row )
    m.access( a % spec.channels, a // spec.channels, 1, int( req.strb ), int( req.data ) )
  dma = []
  for c in range( spec.channels ):
    rows = [ rng.randrange( DEPTH ) for _ in range( n ) ]
    dma.append( [ ( T["Req"]( 0, r, 0, 0 ), T["Resp"]( m.access( c, r, 0, 0, 0 ) ) )
                  for r in rows ] )
  r = run_memory( level, spec, DEPTH, [ tr.host[0], [], [] ], dma, cmdline_opts )
  assert spec.outstanding > spec.latency      # else the latency, not the rate, limits
  for c in range( spec.channels ):
    sent, arrived = r.sent[c], r.arrived[c]
    assert [ t - sent[0] for t in sent ] == \
           [ math.floor( k / spec.words_per_cycle ) for k in range( n ) ]
    assert [ a - t for a, t in zip( arrived, sent ) ] == [ spec.latency ] * n


class ChannelsPassRTL( Component ):
  """Stands for a unit with memory ports (the DMA): stream in{c} ->
  hbm_req[c], hbm_resp[c] -> out{c}."""

  def construct( s, spec ):
    T = spec.types
    s.hbm_req  = [ SendIfcRTL( T["Req"] ) for _ in range( spec.channels ) ]
    s.hbm_resp = [ RecvIfcRTL( T["Resp"] ) for _ in range( spec.channels ) ]
    for c in range( spec.channels ):
      setattr( s, f"in{c}", RecvIfcRTL( T["Req"] ) )
      setattr( s, f"out{c}", SendIfcRTL( T["Resp"] ) )
      connect( getattr( s, f"in{c}" ), s.hbm_req[c] )
      connect( s.hbm_resp[c], getattr( s, f"out{c}" ) )

  def line_trace( s ):
    return " ".join( f"{r}{p}" for r, p in zip( s.hbm_req, s.hbm_resp ) )


# [unit + memory] as one component (translated whole under --test-verilog):
# each side first writes its own rows (DMA the low half, host the high half)
# and then reads and writes them at random, so the contents do not depend on timing
def test_unit_with_memory_inside( level, cmdline_opts ):
  level_ok( level )
  spec = SPECS["tight"]
  T, H = spec.types, mk_host_types( spec )
  C, half, m = spec.channels, DEPTH // 2, Model( spec, DEPTH )
  rng = random.Random( 3 )
  n = 8 if python_rtl( level, cmdline_opts ) else 40

  def ops( rows ):
    out = [ ( r, 1, spec.all_elems, random_word( rng, spec ) ) for r in rows ]
    for _ in range( n ):
      wr = rng.random() < 0.5
      out.append( ( rng.choice( rows ), wr, random_strb( rng, spec ) if wr else 0,
                    random_word( rng, spec ) if wr else 0 ) )
    return out

  sources, sinks = {}, {}
  for c in range( C ):
    reqs = ops( range( half ) )
    sources[ f"in{c}" ] = ( T["Req"], [ T["Req"]( wr, r, st, d ) for r, wr, st, d in reqs ] )
    sinks[ f"out{c}" ] = ( T["Resp"], [ T["Resp"]( m.access( c, r, wr, st, d ) )
                                        for r, wr, st, d in reqs ] )
  reqs = ops( [ r * C + c for r in range( half, DEPTH ) for c in range( C ) ] )
  sources["hbm_host_req"] = ( H["Req"], [ H["Req"]( wr, a, st, d ) for a, wr, st, d in reqs ] )
  sinks["hbm_host_resp"] = ( H["Resp"], [ H["Resp"]( m.access( a % C, a // C, wr, st, d ) )
                                          for a, wr, st, d in reqs ] )
  dut = WithMemories( ChannelsPassRTL( spec ), level, { "hbm": ( spec, DEPTH ) } )
  run_stream_test( dut, sources, sinks, level, cmdline_opts, max_delay=2, seed=4 )


def test_unit_without_memory_ports_is_named():
  with pytest.raises( MemoryConfigError, match="ddr_req and ddr_resp lists of 4" ):
    WithMemories( ChannelsPassRTL( SPECS["tight"] ), "cl",
                  { "ddr": ( SPECS["ddr"], DEPTH ) } ).elaborate()


@pytest.mark.parametrize( "kwargs,words", [
  ( dict( depth=6 ), "depth=6" ), ( dict( depth=1 ), "depth=1" ),
  ( dict( depth=8, host_entries=0 ), "host_entries=0" ),
] )
def test_bad_parameters_are_named( kwargs, words ):
  with pytest.raises( MemoryConfigError, match=words ):
    MemoryCL( SPECS["hbm"], **kwargs ).elaborate()


def test_bad_rate_rule_is_named():
  with pytest.raises( RateRuleError, match=r"rate=0 .*latency=0" ):
    RateRule.of( 0, 1, 0 )
