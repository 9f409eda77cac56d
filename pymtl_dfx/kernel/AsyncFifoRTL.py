"""A FIFO between two unrelated clock domains: Gray-coded pointers, each
crossing through a two-flop synchroniser.

pymtl3 simulates one clock, so each domain is a clock enable (`w_en` for
the write side, `r_en` for the read side, e.g. from `ClockEnableRTL`): a
side's registers change only in cycles its enable is high, as if they were
clocked by its own clock.  The write side owns the storage, the binary and
Gray write pointers and the two flops that bring the read pointer's Gray
code into its domain; the read side owns the read pointers and the two
flops for the write pointer.  A pointer crosses only as Gray code, so a
sample taken while it moves is either the old or the new value (one bit
changes per step), and both sides see the other's pointer late, never
early: the writer's level (`w_level`, entries it must assume used) is never
below the true one, the reader's (`r_level`) never above, so `full` and
`empty` are conservative and nothing is overwritten or read twice.

Ports: `enq` (write side: rdy = w_en and not full, an entry is written when
enq.val & enq.rdy), `deq` (read side: val = r_en and not empty, the head
leaves when deq.val & deq.rdy): a transfer is a plain val & rdy, and only
happens in its side's enabled cycles.  `wptr` / `rptr` are the Gray
pointers (debug), `w_level` / `r_level` the levels each side sees.
`depth` must be a power of two (>= 2), the Gray code's wrap; pointers have
log2(depth) + 1 bits, the extra bit telling full from empty.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL


def check_depth( who, depth ):
  if not isinstance( depth, int ) or depth < 2 or depth & ( depth - 1 ):
    raise ValueError( f"{who}: depth={depth!r} must be a power of two >= 2" )


class AsyncFifoRTL( Component ):

  def construct( s, Type, depth ):
    check_depth( "AsyncFifoRTL", depth )
    AW = depth.bit_length() - 1
    PW = AW + 1
    P = mk_bits( PW )
    DEPTH = P( depth )

    s.w_en = InPort()
    s.r_en = InPort()
    s.enq = RecvIfcRTL( Type )
    s.deq = SendIfcRTL( Type )
    s.wptr = OutPort( P )          # Gray
    s.rptr = OutPort( P )          # Gray
    s.w_level = OutPort( P )
    s.r_level = OutPort( P )

    s.mem = [ Wire( Type ) for _ in range( depth ) ]
    # write domain
    s.wbin = Wire( P )
    s.rq1 = Wire( P )               # the read pointer's Gray code, flop 1 and 2
    s.rq2 = Wire( P )
    s.rq2_bin = Wire( P )
    s.w_full = Wire()
    s.w_fire = Wire()
    s.wbin_next = Wire( P )
    # read domain
    s.rbin = Wire( P )
    s.wq1 = Wire( P )
    s.wq2 = Wire( P )
    s.wq2_bin = Wire( P )
    s.r_empty = Wire()
    s.r_fire = Wire()
    s.rbin_next = Wire( P )

    @update
    def up_async_fifo_gray2bin():
      # b[i] = g[PW-1] ^ ... ^ g[i]
      s.rq2_bin @= s.rq2
      s.wq2_bin @= s.wq2
      for k in range( 1, PW ):
        s.rq2_bin @= s.rq2_bin ^ ( s.rq2 >> k )
        s.wq2_bin @= s.wq2_bin ^ ( s.wq2 >> k )

    @update
    def up_async_fifo_comb():
      s.w_level @= s.wbin - s.rq2_bin
      s.r_level @= s.wq2_bin - s.rbin
      s.w_full @= ( s.wbin - s.rq2_bin ) == DEPTH
      s.r_empty @= s.wq2_bin == s.rbin
      s.enq.rdy @= s.w_en & ~s.w_full
      s.deq.val @= s.r_en & ~s.r_empty
      s.deq.msg @= s.mem[ s.rbin[ 0:AW ] ]
      s.w_fire @= s.enq.val & s.w_en & ~s.w_full
      s.r_fire @= s.deq.rdy & s.r_en & ~s.r_empty
      s.wbin_next @= s.wbin + 1
      s.rbin_next @= s.rbin + 1

    @update_ff
    def up_async_fifo_write():
      if s.reset:
        s.wbin <<= 0
        s.wptr <<= 0
        s.rq1 <<= 0
        s.rq2 <<= 0
      elif s.w_en:
        s.rq1 <<= s.rptr
        s.rq2 <<= s.rq1
        if s.w_fire:
          s.mem[ s.wbin[ 0:AW ] ] <<= s.enq.msg
          s.wbin <<= s.wbin_next
          s.wptr <<= s.wbin_next ^ ( s.wbin_next >> 1 )

    @update_ff
    def up_async_fifo_read():
      if s.reset:
        s.rbin <<= 0
        s.rptr <<= 0
        s.wq1 <<= 0
        s.wq2 <<= 0
      elif s.r_en:
        s.wq1 <<= s.wptr
        s.wq2 <<= s.wq1
        if s.r_fire:
          s.rbin <<= s.rbin_next
          s.rptr <<= s.rbin_next ^ ( s.rbin_next >> 1 )

  def line_trace( s ):
    return f"{int( s.w_level )}/{int( s.r_level )}"
