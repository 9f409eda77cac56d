"""Register file manager at CL: `RegisterFileManagerRTL`'s control on Python
values, so every handshake happens in the RTL's cycle (tests assert it).
Storage is a `VectorRegisterFile`; messages come from the shared meaning
(`streams.py`, `vpu.streams`, `router.streams`, `mpu.streams.order_of` /
`finish_order`), one per handshake.  The rules (see the RTL's docstring):
every send port's val and every recv port's rdy depend only on state at the
start of the cycle (plus rf_rd_resp.rdy for rf_rd), and a fired handshake
changes state at the end of it."""

import numpy as np
from pymtl3 import *

from ...compiler.tiling import ceil_div
from ...isa import ComputeOp as C, PostOp
from ..control.decode_cache import decoded
from ..mpu.golden import to_fields
from ..mpu.streams import finish_order, mpu_cmd, order_of
from ..router.streams import RouterCmd, apply_writes, rd_messages
from ..vpu.msgs import vpu_cmd
from ..vpu.streams import n_b_msgs, n_chunks, n_out_msgs, to_msgs
from .ports import RFMError, check_rfm_params, declare_ports, matrix_error, vector_error
from .state import VectorRegisterFile
from .streams import entry_values, mpu_write_out, n_mpu_outs

F16 = np.float16
IDLE, BUSY, DONE = range( 3 )


def _hs( ifc ):
  if ifc.val and ifc.rdy:
    return "*"
  return "#" if ifc.val else "."


class _MatrixSlot:
  """One x buffer and the matrix instruction it belongs to."""

  def __init__( s, inst, op, cfg ):
    s.inst, s.op = inst, op
    s.cmd = mpu_cmd( inst, op )
    s.n_r = ceil_div( int( inst.rows ), cfg.d )
    s.order = [ r for r, _ in order_of( s.cmd, cfg ) ]
    s.finish = finish_order( s.cmd, cfg ) if op == C.CONV1D else []
    s.n_out = n_mpu_outs( inst, cfg )
    s.last_tile = ceil_div( int( inst.cols ), cfg.l ) - 1
    s.y_base = int( inst.dst ) + ( int( inst.post ) == PostOp.REDMAX )
    s.chain = int( inst.hdr.chain )
    s.x = []                      # the collected entries
    s.coll = s.started = s.strm = False


class RegisterFileManagerCL( Component ):

  def construct( s, cfg, core_id=0, cores=None ):
    cores = cfg.cores if cores is None else cores
    check_rfm_params( cfg, core_id, cores )
    T = declare_ports( s, cfg )
    d, l = cfg.d, cfg.l
    E = cfg.vreg_entries
    s.rf = VectorRegisterFile( E, d )

    def entry_msg( e ):
      return to_msgs( s.rf.mem[ e % E ][ None ], d )[0]

    def bias_msg( slot, k ):
      c = slot.finish[ k ]
      lo = int( slot.inst.bias ) * d + c * l
      flat = s.rf.mem.reshape( -1 )
      v = np.array( [ flat[ ( lo + j ) % flat.size ] if c * l + j < int( slot.inst.cols )
                      else F16( 0 ) for j in range( l ) ], F16 )
      return T["Bias"]( to_fields( v ) )

    def reset_state():
      s.rd_val, s.rd_addr = False, 0
      s.v_state, s.v = IDLE, None
      s.slots = [ None, None ]
      s.aptr = s.cptr = s.sptr = s.wptr = 0
      s.ccnt = s.xk = s.bk = s.ocnt = 0
      s.cmd_done = False
      s.r_busy, s.r = False, None

    reset_state()

    def mpu_views():
      cs, ss, ws = s.slots[ s.cptr ], s.slots[ s.sptr ], s.slots[ s.wptr ]
      older = s.slots[ s.wptr ] if s.wptr != s.cptr else None
      collecting = cs is not None and not cs.coll and not ( older is not None and older.chain )
      streaming = ss if ( ss is not None and ss.coll and not ss.strm ) else None
      writing = ws if ( ws is not None and ws.started ) else None
      return collecting, streaming, writing

    # the writes the manager always takes are constants, not part of the
    # port block: a unit whose own block reads this rdy and drives another
    # of our inputs (the DMA: rf_wr.rdy -> rf_rd_resp.rdy) can then be
    # scheduled before or after it
    s.rf_wr.rdy //= 1
    s.router_wr.rdy //= 1

    # rf_rd.rdy is the only output that depends on an input (rf_rd_resp.rdy:
    # the one-entry pipe frees as it drains), as at RTL; it has its own
    # block, so an RTL DMA, whose blocks read our vals and write that rdy,
    # forms no loop with the rest.  It is @update: pymtl3 may iterate it
    # inside a block-level cycle of RTL blocks, and it is a pure function.
    @update
    def up_rfm_cl_rd_rdy():
      s.rf_rd.rdy @= ( not s.rd_val ) or s.rf_rd_resp.rdy

    # every other output from state only (the block reads no port, so it is
    # in no cycle); the msg guards are the state, not the val ports
    @update_once
    def up_rfm_cl_ports():
      # DMA
      s.rf_rd_resp.val @= s.rd_val
      if s.rd_val:
        s.rf_rd_resp.msg @= entry_msg( s.rd_addr )
      # VPU
      v = s.v
      busy = s.v_state == BUSY
      s.vpu_inst.rdy @= s.v_state == IDLE
      cmd_val = busy and v.cmd_pend
      s.vpu_cmd.val @= cmd_val
      if cmd_val:
        s.vpu_cmd.msg @= v.cmd
      a_val = busy and v.a < v.n_a
      s.vpu_a.val @= a_val
      if a_val:
        s.vpu_a.msg @= entry_msg( v.src1 + v.a )
      b_val = busy and v.b < v.n_b
      s.vpu_b.val @= b_val
      if b_val:
        s.vpu_b.msg @= entry_msg( v.src2 + v.b )
      s.vpu_out.rdy @= busy and v.o < v.n_o
      s.vpu_done.val @= s.v_state == DONE
      s.vpu_done.msg @= 1
      # MPU
      _, st, wr = mpu_views()
      s.mpu_inst.rdy @= s.slots[ s.aptr ] is None
      cmd_val = st is not None and not s.cmd_done
      s.mpu_cmd.val @= cmd_val
      if cmd_val:
        s.mpu_cmd.msg @= st.cmd
      x_val = st is not None and s.xk < len( st.order )
      s.mpu_x.val @= x_val
      if x_val:
        s.mpu_x.msg @= st.x[ st.order[ s.xk ] ]
      bias_val = st is not None and s.bk < len( st.finish )
      s.mpu_bias.val @= bias_val
      if bias_val:
        s.mpu_bias.msg @= bias_msg( st, s.bk )
      s.mpu_out.rdy @= wr is not None and s.ocnt < wr.n_out
      s.mpu_done.val @= wr is not None and wr.strm and s.ocnt == wr.n_out
      s.mpu_done.msg @= 1
      # router
      r = s.r
      s.router_inst.rdy @= not s.r_busy
      cmd_val = s.r_busy and r.cmd_pend
      s.router_cmd.val @= cmd_val
      if cmd_val:
        s.router_cmd.msg @= r.cmd
      rd_val = s.r_busy and r.k < len( r.rd )
      s.router_rd.val @= rd_val
      if rd_val:
        s.router_rd.msg @= r.rd[ r.k ]

    @update_ff
    def up_rfm_cl_state():
      if s.reset:
        reset_state()
        return
      dma_step()
      vpu_step()
      mpu_step()
      router_step()

    def dma_step():
      if s.rf_wr.val & s.rf_wr.rdy:
        s.rf.mem[ int( s.rf_wr.msg.entry ) % E ] = entry_values( s.rf_wr.msg.data )
      if s.rf_rd.val & s.rf_rd.rdy:
        s.rd_val, s.rd_addr = True, int( s.rf_rd.msg )
      elif s.rf_rd_resp.val & s.rf_rd_resp.rdy:
        s.rd_val = False

    def vpu_step():
      v = s.v
      if s.v_state == BUSY:
        finish = not v.cmd_pend and v.a == v.n_a and v.b == v.n_b and v.o == v.n_o
        if s.vpu_cmd.val & s.vpu_cmd.rdy:
          v.cmd_pend = False
        if s.vpu_a.val & s.vpu_a.rdy:
          v.a += 1
        if s.vpu_b.val & s.vpu_b.rdy:
          v.b += 1
        if s.vpu_out.val & s.vpu_out.rdy:
          s.rf.mem[ ( v.dst + v.o ) % E ] = entry_values( s.vpu_out.msg.v )
          v.o += 1
        if finish:
          s.v_state = DONE
      elif s.v_state == DONE:
        if s.vpu_done.rdy:
          s.v_state = IDLE
      elif s.vpu_inst.val:
        inst, op, _ = decoded( int( s.vpu_inst.msg ) )
        why = vector_error( inst )
        if why:
          raise RFMError( f"vpu_inst {op.mnemonic}: {why}" )
        n = int( inst.len )
        s.v = _Progress( cmd=vpu_cmd( inst ), src1=int( inst.src1 ), src2=int( inst.src2 ),
                       dst=int( inst.dst ), n_a=n_chunks( n, d ),
                       n_b=n_b_msgs( op, n, int( inst.bcast ), d ), n_o=n_out_msgs( op, n, d ) )
        s.v_state = BUSY

    def mpu_step():
      co, st, wr = mpu_views()
      if co:
        cs = s.slots[ s.cptr ]
        cs.x.append( T["X"]( to_fields( s.rf.mem[ ( int( cs.inst.src1 ) + s.ccnt ) % E ] ) ) )
        if s.ccnt == cs.n_r - 1:
          cs.coll, s.ccnt, s.cptr = True, 0, s.cptr ^ 1
        else:
          s.ccnt += 1
      if st is not None:
        finish = s.cmd_done and s.xk == len( st.order ) and s.bk == len( st.finish )
        if s.mpu_cmd.val & s.mpu_cmd.rdy:
          s.cmd_done = st.started = True
        if s.mpu_x.val & s.mpu_x.rdy:
          s.xk += 1
        if s.mpu_bias.val & s.mpu_bias.rdy:
          s.bk += 1
        if finish:
          st.strm = True
          s.sptr ^= 1
          s.cmd_done, s.xk, s.bk = False, 0, 0
      if wr is not None:
        if s.mpu_out.val & s.mpu_out.rdy:
          mpu_write_out( s.mpu_out.msg, wr.y_base, wr.last_tile, s.rf, cfg )
          s.ocnt += 1
        elif s.mpu_done.val & s.mpu_done.rdy:
          s.slots[ s.wptr ] = None
          s.ocnt, s.wptr = 0, s.wptr ^ 1
      if s.mpu_inst.val & s.mpu_inst.rdy:
        inst, op, _ = decoded( int( s.mpu_inst.msg ) )
        why = matrix_error( inst, cfg )
        if why:
          raise RFMError( f"mpu_inst {op.mnemonic}: {why}" )
        s.slots[ s.aptr ] = _MatrixSlot( inst, op, cfg )
        s.aptr ^= 1

    def router_step():
      if s.router_wr.val & s.router_wr.rdy:
        apply_writes( _Wrapped( s.rf ), [ s.router_wr.msg ] )
      r = s.r
      if s.r_busy:
        finish = not r.cmd_pend and r.k == len( r.rd )
        if s.router_cmd.val & s.router_cmd.rdy:
          r.cmd_pend = False
        if s.router_rd.val & s.router_rd.rdy:
          r.k += 1
        if finish:
          s.r_busy = False
      elif s.router_inst.val:
        inst, _, _ = decoded( int( s.router_inst.msg ) )
        base, n = int( inst.rf ), int( inst.len )
        s.r = _Progress( cmd=RouterCmd( base, n ), cmd_pend=True, k=0,
                       rd=rd_messages( cfg, s.rf, base, n, core_id, cores ) )
        s.r_busy = True

  def line_trace( s ):
    v = "VD"[ s.v_state - 1 ] if s.v_state else " "
    slots = "".join( "." if x is None else ( "s" if x.coll else "c" ) for x in s.slots )
    return ( f"{_hs( s.vpu_a )}{_hs( s.vpu_out )}({v}{slots}{'R' if s.r_busy else ' '})"
             f"{_hs( s.mpu_x )}{_hs( s.mpu_out )}" )


class _Progress:
  """A VPU instruction's (or a sync's) progress."""

  def __init__( s, **kw ):
    s.cmd_pend, s.a, s.b, s.o = True, 0, 0, 0
    s.__dict__.update( kw )


class _Wrapped:
  """`apply_writes` on a register file, addresses wrapping like the RTL's."""

  def __init__( s, rf ):
    s.rf = rf

  def write_elements( s, entry, offset, values ):
    flat = s.rf.mem.reshape( -1 )
    for k, v in enumerate( values ):
      flat[ ( entry * s.rf.d + offset + k ) % flat.size ] = v
