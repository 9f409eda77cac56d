"""The receive buffer a link that can drop needs (`ring_frame.rx_buffer_packets`):
routers on a ring whose links never refuse a packet (a lossy link with an
endless buffer), counting how many packets are ever waiting for one router.
A receiver that takes nothing while its neighbour runs ahead must find the
bound exactly; random delays everywhere must stay within it."""

import random
from collections import deque

import numpy as np
import pytest
from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from pymtl_dfx.config import DFXConfig, gpt2_preset
from pymtl_dfx.kernel.ring_frame import largest_sync_words, rx_buffer_bytes, rx_buffer_packets
from pymtl_dfx.testing import router_ring
from pymtl_dfx.testing.harness import elaborate_for, run_until_done
from pymtl_dfx.testing.router_ring import RouterRing, _RingHarness
from pymtl_dfx.testing.src_sink import CheckSinkRTL, RecordSinkRTL, received
from pymtl_dfx.units.regfile.state import VectorRegisterFile
from pymtl_dfx.units.router.streams import (DoneMsg, RouterCmd, mk_router_types, n_writes,
                                            rd_messages)

BASE = DFXConfig( d=64, l=16, ring_latency_ns=20, ring_frame_overhead_bytes=0 )
ENTRIES = 64


def _clone( msg ):
  return msg.clone()


class EndlessLinkCL( Component ):
  """A link that takes every packet (as a dropping link would, but keeping
  them): `most` is the largest number ever sent and not yet taken."""

  def construct( s, cfg, Type, latency=4 ):
    s.recv = RecvIfcRTL( Type )
    s.send = SendIfcRTL( Type )
    s.q = deque()
    s.cycle = 0
    s.most = 0

    @update_once
    def up_endless_ports():
      s.recv.rdy @= 1
      ready = bool( s.q ) and s.q[0][0] <= s.cycle
      s.send.val @= ready
      if ready:
        s.send.msg @= s.q[0][1]

    @update_ff
    def up_endless_state():
      if s.reset:
        s.q.clear()
        s.cycle = s.most = 0
        return
      if s.send.val & s.send.rdy:
        s.q.popleft()
      if s.recv.val:
        s.q.append( ( s.cycle + 1 + latency, _clone( s.recv.msg ) ) )
      s.cycle += 1
      s.most = max( s.most, len( s.q ) )


def run_lossy_ring( monkeypatch, cores, n, syncs, stall_core=None, stall=0, max_delay=0, seed=0 ):
  """Run `syncs` syncs of n words per core; the rf_wr sink of `stall_core`
  takes nothing for `stall` cycles.  Returns (cfg, the most packets ever
  waiting on each link)."""
  cfg = BASE.replace( cores=cores )
  monkeypatch.setitem( router_ring.LINK_MODELS, "cl", EndlessLinkCL )
  W = cfg.router_words
  T = mk_router_types( cfg )
  rng = np.random.default_rng( seed )
  rfs = [ VectorRegisterFile( ENTRIES, cfg.d ) for _ in range( cores ) ]
  for rf in rfs:
    rf.mem[:] = rng.standard_normal( rf.mem.shape ).astype( np.float16 )
  blocks = -( -cores * n // cfg.d )
  plan = [ ( 1 + k * blocks, n ) for k in range( syncs ) ]
  dut = RouterRing( "cl", cfg, cores )
  sources, sinks = {}, {}
  for i in range( cores ):
    sources[ f"cmd{i}" ] = ( T["Cmd"], [ RouterCmd( b, m ) for b, m in plan ] )
    sources[ f"rf_rd{i}" ] = ( T["Rd"], [ x for b, m in plan
                                          for x in rd_messages( cfg, rfs[i], b, m, i, cores ) ] )
    sinks[ f"rf_wr{i}" ] = RecordSinkRTL( T["Wr"], syncs * n_writes( n, W, cores ), max_delay,
                                          seed + 10 + i )
    sinks[ f"done{i}" ] = CheckSinkRTL( DoneMsg, [ DoneMsg( 1 ) ] * syncs, max_delay, seed + 20 + i )
  th = elaborate_for( _RingHarness( dut, sources, sinks, max_delay, seed ), "cl", {} )
  if stall_core is not None:          # after elaboration: a sink's delays exist from construct on
    th.sinks[ f"rf_wr{stall_core}" ].delays[0] = stall
  run_until_done( th, 20000, f"lossy ring of {cores}", lambda: received( th.sinks ) )
  return cfg, [ link.most for link in th.dut.links ]


@pytest.mark.parametrize( "cores,n", [ ( 2, 100 ), ( 4, 100 ), ( 4, 64 ), ( 3, 200 ) ] )
def test_stalled_receiver_meets_the_bound( monkeypatch, cores, n ):
  """Card 0 takes nothing for 600 cycles: its upstream neighbour finishes the
  sync and sends its own packets of the next, N x P in all, and no more."""
  cfg, most = run_lossy_ring( monkeypatch, cores, n, syncs=3, stall_core=0, stall=600 )
  bound = rx_buffer_packets( cfg, n )
  assert bound == cores * -( -n // cfg.router_words )
  assert most[ cores - 1 ] == bound        # the link into card 0
  assert max( most ) <= bound


@pytest.mark.parametrize( "seed", range( 6 ) )
def test_random_timing_stays_within_the_bound( monkeypatch, seed ):
  rng = random.Random( seed )
  cores = rng.choice( [ 2, 3, 4 ] )
  n = rng.choice( [ 1, 64, 100, 130 ] )
  stall_core = rng.randrange( cores )
  cfg, most = run_lossy_ring( monkeypatch, cores, n, syncs=3, stall_core=stall_core,
                              stall=rng.randrange( 0, 300 ), max_delay=rng.randrange( 0, 8 ),
                              seed=seed )
  assert max( most ) <= rx_buffer_packets( cfg, n )


def test_bound_for_the_paper_model():
  """gpt2-xl-dfx on 4 cards: the FFN's 1,536 words per core are the largest
  sync, 24 packets; 96 packets (18 KB of 64-byte beats) per card, well inside
  AuroraFlow's 64 KB RX FIFO; one card needs none."""
  cfg = DFXConfig( cores=4 )
  words = largest_sync_words( gpt2_preset( "gpt2-xl-dfx" ), cfg )
  assert words == 1536
  assert rx_buffer_packets( cfg, words ) == 96
  assert rx_buffer_bytes( cfg, words ) == 96 * 3 * 64
  assert rx_buffer_packets( DFXConfig( cores=1 ), words ) == 0
