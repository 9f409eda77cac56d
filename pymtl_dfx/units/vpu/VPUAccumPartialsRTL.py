"""The VPU's chunk accumulator with P interleaved partials
(`DFXConfig.reduce_partials` = P > 1; `numerics.reduce_sum`'s order).

One adder pipe (and one comparator beside it) and P partial registers.
Chunk i of an instruction goes into partial i mod P: while i < P it is
combined with the identity (-0 for a sum, -inf for a max), later with the
partial's value, so it enters when that partial's previous combination
leaves the pipe (forwarded in the cycle it leaves): a chunk a cycle once P
>= the pipe's latency.  After the last chunk the live partials (min(C, P)
of them, the first ones) are combined pairwise through the same pipe, level
by level in order: partial 2j x stride takes partial (2j + 1) x stride; an
odd one out passes to the next level unchanged, which equals combining it
with an unused partial's identity (exact).  The final combination (or the
only chunk, when there is one) carries `last` and leaves on `send` instead
of being written back; the next instruction's first chunk may follow it
into the pipe.  `VPUTiming` states the same rule on Python values.
"""

from pymtl3 import *
from pymtl3.stdlib.basic_rtl import RegEn, RegRst
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...lib.pipeline import StallPipeRTL
from ...numerics.fp16 import NEG_INF
from ..fpu.FP16AddComb import FP16AddComb
from ..fpu.FP16MaxComb import FP16MaxComb
from .msgs import FP16, VPUTreeMsg

NEG_ZERO = 0x8000


def mk_partial_msg( partials ):
  SlotT = mk_bits( partials.bit_length() - 1 )
  return mk_bitstruct( f"VPUPartialMsg_{partials}", { "v": FP16, "slot": SlotT, "last": Bits1 } )


class VPUAccumPartialsRTL( Component ):

  def construct( s, latency, partials ):
    P = partials
    if P < 2 or P & ( P - 1 ):
      raise ValueError( f"VPUAccumPartialsRTL: partials={P} must be a power of two >= 2" )
    Msg = mk_partial_msg( P )
    SlotT = mk_bits( P.bit_length() - 1 )
    LiveT = mk_bits( P.bit_length() )       # live partials: up to P
    PendT = mk_bits( P )

    s.recv = RecvIfcRTL( VPUTreeMsg )
    s.send = SendIfcRTL( FP16 )

    s.pipe = StallPipeRTL( Msg, latency )
    s.part = [ RegEn( FP16 ) for _ in range( P ) ]
    s.pending = RegRst( PendT )         # the partial has a combination in the pipe
    s.add = FP16AddComb()
    s.max = FP16MaxComb()

    s.slot_r      = RegRst( SlotT )     # the next (non-first) chunk's partial
    s.wrapped_r   = RegRst( Bits1 )     # every partial holds a chunk
    s.is_max_r    = RegRst( Bits1 )
    s.combining_r = RegRst( Bits1 )
    s.pa_r        = RegRst( SlotT )     # the combine pass's first partial
    s.pair_r      = RegRst( SlotT )     # the pass's pair within its level
    s.stride_r    = RegRst( SlotT )     # its distance to the second
    s.live_r      = RegRst( LiveT )     # live partials at this level

    s.write   = Wire()                  # the pipe's head is written back
    s.wslot   = Wire( SlotT )
    s.ready   = Wire( PendT )           # the partial's value is there (or leaves now)
    s.val     = [ Wire( FP16 ) for _ in range( P ) ]
    s.cslot   = Wire( SlotT )           # the arriving chunk's partial
    s.ident   = Wire()                  # it combines with the identity
    s.pb      = Wire( SlotT )
    s.chunk_in = Wire()
    s.pass_in = Wire()
    s.last_op   = Wire()
    s.sel_max = Wire()
    s.op_a    = Wire( FP16 )
    s.op_b    = Wire( FP16 )
    s.enter   = Wire()
    s.dest    = Wire( SlotT )

    s.add.sub //= 0
    s.add.a //= s.op_a
    s.add.b //= s.op_b
    s.max.a //= s.op_a
    s.max.b //= s.op_b
    s.send.msg //= s.pipe.send.msg.v
    for i in range( P ):
      s.part[i].in_ //= s.pipe.send.msg.v

    @update
    def up_partials_leave():
      s.pipe.send.rdy @= ~s.pipe.send.msg.last | s.send.rdy
      s.send.val @= s.pipe.send.val & s.pipe.send.msg.last
      s.write @= s.pipe.send.val & s.pipe.send.rdy & ~s.pipe.send.msg.last
      s.wslot @= s.pipe.send.msg.slot
      for i in range( P ):
        s.part[i].en @= s.write & ( s.wslot == i )
        s.ready[i] @= ~s.pending.out[i] | ( s.write & ( s.wslot == i ) )
        if s.write & ( s.wslot == i ):
          s.val[i] @= s.pipe.send.msg.v
        else:
          s.val[i] @= s.part[i].out

    @update
    def up_partials_issue():
      if s.recv.msg.first:
        s.cslot @= 0
      else:
        s.cslot @= s.slot_r.out
      s.ident @= s.recv.msg.first | ~s.wrapped_r.out
      s.pb @= s.pa_r.out + s.stride_r.out
      s.recv.rdy @= ~s.combining_r.out & s.pipe.recv.rdy & ( s.ident | s.ready[ s.cslot ] )
      s.chunk_in @= s.recv.val & s.recv.rdy
      s.pass_in @= s.combining_r.out & s.pipe.recv.rdy & s.ready[ s.pa_r.out ] & s.ready[ s.pb ]
      s.enter @= s.chunk_in | s.pass_in
      s.pipe.recv.val @= s.enter

    # the operands in their own block, the adder's result in another: one
    # block reading the adder's output and writing its inputs is a
    # combinational loop to Verilator (UNOPTFLAT)
    @update
    def up_partials_operands():
      if s.combining_r.out:
        s.last_op @= s.live_r.out == 2
        s.sel_max @= s.is_max_r.out
        s.dest @= s.pa_r.out
        s.op_a @= s.val[ s.pa_r.out ]
        s.op_b @= s.val[ s.pb ]
      else:
        s.last_op @= s.recv.msg.first & s.recv.msg.last
        s.sel_max @= s.recv.msg.is_max
        s.dest @= s.cslot
        if ~s.ident:
          s.op_a @= s.val[ s.cslot ]
        elif s.recv.msg.is_max:
          s.op_a @= NEG_INF
        else:
          s.op_a @= NEG_ZERO
        s.op_b @= s.recv.msg.v
      s.pipe.recv.msg.slot @= s.dest
      s.pipe.recv.msg.last @= s.last_op

    @update
    def up_partials_result():
      if s.sel_max:
        s.pipe.recv.msg.v @= s.max.out
      else:
        s.pipe.recv.msg.v @= s.add.out

    @update
    def up_partials_next():
      for i in range( P ):
        s.pending.in_[i] @= ( s.pending.out[i] & ~( s.write & ( s.wslot == i ) ) ) \
                            | ( s.enter & ~s.last_op & ( s.dest == i ) )
      # the chunk counter
      s.slot_r.in_ @= s.slot_r.out
      s.wrapped_r.in_ @= s.wrapped_r.out
      s.is_max_r.in_ @= s.is_max_r.out
      if s.chunk_in:
        s.slot_r.in_ @= s.cslot + 1
        s.wrapped_r.in_ @= ( s.wrapped_r.out & ~s.recv.msg.first ) | ( s.cslot == P - 1 )
        s.is_max_r.in_ @= s.recv.msg.is_max
      # the combine passes
      s.combining_r.in_ @= s.combining_r.out
      s.pa_r.in_ @= s.pa_r.out
      s.pair_r.in_ @= s.pair_r.out
      s.stride_r.in_ @= s.stride_r.out
      s.live_r.in_ @= s.live_r.out
      if s.chunk_in & s.recv.msg.last & ~s.recv.msg.first:
        s.combining_r.in_ @= 1
        s.pa_r.in_ @= 0
        s.pair_r.in_ @= 0
        s.stride_r.in_ @= 1
        if s.wrapped_r.out:
          s.live_r.in_ @= P
        else:
          s.live_r.in_ @= zext( s.cslot, LiveT ) + 1
      elif s.pass_in:
        if ( zext( s.pair_r.out, LiveT ) + 1 ) == ( s.live_r.out >> 1 ):   # the level's last pair
          s.live_r.in_ @= ( s.live_r.out + 1 ) >> 1
          s.stride_r.in_ @= s.stride_r.out << 1
          s.pa_r.in_ @= 0
          s.pair_r.in_ @= 0
          s.combining_r.in_ @= ~s.last_op
        else:
          s.pa_r.in_ @= s.pa_r.out + ( s.stride_r.out << 1 )
          s.pair_r.in_ @= s.pair_r.out + 1

  def line_trace( s ):
    return f"acc{'c' if s.combining_r.out else 'a'}({s.pipe.line_trace()})"
