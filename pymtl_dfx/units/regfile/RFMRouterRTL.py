"""The router side of the manager: one sync at a time.

idle: router_inst.rdy.  busy: router_cmd (base, len) once, and the P =
ceil(len / W) router_rd packets of this core's segment (none on one core):
packet k is the W elements from flat address base*d + core_id*len + k*W,
those at or past the segment's end +0 (`router.streams.rd_messages`); the
cycle after both are through: idle.  router_wr is the storage's window
write port (`RFStorageRTL`), always ready: the router must never wait for
the ring to drain a write.

core_id is an input (the manager's `core_id` port, `ports.py`), so the
segment offset core_id*len is hardware: one 8 x len-bit product, taken
into a register with the instruction (from its len field), so the address
path sees a register as it saw a constant product before and the sync's
timing is the same.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...isa.fields import ELEMS_BITS
from ...isa.formats import RouterInst
from ..control.msgs import InstMsg
from ..fpu.msgs import FP16
from ..router.ports import CoreIdT
from ..router.streams import BaseT, LenT, mk_router_types
from .RFMVectorRTL import slice_fields
from .RFStorageRTL import storage_types


class RFMRouterRTL( Component ):

  def construct( s, cfg, cores ):
    W = cfg.router_words
    Ent, Flat, _ = storage_types( cfg )
    FB = Flat.nbits
    LOGD, LOGW = cfg.d.bit_length() - 1, W.bit_length() - 1
    Cnt = mk_bits( max( ELEMS_BITS + 2, FB ) )
    WM1 = Cnt( W - 1 )
    MULTI = Cnt( 2**Cnt.nbits - 1 if cores > 1 else 0 )   # one core sends nothing
    T = mk_router_types( cfg )

    s.core_id = InPort( CoreIdT )
    s.inst = RecvIfcRTL( InstMsg )
    s.cmd  = SendIfcRTL( T["Cmd"] )
    s.rd   = SendIfcRTL( T["Rd"] )
    s.rd_addr = OutPort( Flat )
    s.rd_data = [ InPort( FP16 ) for _ in range( W ) ]

    slice_fields( s, RouterInst, ( "rf", "len" ), s.inst.msg )
    s.busy = Wire()
    s.cmd_pend = Wire()
    s.base = Wire( BaseT )
    s.n = Wire( LenT )
    s.npk = Wire( Cnt )
    s.k = Wire( Cnt )
    s.lo = Wire( Cnt )          # the packet's first word within the segment
    s.seg = Wire( Flat )        # core_id * len, taken with the instruction
    s.finish = Wire()

    s.cmd.msg.base //= s.base
    s.cmd.msg.len //= s.n

    @update
    def up_sync_ctrl():
      s.inst.rdy @= ~s.busy
      s.cmd.val @= s.busy & s.cmd_pend
      s.rd.val @= s.busy & ( s.k != s.npk )
      s.finish @= s.busy & ~s.cmd_pend & ( s.k == s.npk )
      s.lo @= s.k << LOGW
      s.rd_addr @= ( zext( s.base[ 0:Ent.nbits ], FB ) << LOGD ) + s.seg + s.lo[ 0:FB ]

    # its own block: the storage reads rd_data from rd_addr in between
    @update
    def up_sync_rd_msg():
      for j in range( W ):
        if s.lo + j < zext( s.n, Cnt.nbits ):
          s.rd.msg.data[j] @= s.rd_data[j]
        else:
          s.rd.msg.data[j] @= 0

    @update_ff
    def up_sync_state():
      if s.reset:
        s.busy <<= 0
        s.cmd_pend <<= 0
        s.k <<= 0
      elif s.busy:
        if s.cmd.val & s.cmd.rdy:
          s.cmd_pend <<= 0
        if s.rd.val & s.rd.rdy:
          s.k <<= s.k + 1
        if s.finish:
          s.busy <<= 0
      elif s.inst.val:
        s.busy <<= 1
        s.cmd_pend <<= 1
        s.base <<= s.f_rf
        s.n <<= s.f_len
        s.seg <<= trunc( zext( s.f_len, 32 ) * zext( s.core_id, 32 ), FB )
        s.npk <<= ( ( zext( s.f_len, Cnt.nbits ) + WM1 ) >> LOGW ) & MULTI
        s.k <<= 0

  def line_trace( s ):
    return "R" if s.busy else " "
