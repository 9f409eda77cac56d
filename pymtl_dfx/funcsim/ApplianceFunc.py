"""N FL cores on a ring: core i's router sends to core (i + 1) mod N."""

from pymtl3 import *

from .CoreFunc import CoreFunc


class ApplianceFunc( Component ):

  def construct( s, cfg, images, readonly_hbm_words ):
    n = len( images )
    s.cores = [ CoreFunc( cfg, i, n, hbm, ddr, readonly_hbm_words )
                for i, ( hbm, ddr ) in enumerate( images ) ]
    for i in range( n ):
      s.cores[i].ring_send //= s.cores[ ( i + 1 ) % n ].ring_recv

  def idle( s ):
    return all( c.ctrl.is_idle() for c in s.cores )

  def line_trace( s ):
    return " | ".join( c.line_trace() for c in s.cores )
