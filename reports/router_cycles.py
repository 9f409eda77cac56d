"""Cycles of one ring sync (all-gather of n words per core) on 2 and 4 cores,
from the CL ring (RouterCL + LinkCL, cycle-exact with RouterRTL + LinkRTL),
with the link parameters of the default DFXConfig.

  python reports/router_cycles.py [--latency-ns NS]

cycles: from the cycle the command is offered (sources without delays) to
the last core's done.  Bound: the larger of (a) the (cores-1) * P packets
one link must carry at the configured rate plus one hop, and (b) the
farthest segment's (cores-1) hops plus its P-1 packets behind the first;
the rest is the router's and the harness's pipeline (a few cycles).
"""

import argparse
import pathlib
import sys

import numpy as np

sys.path.insert( 0, str( pathlib.Path( __file__ ).resolve().parent.parent ) )

from pymtl_dfx.config import DFXConfig  # noqa: E402
from pymtl_dfx.units.regfile.state import VectorRegisterFile  # noqa: E402
from pymtl_dfx.units.router.LinkRTL import link_params  # noqa: E402
from pymtl_dfx.testing.router_ring import run_ring  # noqa: E402
from pymtl_dfx.units.router.streams import n_packets  # noqa: E402


def sync_cycles( cfg, cores, n, level="cl" ):
  rng = np.random.default_rng( n )
  rfs = [ VectorRegisterFile( -( -cores * n // cfg.d ) + 1, cfg.d ) for _ in range( cores ) ]
  for rf in rfs:
    rf.mem[:] = rng.standard_normal( rf.mem.shape ).astype( np.float16 )
  r = run_ring( level, cfg, rfs, [ ( 0, n ) ], fwd_entries=2 )
  for rf in rfs[1:]:
    assert np.array_equal( rf.read( 0, cores * n ).view( np.uint16 ),
                           rfs[0].read( 0, cores * n ).view( np.uint16 ) )
  return max( r.arrivals[ f"done{i}" ][0] for i in range( cores ) )


def table( cfg ):
  L, num, den, cost, entries = link_params( cfg )
  rate = cfg.ring_words_per_cycle
  lines = [
    f"link: {cfg.ring_gbps:g} Gb/s at {cfg.clock_mhz} MHz = {rate} = {float( rate ):g} words/cycle; "
    f"latency {cfg.ring_latency_ns:g} ns = {L} cycles; {cfg.router_words}-word packets "
    f"({cost / num:g} cycles each); link buffer {entries} packets; forward FIFO 2 packets",
    "",
    "| cores | n (words/core) | packets/link | cycles | us | bound | bound/cycles |",
    "|------:|---------------:|-------------:|-------:|---:|------:|-------------:|",
  ]
  for cores in ( 2, 4 ):
    for n in ( 64, 256, 1024 ):
      pk = ( cores - 1 ) * n_packets( n, cfg.router_words )
      P = n_packets( n, cfg.router_words )
      bound = max( ( pk * cost ) // num + L, ( cores - 1 ) * L + ( ( P - 1 ) * cost ) // num )
      c = sync_cycles( cfg, cores, n )
      lines.append( f"| {cores} | {n} | {pk} | {c} | {c / cfg.clock_mhz:.2f} | {bound} | "
                    f"{bound / c:.0%} |" )
  return "\n".join( lines )


if __name__ == "__main__":
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--latency-ns", type=float, default=None )
  a = ap.parse_args()
  cfg = DFXConfig() if a.latency_ns is None else DFXConfig( ring_latency_ns=a.latency_ns )
  print( table( cfg ) )
