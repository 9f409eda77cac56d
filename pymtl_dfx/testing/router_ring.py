"""Routers on a ring joined by links, and a harness that runs syncs on it.

`RouterRing(level, cfg, cores)` has, per core i, the register-file
manager's ports cmd{i}, rf_rd{i}, rf_wr{i}, done{i}; router i's ring_send
goes through link i to router (i + 1) % cores.  The routers are built
without a position (one RTL module for all of them, as in `Core`) and
router i's core_id input is tied to i.  Levels: fl = RouterFL
+ LinkCL, cl = RouterCL + LinkCL, rtl = RouterRTL + LinkRTL.

`run_ring(...)` drives it like `run_stream_test` (random source / sink
delays, --test-verilog turns the rtl ring into a Verilator model), except
that rf_wr sinks accept their messages in any order (the ring's order
depends on timing) and record them with their arrival cycles.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from .harness import _plain_opts, elaborate_for, run_until_done, translating
from .src_sink import CheckSinkRTL, DelaySourceRTL, RecordSinkRTL, received
from ..hdl.wide_ports import WidePortsRTL, connect_stream
from ..units.router.models import LINK_MODELS, MODELS as ROUTER_MODELS
from ..units.router.ports import CoreIdT
from ..units.router.streams import DoneMsg, RouterCmd, apply_writes, mk_router_types, n_writes, rd_messages



class RouterRing( Component ):

  def construct( s, level, cfg, cores, fwd_entries=2 ):
    Router, Link = ROUTER_MODELS[ level ], LINK_MODELS[ level ]
    T = mk_router_types( cfg )
    s.routers = [ Router( cfg, None, cores, fwd_entries ) for i in range( cores ) ]
    s.links = [ Link( cfg, T["Packet"] ) for _ in range( cores ) ]
    for i, r in enumerate( s.routers ):
      r.core_id //= CoreIdT( i )
      setattr( s, f"cmd{i}", RecvIfcRTL( T["Cmd"] ) )
      setattr( s, f"rf_rd{i}", RecvIfcRTL( T["Rd"] ) )
      setattr( s, f"rf_wr{i}", SendIfcRTL( T["Wr"] ) )
      setattr( s, f"done{i}", SendIfcRTL( DoneMsg ) )
      connect( getattr( s, f"cmd{i}" ), r.cmd )
      connect( getattr( s, f"rf_rd{i}" ), r.rf_rd )
      connect( r.rf_wr, getattr( s, f"rf_wr{i}" ) )
      connect( r.done, getattr( s, f"done{i}" ) )
      connect( r.ring_send, s.links[i].recv )
      connect( s.links[i].send, s.routers[ ( i + 1 ) % cores ].ring_recv )

  def line_trace( s ):
    return " | ".join( f"{r.line_trace()}{l.line_trace()}" for r, l in zip( s.routers, s.links ) )


class _RingHarness( Component ):

  def construct( s, dut, sources, sinks, max_delay, seed ):
    s.dut = dut
    s.parts = []
    for k, ( port, ( Type, msgs ) ) in enumerate( sorted( sources.items() ) ):
      src = DelaySourceRTL( Type, msgs, max_delay, seed + 2 * k )
      setattr( s, f"src_{port}", src )
      connect_stream( src.send, getattr( dut, port ) )
      s.parts.append( src )
    s.sinks = {}
    for k, ( port, sink ) in enumerate( sorted( sinks.items() ) ):
      setattr( s, f"sink_{port}", sink )
      connect_stream( sink.recv, getattr( dut, port ) )
      s.sinks[ port ] = sink
      s.parts.append( sink )

  def done( s ):
    return all( p.done() for p in s.parts )

  def line_trace( s ):
    return s.dut.line_trace()


class RingResult:
  def __init__( s, cycles, writes, arrivals ):
    s.cycles = cycles          # total cycles
    s.writes = writes          # per core: rf_wr messages in arrival order
    s.arrivals = arrivals      # port -> arrival cycles (rf_wr{i}, done{i})


def run_ring( level, cfg, rfs, syncs, cmdline_opts=None, max_delay=0, seed=0,
              fwd_entries=2, max_cycles=None, line_trace=False ):
  """Run `syncs` [(base, n), ...] on a ring of len(rfs) cores at `level`;
  write the received words into `rfs` (as the manager would) and return a
  RingResult.  Each sync's rf_rd messages are read from `rfs` before the
  run (the syncs' segments must not overlap)."""
  cores = len( rfs )
  W = cfg.router_words
  T = mk_router_types( cfg )
  opts = _plain_opts( cmdline_opts )
  dut = RouterRing( level, cfg, cores, fwd_entries )
  if translating( level, opts ):
    dut = WidePortsRTL( dut )
  sources, sinks = {}, {}
  for i in range( cores ):
    sources[ f"cmd{i}" ] = ( T["Cmd"], [ RouterCmd( b, n ) for b, n in syncs ] )
    sources[ f"rf_rd{i}" ] = ( T["Rd"], [ m for b, n in syncs
                                          for m in rd_messages( cfg, rfs[i], b, n, i, cores ) ] )
    sinks[ f"rf_wr{i}" ] = RecordSinkRTL( T["Wr"], sum( n_writes( n, W, cores ) for _, n in syncs ),
                                          max_delay, seed + 101 + 2 * i )
    sinks[ f"done{i}" ] = CheckSinkRTL( DoneMsg, [ DoneMsg( 1 ) ] * len( syncs ),
                                        max_delay, seed + 102 + 2 * i )
  th = elaborate_for( _RingHarness( dut, sources, sinks, max_delay, seed ), level, opts,
                      line_trace )
  n_msgs = sum( len( m ) for _, m in sources.values() ) + sum( len( x.expected ) for x in sinks.values() )
  limit = max_cycles or 2000 + 20 * ( max_delay + 1 ) * n_msgs + 4 * cores * cfg.ring_latency_cycles * len( syncs )
  cycles = run_until_done(
    th, limit, f"ring of {cores} at {level}",
    lambda: received( dict( sorted( th.sinks.items() ) ) ) )
  writes = [ list( th.sinks[ f"rf_wr{i}" ].got ) for i in range( cores ) ]
  for rf, msgs in zip( rfs, writes ):
    apply_writes( rf, msgs )
  return RingResult( cycles, writes, { p: list( x.arrivals ) for p, x in th.sinks.items() } )
