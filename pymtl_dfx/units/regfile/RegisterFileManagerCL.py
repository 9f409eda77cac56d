"""Register file manager at CL: `RegisterFileManagerRTL`'s control on Python
values, so every handshake happens in the RTL's cycle (tests assert it).
Storage is a `VectorRegisterFile`; messages come from the shared meaning
(`streams.py`, `vpu.streams`, `router.streams`, `mpu.streams.order_of` /
`finish_order`), one per handshake.  The rules (see the RTL's docstring):
every send port's val and every recv port's rdy depend only on state at the
start of the cycle (plus rf_rd_resp.rdy for rf_rd), and a fired handshake
changes state at the end of it.  The control is `timing.RFMTiming` (shared
with `pymtl_dfx.perf`); this model moves the values around it."""

import numpy as np
from pymtl3 import *

from ...lib.arith import ceil_div
from ...isa import ComputeOp as C, PostOp
from ..control.decode_cache import decoded
from ..mpu.golden import to_fields
from ..mpu.streams import finish_order, mpu_cmd, order_of
from ..router.streams import RouterCmd, apply_writes, rd_messages
from ..vpu.msgs import vpu_cmd
from ..vpu.streams import to_msgs
from .ports import RFMError, check_rfm_params, declare_ports, matrix_error, vector_error
from .state import VectorRegisterFile
from .timing import RFMTiming
from .streams import entry_values, mpu_write_out

F16 = np.float16


def _hs( ifc ):
  if ifc.val and ifc.rdy:
    return "*"
  return "#" if ifc.val else "."


class RegisterFileManagerCL( Component ):

  def construct( s, cfg, core_id=0, cores=None ):
    cores = cfg.cores if cores is None else cores
    check_rfm_params( cfg, core_id, cores )
    T = declare_ports( s, cfg )
    d, l = cfg.d, cfg.l
    E = cfg.vreg_entries
    s.rf = VectorRegisterFile( E, d )
    s.t = t = RFMTiming( cfg, cores )

    def entry_msg( e ):
      return to_msgs( s.rf.mem[ e % E ][ None ], d )[0]

    def bias_msg( slot, k ):
      c = slot.finish[ k ]
      lo = int( slot.inst.bias ) * d + c * l
      flat = s.rf.mem.reshape( -1 )
      v = np.array( [ flat[ ( lo + j ) % flat.size ] if c * l + j < int( slot.inst.cols )
                      else F16( 0 ) for j in range( l ) ], F16 )
      return T["Bias"]( to_fields( v ) )

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
      s.rf_rd.rdy @= t.rf_rd_rdy( s.rf_rd_resp.rdy )

    # every other output from state only (the block reads no port, so it is
    # in no cycle); the msg guards are the state, not the val ports.  The
    # timing is `timing.RFMTiming` (shared with `pymtl_dfx.perf`).
    @update_once
    def up_rfm_cl_ports():
      # DMA
      s.rf_rd_resp.val @= t.rd_val
      if t.rd_val:
        s.rf_rd_resp.msg @= entry_msg( t.rd_addr )
      # VPU
      v = t.v
      s.vpu_inst.rdy @= t.vpu_inst_rdy()
      cmd_val = t.vpu_cmd_val()
      s.vpu_cmd.val @= cmd_val
      if cmd_val:
        s.vpu_cmd.msg @= v.cmd
      a_val = t.vpu_a_val()
      s.vpu_a.val @= a_val
      if a_val:
        s.vpu_a.msg @= entry_msg( v.src1 + v.a )
      b_val = t.vpu_b_val()
      s.vpu_b.val @= b_val
      if b_val:
        s.vpu_b.msg @= entry_msg( v.src2 + v.b )
      s.vpu_out.rdy @= t.vpu_out_rdy()
      s.vpu_done.val @= t.vpu_done_val()
      s.vpu_done.msg @= 1
      # MPU
      _, st, wr = t.mpu_views()
      s.mpu_inst.rdy @= t.mpu_inst_rdy()
      cmd_val = t.mpu_cmd_val( st )
      s.mpu_cmd.val @= cmd_val
      if cmd_val:
        s.mpu_cmd.msg @= st.cmd
      x_val = t.mpu_x_val( st )
      s.mpu_x.val @= x_val
      if x_val:
        s.mpu_x.msg @= st.x[ st.order[ t.xk ] ]
      bias_val = t.mpu_bias_val( st )
      s.mpu_bias.val @= bias_val
      if bias_val:
        s.mpu_bias.msg @= bias_msg( st, t.bk )
      s.mpu_out.rdy @= t.mpu_out_rdy( wr )
      s.mpu_done.val @= t.mpu_done_val( wr )
      s.mpu_done.msg @= 1
      # router
      r = t.r
      s.router_inst.rdy @= t.router_inst_rdy()
      cmd_val = t.router_cmd_val()
      s.router_cmd.val @= cmd_val
      if cmd_val:
        s.router_cmd.msg @= r.cmd
      rd_val = t.router_rd_val()
      s.router_rd.val @= rd_val
      if rd_val:
        s.router_rd.msg @= r.rd[ r.k ]

    @update_ff
    def up_rfm_cl_state():
      if s.reset:
        t.reset()
        return
      dma_step()
      vpu_step()
      mpu_step()
      router_step()

    def dma_step():
      if s.rf_wr.val & s.rf_wr.rdy:
        s.rf.mem[ int( s.rf_wr.msg.entry ) % E ] = entry_values( s.rf_wr.msg.data )
      t.dma_step( s.rf_rd.val & s.rf_rd.rdy, s.rf_rd.msg, s.rf_rd_resp.val & s.rf_rd_resp.rdy )

    def vpu_step():
      v = t.v
      out_fire = t.vpu_busy() and s.vpu_out.val & s.vpu_out.rdy
      if out_fire:
        s.rf.mem[ ( v.dst + v.o ) % E ] = entry_values( s.vpu_out.msg.v )
      word = None
      if t.vpu_inst_rdy() and s.vpu_inst.val:
        word = int( s.vpu_inst.msg )
        inst, op, _ = decoded( word )
        why = vector_error( inst, cfg.d, cfg )
        if why:
          raise RFMError( f"vpu_inst {op.mnemonic}: {why}" )
      new = t.vpu_step( s.vpu_cmd.val & s.vpu_cmd.rdy, s.vpu_a.val & s.vpu_a.rdy,
                        s.vpu_b.val & s.vpu_b.rdy, out_fire, s.vpu_done.rdy, word )
      if new is not None:
        inst = new.inst
        new.cmd = vpu_cmd( inst )
        new.src1, new.src2, new.dst = int( inst.src1 ), int( inst.src2 ), int( inst.dst )

    def mpu_step():
      views = co, st, wr = t.mpu_views()
      if co:
        cs = t.slots[ t.cptr ]
        cs.x.append( T["X"]( to_fields( s.rf.mem[ ( int( cs.inst.src1 ) + t.ccnt ) % E ] ) ) )
      out_fire = wr is not None and s.mpu_out.val & s.mpu_out.rdy
      if out_fire:
        mpu_write_out( s.mpu_out.msg, wr.y_base, wr.last_tile, s.rf, cfg )
      word = None
      if s.mpu_inst.val & s.mpu_inst.rdy:
        word = int( s.mpu_inst.msg )
        inst, op, _ = decoded( word )
        why = matrix_error( inst, cfg )
        if why:
          raise RFMError( f"mpu_inst {op.mnemonic}: {why}" )
      new = t.mpu_step( views, s.mpu_cmd.val & s.mpu_cmd.rdy, s.mpu_x.val & s.mpu_x.rdy,
                        s.mpu_bias.val & s.mpu_bias.rdy, out_fire, s.mpu_done.rdy, word )
      if new is not None:
        inst, op = new.inst, new.op
        new.cmd = mpu_cmd( inst, op )
        new.order = [ r for r, _ in order_of( new.cmd, cfg ) ]
        new.finish = finish_order( new.cmd, cfg ) if op == C.CONV1D else []
        new.last_tile = ceil_div( int( inst.cols ), cfg.l ) - 1
        new.y_base = int( inst.dst ) + ( int( inst.post ) == PostOp.REDMAX )
        new.x = []                      # the collected entries

    def router_step():
      if s.router_wr.val & s.router_wr.rdy:
        apply_writes( _Wrapped( s.rf ), [ s.router_wr.msg ] )
      word = int( s.router_inst.msg ) if t.router_inst_rdy() and s.router_inst.val else None
      new = t.router_step( s.router_cmd.val & s.router_cmd.rdy,
                           s.router_rd.val & s.router_rd.rdy, word )
      if new is not None:
        new.cmd = RouterCmd( new.base, new.n )
        new.rd = rd_messages( cfg, s.rf, new.base, new.n, int( s.core_id ), cores )

  def line_trace( s ):
    t = s.t
    v = "VD"[ t.v_state - 1 ] if t.v_state else " "
    slots = "".join( "." if x is None else ( "s" if x.coll else "c" ) for x in t.slots )
    return ( f"{_hs( s.vpu_a )}{_hs( s.vpu_out )}({v}{slots}{'R' if t.r_busy else ' '})"
             f"{_hs( s.mpu_x )}{_hs( s.mpu_out )}" )


class _Wrapped:
  """`apply_writes` on a register file, addresses wrapping like the RTL's."""

  def __init__( s, rf ):
    s.rf = rf

  def write_elements( s, entry, offset, values ):
    flat = s.rf.mem.reshape( -1 )
    for k, v in enumerate( values ):
      flat[ ( entry * s.rf.d + offset + k ) % flat.size ] = v
