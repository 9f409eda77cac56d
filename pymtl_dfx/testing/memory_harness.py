"""Drive a memory model (fl, cl, rtl; Verilator under --test-verilog) with
phased host traffic and per-channel DMA traffic, recording when each
request was accepted and each response arrived.

Phases keep the expected contents independent of timing: host phase 0
(e.g. loading the memory) completes before the DMA sources start; host
phase 1 runs alongside the DMA traffic (on other rows); host phase 2 (e.g.
reading the memory back) starts when every DMA response has arrived.  A
source waits for its gate on responses stamped in EARLIER cycles only, so
the run does not depend on the order pymtl3 runs the blocks of one cycle.
"""

import bisect
import random

from pymtl3 import *

from .harness import _plain_opts, elaborate_for, run_until_done
from .src_sink import CheckSinkRTL, DelaySourceRTL, received
from .with_memories import MODELS
from ..units.memory.ports import mk_host_types

def _before( sink, cycle ):
  """Responses `sink` received before `cycle`."""
  return bisect.bisect_left( sink.arrivals, cycle )


class MemoryHarness( Component ):
  """host: (phase-0, phase-1, phase-2) lists of (req, expected resp);
  dma[c]: a list of (req, expected resp) for channel c."""

  def construct( s, dut, spec, host, dma, max_delay=0, seed=0 ):
    T, H = spec.types, mk_host_types( spec )
    s.dut = dut
    n0, n1 = len( host[0] ), len( host[1] )

    def host_gate( phase, cycle ):
      if phase == 0:
        return True
      if phase == 1:
        return _before( s.host_sink, cycle ) >= n0
      return _before( s.host_sink, cycle ) >= n0 + n1 and \
             all( _before( k, cycle ) >= len( k.expected ) for k in s.sinks )

    def dma_gate( phase, cycle ):
      return _before( s.host_sink, cycle ) >= n0

    pairs = [ p for ph in host for p in ph ]
    s.host_src = DelaySourceRTL( H["Req"], [ q for q, _ in pairs ], max_delay, seed,
                                 gate=host_gate,
                                 phases=[ i for i, ph in enumerate( host ) for _ in ph ] )
    s.host_sink = CheckSinkRTL( H["Resp"], [ r for _, r in pairs ], max_delay, seed + 1 )
    s.host_src.send //= s.dut.host_req
    s.host_sink.recv //= s.dut.host_resp
    s.srcs = [ DelaySourceRTL( T["Req"], [ q for q, _ in d ], max_delay, seed + 2 + 2 * c,
                               gate=dma_gate ) for c, d in enumerate( dma ) ]
    s.sinks = [ CheckSinkRTL( T["Resp"], [ r for _, r in d ], max_delay, seed + 3 + 2 * c )
                for c, d in enumerate( dma ) ]
    for c in range( spec.channels ):
      s.srcs[c].send //= s.dut.req[c]
      s.sinks[c].recv //= s.dut.resp[c]

  def done( s ):
    return all( x.done() for x in s.srcs + s.sinks + [ s.host_src, s.host_sink ] )

  def line_trace( s ):
    return s.dut.line_trace()


class MemoryRun:
  """Cycle stamps of one run: sent/arrived for 'host' and each channel c."""

  def __init__( s, th ):
    s.cycles = th.sim_cycle_count()
    s.sent = { "host": list( th.host_src.sent ) }
    s.arrived = { "host": list( th.host_sink.arrivals ) }
    for c, ( src, sink ) in enumerate( zip( th.srcs, th.sinks ) ):
      s.sent[c], s.arrived[c] = list( src.sent ), list( sink.arrivals )


def run_memory( level, spec, depth, host, dma, cmdline_opts=None, max_delay=0, seed=0,
                host_entries=None, line_trace=False ):
  """Run the memory model for `level`; returns a `MemoryRun`.  Every
  response is checked against its expected value as it arrives."""
  opts = _plain_opts( cmdline_opts )
  th = MemoryHarness( MODELS[ level ]( spec, depth, host_entries ), spec, host, dma,
                      max_delay, seed )
  th = elaborate_for( th, level, opts, line_trace )
  n = sum( len( p ) for p in host ) + sum( len( d ) for d in dma )
  limit = 2000 + ( spec.latency + 10 ) * ( max_delay + 2 ) * n
  run_until_done( th, limit, f"{spec.name} memory at {level}",
                  lambda: received( { "host": th.host_sink,
                                      **{ f"ch{c}": k for c, k in enumerate( th.sinks ) } } ) )
  return MemoryRun( th )


def streaming_reads( spec, depth, n, seed=0 ):
  """(host, dma) for `run_memory`: the host loads every row of every
  channel with random words, then each channel gets n reads of random rows
  (expected: the loaded words)."""
  rng = random.Random( seed )
  T, H = spec.types, mk_host_types( spec )
  C = spec.channels
  words = [ rng.getrandbits( T["Resp"].nbits ) for _ in range( C * depth ) ]
  load = [ ( H["Req"]( 1, a, spec.all_elems, w ), H["Resp"]( 0 ) ) for a, w in enumerate( words ) ]
  dma = []
  for c in range( C ):
    rows = [ rng.randrange( depth ) for _ in range( n ) ]
    dma.append( [ ( T["Req"]( 0, r, 0, 0 ), T["Resp"]( words[ r * C + c ] ) ) for r in rows ] )
  return [ load, [], [] ], dma
