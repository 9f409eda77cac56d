"""The router's stream boundary and contract, as the register-file manager
and the ring see it (shared by RouterFL, RouterCL and RouterRTL).

Message types (W = cfg.router_words):

  cmd       `RouterCmd` (base, len): a SYNC's RouterInst fields.
  rf_rd     `RouterRd` (data: W words): this core's segment, W words at a
            time.  For a sync of n words per core on a ring of `cores`
            (P = ceil(n / W) packets), the manager sends exactly P messages
            if cores > 1 (none on one core): element base*d + core*n + k*W
            onward, words past the segment +0.  The manager does the
            alignment (a segment need not start on an entry).
  rf_wr     `RouterWr` (addr, cnt, data: W words): a received packet.  The
            manager writes data[:cnt] at flat element address addr (entry
            addr // d, lane addr % d) and leaves the other lanes alone.
            (cores - 1) * P messages per sync, in the order they arrive
            from the ring (not a fixed order: it depends on timing).
  ring_send / ring_recv  `RingPacket` (src, idx, data): the QSFP side.
  done      `DoneMsg` (1): one per sync, after the last rf_wr has left and
            every packet this core owes the ring has been sent.

The manager must serve rf_wr independently of the ring (it never waits for
the ring to accept something before taking a write), and must send rf_rd
without waiting for rf_wr; with that, the buffering rule of `RouterRTL`
makes the ring deadlock-free.

The functions below are the meaning both sides share: `rd_messages` (what
the manager sends), `own_packet`, `write_of` (what a received packet
becomes), `forwards` and `apply_writes` (what the manager does with rf_wr).
"""

import functools

import numpy as np
from pymtl3 import *

from ...config import FP16_BITS
from ...isa.formats import RouterInst
from ...lib.arith import ceil_div
from .msgs import mk_ring_packet

F16 = np.float16
Word = mk_bits( FP16_BITS )
BaseT = RouterInst.__bitstruct_fields__["rf"]
LenT  = RouterInst.__bitstruct_fields__["len"]
AddrT = Bits32            # flat element address in the register file
DoneMsg = Bits1


@bitstruct
class RouterCmd:
  base: BaseT
  len:  LenT


@functools.lru_cache( maxsize=None )
def _types( W ):
  CntT = mk_bits( max( 1, W.bit_length() ) )
  return dict(
    Cmd=RouterCmd,
    Rd=mk_bitstruct( f"RouterRd_{W}", { "data": [ Word ] * W } ),
    Wr=mk_bitstruct( f"RouterWr_{W}", { "addr": AddrT, "cnt": CntT, "data": [ Word ] * W } ),
    Cnt=CntT,
  )


def mk_router_types( cfg ):
  """dict: Cmd, Rd, Wr, Packet (and Cnt, the type of Wr.cnt)."""
  t = dict( _types( cfg.router_words ) )
  t["Packet"] = mk_ring_packet( cfg )
  return t


def router_cmd( inst ):
  """The router's command for a decoded SYNC RouterInst."""
  return RouterCmd( inst.rf, inst.len )


def n_packets( n, W ):
  return ceil_div( int( n ), W )


def n_writes( n, W, cores ):
  return ( cores - 1 ) * n_packets( n, W )


def forwards( src, core_id, cores ):
  """A core forwards a packet unless the next core is the one that sent it."""
  return int( src ) != ( core_id + 1 ) % cores


def _words( values, W ):
  out = np.zeros( W, F16 )
  out[ :len( values ) ] = values
  return [ Word( int( x ) ) for x in out.view( np.uint16 ) ]


def rd_messages( cfg, rf, base, n, core_id, cores ):
  """The rf_rd messages the manager sends for a sync of n words per core."""
  if cores == 1:
    return []
  W = cfg.router_words
  Rd = mk_router_types( cfg )["Rd"]
  seg = rf.read( base, cores * n )[ core_id * n:( core_id + 1 ) * n ]
  return [ Rd( _words( seg[ lo:lo + W ], W ) ) for lo in range( 0, n, W ) ]


def own_packet( cfg, core_id, idx, rd_msg ):
  Packet = mk_ring_packet( cfg )
  return Packet( core_id, idx, [ Word( int( x ) ) for x in rd_msg.data ] )


def write_addr( cfg, base, n, src, idx ):
  return int( base ) * cfg.d + int( src ) * int( n ) + int( idx ) * cfg.router_words


def write_cnt( cfg, n, idx ):
  return min( cfg.router_words, int( n ) - int( idx ) * cfg.router_words )


def write_of( cfg, base, n, pkt ):
  """The rf_wr message for a received packet of a sync (base, n)."""
  Wr = mk_router_types( cfg )["Wr"]
  return Wr( write_addr( cfg, base, n, pkt.src, pkt.idx ), write_cnt( cfg, n, pkt.idx ),
             [ Word( int( x ) ) for x in pkt.data ] )


def apply_writes( rf, msgs ):
  """What the manager does with rf_wr messages."""
  for m in msgs:
    words = np.array( [ int( x ) for x in m.data ], np.uint16 ).view( F16 )
    rf.write_elements( 0, int( m.addr ), words[ :int( m.cnt ) ] )


def expected_writes( cfg, rfs, base, n ):
  """Per core, the rf_wr messages it must give for a sync, in a canonical
  order (sorted by address); the ring delivers them in some order."""
  cores = len( rfs )
  out = []
  for c in range( cores ):
    msgs = []
    for src in range( cores ):
      if src == c:
        continue
      for idx, rd in enumerate( rd_messages( cfg, rfs[ src ], base, n, src, cores ) ):
        msgs.append( write_of( cfg, base, n, own_packet( cfg, src, idx, rd ) ) )
    out.append( sorted( msgs, key=lambda m: int( m.addr ) ) )
  return out

