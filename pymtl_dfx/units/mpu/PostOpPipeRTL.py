"""The MPU's post-ops as separately pipelined stages, each passed only by a
command that uses it (`DFXConfig.mpu_post_bypass` = 1):

  add   the bias adder (`fp_add_latency`): CONV1D
  mul   the scale multiplier, then the causal mask (`fp_mul_latency`): MASKEDMM
  gelu  the GELU table (`fp_gelu_latency`): post-op GELU
  hold  one register: a command that uses none of the three

A finished tile enters the first stage its command uses and leaves the last
one; a skipped stage takes no tile (its registers stay empty), so the depth
is the sum of the stages passed, `timing.post_latency`.  The
stages share one stall, as one `StallPipeRTL` of that depth does (as DFX
chains its DSP operators, every register's enable is the downstream ready):
all registers advance when the last passed stage's last register is empty
or the output takes it, so the CL models it as one `StallPipeCL` of the
command's depth.  The engine takes a command only when the previous one's
last tile has left, so the stages passed do not change under a tile.

The causal mask and the +0 past the matrix's last column are selects, no
stage: the mask rides with the multiplier that every MASKEDMM passes, the
zeros are chosen at the output.  Values are those of `PostOpComb`, whose
unused operators are exact identities (-0 added, x1.0).
"""

from pymtl3 import *
from pymtl3.stdlib.basic_rtl import RegEn, RegEnRst
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...isa import ComputeOp as C, PostOp
from ...isa.fields import OPCODE_BITS, POST_BITS
from ..fpu.FP16AddComb import FP16AddComb
from ..fpu.FP16GeluComb import FP16GeluComb
from ..fpu.FP16MulComb import FP16MulComb
from .msgs import FP16, Elems

NEG_INF = 0xFC00
ADD, MUL, GELU, HOLD = range( 4 )


class PostOpPipeRTL( Component ):

  def construct( s, cfg, Post ):
    l = cfg.l
    if l < 1 or l & ( l - 1 ):
      raise ValueError( f"PostOpPipeRTL: l={l} must be a power of two" )
    log2_l = l.bit_length() - 1

    s.recv  = RecvIfcRTL( Post )     # a finished tile: its accumulated sums
    s.send  = SendIfcRTL( Post )
    s.bias  = [ InPort( FP16 ) for _ in range( l ) ]
    s.op    = InPort( mk_bits( OPCODE_BITS ) )
    s.post  = InPort( mk_bits( POST_BITS ) )
    s.scale = InPort( FP16 )
    s.mask  = InPort( Elems )
    s.cols  = InPort( Elems )

    # the stages' registers in one list, stage after stage: stage k is
    # registers first[k] .. last[k] (instances, as in StallPipeRTL)
    lat = [ cfg.fp_add_latency, cfg.fp_mul_latency, cfg.fp_gelu_latency, 1 ]
    first = [ sum( lat[:k] ) for k in range( 4 ) ]
    last = [ first[k] + lat[k] - 1 for k in range( 4 ) ]
    s._lat = lat
    L_ADD, L_MUL, L_GELU, L_HOLD = last     # ints, for the update blocks
    s.valid = [ RegEnRst( Bits1 ) for _ in range( sum( lat ) ) ]
    s.data  = [ RegEn( Post ) for _ in range( sum( lat ) ) ]
    s.on      = [ Wire() for _ in range( 4 ) ]       # the command passes stage k
    s.in_val  = [ Wire() for _ in range( 4 ) ]       # what reaches stage k
    s.in_msg  = [ Wire( Post ) for _ in range( 4 ) ]
    s.res     = [ Wire( Post ) for _ in range( 4 ) ]  # stage k's operator on it
    s.out_val = Wire()
    s.out_msg = Wire( Post )
    s.advance = Wire()

    for k in range( 4 ):
      s.valid[ first[k] ].in_ //= s.in_val[k]
      s.data[ first[k] ].in_ //= s.res[k]
      for i in range( first[k] + 1, last[k] + 1 ):
        s.valid[i].in_ //= s.valid[i-1].out
        s.data[i].in_ //= s.data[i-1].out
    for i in range( sum( lat ) ):
      s.valid[i].en //= s.advance
      s.data[i].en //= s.advance

    s.add  = [ FP16AddComb() for _ in range( l ) ]
    s.mul  = [ FP16MulComb() for _ in range( l ) ]
    s.gelu = [ FP16GeluComb() for _ in range( l ) ]
    s.col  = [ Wire( Elems ) for _ in range( l ) ]
    for j in range( l ):
      s.add[j].sub //= 0
      s.add[j].a //= s.in_msg[ADD].v[j]
      s.add[j].b //= s.bias[j]
      s.mul[j].a //= s.in_msg[MUL].v[j]
      s.mul[j].b //= s.scale
      s.gelu[j].a //= s.in_msg[GELU].v[j]

    @update
    def up_post_stages_on():
      s.on[ADD] @= s.op == C.CONV1D
      s.on[MUL] @= s.op == C.MASKEDMM
      s.on[GELU] @= s.post == PostOp.GELU
      s.on[HOLD] @= ~( s.on[ADD] | s.on[MUL] | s.on[GELU] )

    # a stage takes the tile from the last passed stage before it, else from
    # the input; a skipped stage takes nothing
    @update
    def up_post_stages_in():
      s.in_msg[ADD] @= s.recv.msg
      s.in_val[ADD] @= s.recv.val & s.on[ADD]
      if s.on[ADD]:
        s.in_msg[MUL] @= s.data[ L_ADD ].out
        s.in_val[MUL] @= s.valid[ L_ADD ].out & s.on[MUL]
      else:
        s.in_msg[MUL] @= s.recv.msg
        s.in_val[MUL] @= s.recv.val & s.on[MUL]
      if s.on[MUL]:
        s.in_msg[GELU] @= s.data[ L_MUL ].out
        s.in_val[GELU] @= s.valid[ L_MUL ].out & s.on[GELU]
      elif s.on[ADD]:
        s.in_msg[GELU] @= s.data[ L_ADD ].out
        s.in_val[GELU] @= s.valid[ L_ADD ].out & s.on[GELU]
      else:
        s.in_msg[GELU] @= s.recv.msg
        s.in_val[GELU] @= s.recv.val & s.on[GELU]
      s.in_msg[HOLD] @= s.recv.msg
      s.in_val[HOLD] @= s.recv.val & s.on[HOLD]

    # the operators' results, in a block apart from their operands (the
    # GELU's input and output in one always_comb would be a loop to Verilator)
    @update
    def up_post_stages_res():
      for k in range( 4 ):
        s.res[k].tile @= s.in_msg[k].tile
      for j in range( l ):
        s.col[j] @= ( s.in_msg[MUL].tile << log2_l ) + j
        s.res[ADD].v[j] @= s.add[j].out
        if s.col[j] >= s.mask:
          s.res[MUL].v[j] @= FP16( NEG_INF )
        else:
          s.res[MUL].v[j] @= s.mul[j].out
        s.res[GELU].v[j] @= s.gelu[j].out
        s.res[HOLD].v[j] @= s.in_msg[HOLD].v[j]

    # the output: the last passed stage's last register (never the input,
    # so recv.rdy does not depend on recv.val), lanes past cols as +0
    @update
    def up_post_stages_out():
      if s.on[HOLD]:
        s.out_val @= s.valid[ L_HOLD ].out
        s.out_msg @= s.data[ L_HOLD ].out
      elif s.on[GELU]:
        s.out_val @= s.valid[ L_GELU ].out
        s.out_msg @= s.data[ L_GELU ].out
      elif s.on[MUL]:
        s.out_val @= s.valid[ L_MUL ].out
        s.out_msg @= s.data[ L_MUL ].out
      else:
        s.out_val @= s.valid[ L_ADD ].out
        s.out_msg @= s.data[ L_ADD ].out

    @update
    def up_post_stages_send():
      s.advance @= ~s.out_val | s.send.rdy
      s.recv.rdy @= s.advance
      s.send.val @= s.out_val
      s.send.msg.tile @= s.out_msg.tile
      for j in range( l ):
        if ( ( s.out_msg.tile << log2_l ) + j ) >= s.cols:
          s.send.msg.v[j] @= 0
        else:
          s.send.msg.v[j] @= s.out_msg.v[j]

  def line_trace( s ):
    marks, i = [], 0
    for n in s._lat:
      marks.append( "".join( "*" if v.out else "." for v in s.valid[ i:i + n ] ) )
      i += n
    return ":".join( marks )
