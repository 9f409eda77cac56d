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
from pymtl3.stdlib.stream.queue_adapters import RecvQueueAdapter, SendQueueAdapter

from ..control.decode_cache import decoded
from ..control.msgs import DoneMsg, InstMsg
from ...config import FP16_BITS
from .msgs import mk_ring_packet

F16 = np.float16


class RouterFL( Component ):

  def construct( s, cfg, rf, core_id, cores ):
    Packet = mk_ring_packet( cfg )
    W = cfg.router_words
    Word = mk_bits( FP16_BITS )
    s.recv = RecvIfcRTL( InstMsg )
    s.send = SendIfcRTL( DoneMsg )
    s.ring_send = SendIfcRTL( Packet )
    s.ring_recv = RecvIfcRTL( Packet )

    s.inst_q = RecvQueueAdapter( InstMsg )
    s.done_q = SendQueueAdapter( DoneMsg )
    s.out_q = SendQueueAdapter( Packet )
    s.in_q = RecvQueueAdapter( Packet )
    s.inst_q.recv //= s.recv
    s.done_q.send //= s.send
    s.out_q.send //= s.ring_send
    s.in_q.recv //= s.ring_recv

    s.active = None           # (base entry, segment length) of the sync in flight
    s.outgoing = deque()
    s.expected = 0
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

    @update_once
    def up_router():
      if s.active is None and s.inst_q.deq.rdy():
        inst, _, _ = decoded( int( s.inst_q.deq() ) )
        n = int( inst.len )
        s.active = ( int( inst.rf ), n )
        s.outgoing.extend( packets( int( inst.rf ), n ) if cores > 1 else [] )
        s.expected = ( cores - 1 ) * -( -n // W )
      if s.active is None:
        return
      base, n = s.active
      if s.in_q.deq.rdy() and s.expected:
        pkt = s.in_q.deq()
        src, idx = int( pkt.src ), int( pkt.idx )
        words = np.array( [ int( x ) for x in pkt.data ], np.uint16 ).view( F16 )
        lo = idx * W
        rf.write_elements( base, src * n + lo, words[ :max( 0, min( W, n - lo ) ) ] )
        s.expected -= 1
        if src != nxt:
          s.outgoing.append( pkt )
      if s.outgoing and s.out_q.enq.rdy():
        s.out_q.enq( s.outgoing.popleft() )
        s.packets_sent += 1
      if s.expected == 0 and not s.outgoing and s.done_q.enq.rdy():
        s.done_q.enq( DoneMsg( 1 ) )
        s.active = None

  def line_trace( s ):
    return f"{s.ring_recv}>({'S' if s.active else ' '}{len(s.outgoing)})>{s.ring_send}"
