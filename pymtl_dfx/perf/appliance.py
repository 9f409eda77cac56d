"""N cores on a ring of links, stepped as the host steps the CL appliance.

A step starts with each core's program in its word source and every unit
idle; cycle k is the k-th cycle the host counts (`appliance.host`): the
ports from the state, the handshakes charged to op classes by the host's
own attribution (`attribution.Progress`, the one definition of the rule), then
the state update.  The step ends with the first cycle in which every core
is idle and every word taken.
"""

from ..appliance.attribution import Progress
from ..appliance.liveness import StepTimeout, cycle_limit, stuck_report
from ..lib.rate_queue import RateQueueCL
from ..units.router.LinkRTL import link_rule
from ..units.control.decode_cache import decoded
from .core import CoreTiming
from .fold import Folder


class ApplianceTiming:

  def __init__( s, cfg, cores ):
    s.cfg, s.n = cfg, cores
    s.cores = [ CoreTiming( cfg, i, cores ) for i in range( cores ) ]
    s.links = [ RateQueueCL( link_rule( cfg ) ) for _ in range( cores ) ]

  def step( s, words, units, classes, layers=None, limit=None, what="step" ):
    """words / units / classes: per core, the program's words, each
    instruction's unit and op class; layers: per core, its `fold.Layers`
    (None: no folding); limit: cycles before `StepTimeout` names what is
    stuck (default: the host's bound from the programs).  Returns (cycles,
    per-core Progress)."""
    n, cores, links = s.n, s.cores, s.links
    if limit is None:
      limit = cycle_limit( s.cfg, s.cores[0].specs,
                           [ [ decoded( w )[0] for w in ws ] for ws in words ] )
    tracks = [ Progress( u, c ) for u, c in zip( units, classes ) ]
    for c, w in zip( cores, words ):
      c.load( w )
    folder = Folder( s, layers ) if layers else None
    s.folded = s.skipped = 0
    k = 0
    while True:
      if folder is not None:
        k = folder.at( k, tracks )
        s.folded, s.skipped = folder.folded, folder.skipped
      # ports: a link's send.val and recv.rdy come from its state
      send_val = [ l.head() is not None for l in links ]
      recv_rdy = [ l.can_accept() for l in links ]
      for i, c in enumerate( cores ):
        bi, br = c.comb( send_val[ i - 1 ], recv_rdy[i] )
        tracks[i].cycle( k, bi, br )
      k += 1
      if all( c.idle() and c.drained() for c in cores ):
        return k, tracks
      if k >= limit:
        raise StepTimeout( stuck_report(
          what, limit, tracks, lambda i, pc: decoded( words[i][ pc ] )[0],
          [ c.line_trace() for c in cores ], [ len( c.words ) - c.ptr for c in cores ] ) )
      # state: packets move between routers and links
      pkts = [ c.send_packet() if c.hs["ring_send"] and recv_rdy[i] else None
               for i, c in enumerate( cores ) ]
      recv = [ links[ i - 1 ].head() if cores[i].hs["ring_recv"] else None for i in range( n ) ]
      for i, c in enumerate( cores ):
        c.tick( recv[i] )
      for i, l in enumerate( links ):
        l.tick( pkts[i], cores[ ( i + 1 ) % n ].hs["ring_recv"] )
