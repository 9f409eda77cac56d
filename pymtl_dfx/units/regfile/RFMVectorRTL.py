"""The VPU side of the manager: one vector instruction at a time.

idle: vpu_inst.rdy.  busy: vpu_cmd once, vpu_a (src1 + k) and vpu_b
(src2 + k) as fast as the engine takes them, each vpu_out written at
dst + k; the cycle after all of them are through: done (vpu_done.val)
until taken, then idle.  Message counts are `vpu.streams`' (n_chunks,
n_b_msgs, n_out_msgs) in hardware: the opcode groups come from
the opcode enum as bit masks (`isa.formats.op_mask`) indexed by the opcode.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...isa.fields import ELEMS_BITS
from ...isa.formats import VectorInst, op_mask
from ..control.FootprintRTL import field
from ..control.msgs import DoneMsg, InstMsg
from ..vpu.msgs import BcastT, LenT, OpT, VPUCmd
from .RFStorageRTL import storage_types

IDLE, BUSY, DONE = range( 3 )


def slice_fields( s, fmt, names, word ):
  """Wires f_<name> carrying fields of the instruction word."""
  for name in names:
    lo, hi = field( fmt, name )
    w = Wire( hi - lo )
    setattr( s, f"f_{name}", w )
    w //= word[ lo:hi ]


class RFMVectorRTL( Component ):

  def construct( s, cfg ):
    Ent, _, _ = storage_types( cfg )
    AB = Ent.nbits
    LOGD = cfg.d.bit_length() - 1
    Cnt = mk_bits( ELEMS_BITS + 1 )
    State = mk_bits( 2 )
    DM1 = Cnt( cfg.d - 1 )

    s.inst = RecvIfcRTL( InstMsg )
    s.cmd  = SendIfcRTL( VPUCmd )
    s.done = SendIfcRTL( DoneMsg )
    s.a_val = OutPort();  s.a_rdy = InPort()
    s.b_val = OutPort();  s.b_rdy = InPort()
    s.out_val = InPort(); s.out_rdy = OutPort()
    s.a_addr = OutPort( Ent )
    s.b_addr = OutPort( Ent )
    s.w_addr = OutPort( Ent )
    s.w_en = OutPort()

    slice_fields( s, VectorInst, ( "op", "dst", "src1", "src2", "len", "bcast" ), s.inst.msg )
    s.binary = Wire( 1 << OpT.nbits )
    s.reduction = Wire( 1 << OpT.nbits )
    s.binary //= op_mask( "is_binary" )
    s.reduction //= op_mask( "is_reduction" )

    s.state = Wire( State )
    s.op = Wire( OpT );  s.len = Wire( LenT );  s.bcast = Wire( BcastT )
    s.dst = Wire( Ent ); s.src1 = Wire( Ent ); s.src2 = Wire( Ent )
    s.n_a = Wire( Cnt ); s.n_b = Wire( Cnt ); s.n_o = Wire( Cnt )
    s.a_cnt = Wire( Cnt ); s.b_cnt = Wire( Cnt ); s.o_cnt = Wire( Cnt )
    s.cmd_pend = Wire()
    s.busy = Wire()
    s.finish = Wire()
    s.chunks = Wire( Cnt )      # of the incoming instruction

    s.cmd.msg.op //= s.op
    s.cmd.msg.len //= s.len
    s.cmd.msg.bcast //= s.bcast
    s.done.msg //= DoneMsg( 1 )

    @update
    def up_vec_ctrl():
      s.busy @= s.state == BUSY
      s.inst.rdy @= s.state == IDLE
      s.cmd.val @= s.busy & s.cmd_pend
      s.a_val @= s.busy & ( s.a_cnt != s.n_a )
      s.b_val @= s.busy & ( s.b_cnt != s.n_b )
      s.out_rdy @= s.busy & ( s.o_cnt != s.n_o )
      s.done.val @= s.state == DONE
      s.a_addr @= s.src1 + s.a_cnt[ 0:AB ]
      s.b_addr @= s.src2 + s.b_cnt[ 0:AB ]
      s.w_addr @= s.dst + s.o_cnt[ 0:AB ]
      s.w_en @= s.out_val & s.out_rdy
      s.finish @= s.busy & ~s.cmd_pend & ( s.a_cnt == s.n_a ) & ( s.b_cnt == s.n_b ) \
                  & ( s.o_cnt == s.n_o )
      s.chunks @= ( zext( s.f_len, Cnt.nbits ) + DM1 ) >> LOGD

    @update_ff
    def up_vec_state():
      if s.reset:
        s.state <<= IDLE
        s.cmd_pend <<= 0
        s.a_cnt <<= 0
        s.b_cnt <<= 0
        s.o_cnt <<= 0
      elif s.state == IDLE:
        if s.inst.val:
          s.state <<= BUSY
          s.op <<= s.f_op
          s.len <<= s.f_len
          s.bcast <<= s.f_bcast
          s.dst <<= s.f_dst[ 0:AB ]
          s.src1 <<= s.f_src1[ 0:AB ]
          s.src2 <<= s.f_src2[ 0:AB ]
          s.n_a <<= s.chunks
          if s.binary[ s.f_op ]:
            if s.f_bcast:
              s.n_b <<= 1
            else:
              s.n_b <<= s.chunks
          else:
            s.n_b <<= 0
          if s.reduction[ s.f_op ]:
            s.n_o <<= 1
          else:
            s.n_o <<= s.chunks
          s.cmd_pend <<= 1
          s.a_cnt <<= 0
          s.b_cnt <<= 0
          s.o_cnt <<= 0
      elif s.state == BUSY:
        if s.cmd.val & s.cmd.rdy:
          s.cmd_pend <<= 0
        if s.a_val & s.a_rdy:
          s.a_cnt <<= s.a_cnt + 1
        if s.b_val & s.b_rdy:
          s.b_cnt <<= s.b_cnt + 1
        if s.out_val & s.out_rdy:
          s.o_cnt <<= s.o_cnt + 1
        if s.finish:
          s.state <<= DONE
      elif s.done.rdy:
        s.state <<= IDLE

  def line_trace( s ):
    return " VD"[ int( s.state ) ]
