"""Router at FL: the ring all-gather of `sync`.

Every core sends its segment to the next core on the ring as packets of
`router_words` words; a core writes each packet it receives into its
register file at the sender's segment and forwards it unless the next core
is the sender.  After cores-1 segments have arrived the sync is done.
Packets from one neighbour arrive in order, so a core that is still
finishing a sync never mistakes the next sync's packets for its own: it
counts exactly (cores-1) * packets-per-segment.
"""

from collections import deque

import numpy as np
from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..units.control.decode_cache import decoded
from ..units.control.msgs import DoneMsg, InstMsg
from ..config import FP16_BITS
from ..lib.arith import ceil_div
from ..units.router.msgs import mk_ring_packet

F16 = np.float16


class RouterFunc( Component ):

  def construct( s, cfg, rf, core_id, cores ):
    Packet = mk_ring_packet( cfg )
    W = cfg.router_words
    Word = mk_bits( FP16_BITS )
    s.recv = RecvIfcRTL( InstMsg )
    s.send = SendIfcRTL( DoneMsg )
    s.ring_send = SendIfcRTL( Packet )
    s.ring_recv = RecvIfcRTL( Packet )

    s.active = None           # (base entry, segment length) of the sync in flight
    s.outgoing = deque()
    s.expected = 0
    s.done_pending = False
    s.packets_sent = 0
    nxt = ( core_id + 1 ) % cores

    def packets( base, n ):
      seg = rf.read( base, cores * n )[ core_id * n:( core_id + 1 ) * n ]
      out = []
      for idx, lo in enumerate( range( 0, n, W ) ):
        words = np.zeros( W, F16 )
        part = seg[ lo:lo + W ]
        words[ :part.size ] = part
        out.append( Packet( core_id, idx, [ Word( int( x ) ) for x in words.view( np.uint16 ) ] ) )
      return out

    def receive( pkt ):
      pkt = pkt.clone()       # the net's value object is reused next cycle
      base, n = s.active
      src, idx = int( pkt.src ), int( pkt.idx )
      words = np.array( [ int( x ) for x in pkt.data ], np.uint16 ).view( F16 )
      lo = idx * W
      rf.write_elements( base, src * n + lo, words[ :max( 0, min( W, n - lo ) ) ] )
      s.expected -= 1
      if src != nxt:
        s.outgoing.append( pkt )

    @update_once
    def up_router_ports():
      s.recv.rdy @= ( s.active is None ) & ( not s.done_pending )
      s.send.val @= s.done_pending
      s.send.msg @= 1
      s.ring_send.val @= len( s.outgoing ) > 0
      if s.outgoing:
        s.ring_send.msg @= s.outgoing[0]
      s.ring_recv.rdy @= ( s.active is not None ) and ( s.expected > 0 )

    @update_ff
    def up_router_state():
      if s.reset:
        s.active, s.expected, s.done_pending = None, 0, False
        s.outgoing.clear()
        return
      if s.send.val & s.send.rdy:
        s.done_pending = False
      if s.ring_send.val & s.ring_send.rdy:
        s.outgoing.popleft()
        s.packets_sent += 1
      if s.ring_recv.val & s.ring_recv.rdy:
        receive( s.ring_recv.msg )
      if s.recv.val & s.recv.rdy:
        inst, _, _ = decoded( int( s.recv.msg ) )
        n = int( inst.len )
        s.active = ( int( inst.rf ), n )
        s.outgoing.extend( packets( int( inst.rf ), n ) if cores > 1 else [] )
        s.expected = ( cores - 1 ) * ceil_div( n, W )
      if s.active is not None and s.expected == 0 and not s.outgoing:
        s.active = None
        s.done_pending = True

  def line_trace( s ):
    return f"{s.ring_recv}>({'S' if s.active else ' '}{len( s.outgoing )})>{s.ring_send}"
