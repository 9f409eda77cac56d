"""The core's channels are declared once (`core/netlist.py`): `Core` joins
exactly them (every channel's two ends share their nets, and no net joins
two units or a unit and the core's boundary outside the netlist), and
perf's core keeps a handshake for each of them under its name, which its
tick reads."""

import pytest
from pymtl3 import InPort, OutPort
from pymtl3.dsl.Connectable import Signal

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.core.Core import Core
from pymtl_dfx.core.netlist import EACH, MEMORIES, NETLIST, PERF_CHANNELS, ends
from pymtl_dfx.isa import assemble, encode
from pymtl_dfx.perf.core import CoreTiming
from pymtl_dfx.units.dma.msgs import mk_dma_types

CFG = DFXConfig( d=32, l=8, hbm_channels=4, vreg_entries=256, mreg_entries=16, psum_entries=16 )


def _end_of( sig, tops ):
  """The interface or port directly under the core or one of its units
  that `sig` belongs to, or None (a signal inside a unit's own parts)."""
  p = sig
  while p.get_parent_object() not in tops:
    p = p.get_parent_object()
    if p is None:
      return None
  return None if p.is_component() else p


def _channel_ends( core, memories ):
  """(src, dst) objects of every channel Core should have joined."""
  T = mk_dma_types( CFG )
  out = {}
  for ch in NETLIST:
    at = ends( ch, memories )
    if at is None:
      continue
    mem = next( ( e[0] for e in ( ch.src, ch.dst ) if e[0] in MEMORIES ), None )
    for c in range( T[mem].channels if EACH in at[0] + at[1] else 1 ):
      out[ f"{ch.name}[{c}]" ] = ( core._port( at[0], c ), core._port( at[1], c ) )
  return out


@pytest.mark.parametrize( "memories", [ True, False ] )
def test_core_joins_exactly_the_netlist( memories ):
  core = Core( CFG, 0, 1, level="cl", hbm_depth=64, ddr_depth=64, memories=memories )
  core.elaborate()
  want = _channel_ends( core, memories )
  assert len( want ) > len( NETLIST )            # the memory channels, once each
  net_of = {}
  nets = core.get_all_value_nets()
  for i, ( _, signals ) in enumerate( nets ):
    for x in signals:
      net_of[ x ] = i
  for name, ( a, b ) in want.items():
    sigs = [ ( a, b ) ] if not hasattr( a, "val" ) else \
           [ ( a.val, b.val ), ( a.rdy, b.rdy ) ]
    for x, y in sigs:
      assert x in net_of and net_of.get( x ) == net_of.get( y ), name
  # a net is a channel's two ends, or one producer's fan-out (the ring
  # position goes from the core to the manager and the router)
  fan = {}
  for a, b in want.values():
    fan.setdefault( id( a ), { id( a ) } ).add( id( b ) )
  pairs = { frozenset( ids ) for ids in fan.values() }
  tops = { core, *core.get_child_components() }
  joined = 0
  for _, signals in nets:
    if core.clk in signals or core.reset in signals:
      continue                                   # pymtl3's own, to every component
    found = { _end_of( x, tops ) for x in signals if isinstance( x, Signal ) } - { None }
    if len( found ) > 1:
      joined += 1
      assert frozenset( map( id, found ) ) in pairs, sorted( str( x ) for x in found )
  assert joined >= len( want )
  # and every port of every unit is an end of a channel (none left open)
  open_ends = { str( e ) for u in core.get_child_components()
                for x in u.get_all_object_filter( lambda x: isinstance( x, ( InPort, OutPort ) ) )
                if x is not u.clk and x is not u.reset
                for e in [ _end_of( x, tops ) ] if e is not None } - \
              { str( e ) for ab in want.values() for e in ab }
  assert not open_ends, sorted( open_ends )


def test_perf_core_keeps_and_reads_every_channel():
  c = CoreTiming( CFG, 0, 1 )
  c.load( [ int( encode( i ) ) for i in assemble( "ddr_read v0, 0, vecs=1\n" ) ] )
  c.comb( False, True )
  assert set( c.hs ) == set( PERF_CHANNELS )

  read = set()

  class Record( dict ):
    def __getitem__( s, k ):
      read.add( k )
      return dict.__getitem__( s, k )

  c.hs = Record( c.hs )
  c.tick( None )
  # a "rdy" channel's handshake is the producer's timing's to take, in comb
  for ch in NETLIST:
    if ch.perf not in ( None, "rdy" ) and ch.where == "core":
      assert ch.name in read, ch.name
