"""Register file manager at FL behind the stream boundary of `ports.py`:
untimed, one instruction per engine at a time, every request message built
when the instruction is taken (`streams.mpu_requests`,
`vpu.streams.request_streams`, `router.streams.rd_messages`), the results
written when the last out message is in.  (The core's FL units use
`RegisterFileFunc.rf` directly instead.)"""

from collections import deque

from pymtl3 import *

from ..control.decode_cache import decoded
from ..router.streams import apply_writes, rd_messages, router_cmd
from ..vpu.streams import n_out_msgs, request_streams, to_msgs, write_back
from .ports import RFMError, check_rfm_params, declare_ports, matrix_error, vector_error
from .state import VectorRegisterFile
from .streams import entry_values, mpu_requests, mpu_write_back, n_mpu_outs


def _clone( msg ):
  return msg.clone()   # the net's value object is reused next cycle


class _Job:
  """One instruction in flight on an engine: its request queues, the out
  messages still due and the write-back to do with them."""

  def __init__( s, queues, n_out, finish ):
    s.q = { k: deque( v ) for k, v in queues.items() }
    s.n_out, s.outs, s.finish = n_out, [], finish

  def sent( s ):
    return not any( s.q.values() )


class RegisterFileManagerFL( Component ):

  def construct( s, cfg, core_id=0, cores=None ):
    cores = cfg.cores if cores is None else cores
    check_rfm_params( cfg, core_id, cores )
    declare_ports( s, cfg )
    s.rf = VectorRegisterFile( cfg.vreg_entries, cfg.d )

    def vpu_job( word ):
      inst, op, _ = decoded( int( word ) )
      why = vector_error( inst, cfg.d, cfg )
      if why:
        raise RFMError( f"vpu_inst {op.mnemonic}: {why}" )
      cmd, a, b = request_streams( inst, s.rf )
      return _Job( { "cmd": cmd, "a": a, "b": b }, n_out_msgs( op, inst.len, cfg.d ),
                   lambda outs: write_back( inst, outs, s.rf ) )

    def mpu_job( word ):
      inst, op, _ = decoded( int( word ) )
      why = matrix_error( inst, cfg )
      if why:
        raise RFMError( f"mpu_inst {op.mnemonic}: {why}" )
      cmd, x, bias = mpu_requests( inst, op, s.rf, cfg )
      return _Job( { "cmd": [ cmd ], "x": x, "bias": bias }, n_mpu_outs( inst, cfg ),
                   lambda outs: mpu_write_back( inst, cmd, outs, s.rf, cfg ) )

    def reset_state():
      s.resp = deque()
      s.jobs = { "vpu": None, "mpu": None }
      s.done = { "vpu": False, "mpu": False }
      s.router = deque(), deque()

    reset_state()

    # always ready, as at CL and RTL: constants, outside the port block
    s.rf_wr.rdy //= 1
    s.router_wr.rdy //= 1

    # every output from state only; the msg guards test the state, not our
    # own val ports (a block reading a port could sit in a block-level cycle
    # with an RTL neighbour)
    @update_once
    def up_rfm_fl_ports():
      s.rf_rd.rdy @= not s.resp
      s.rf_rd_resp.val @= bool( s.resp )
      if s.resp:
        s.rf_rd_resp.msg @= s.resp[0]
      # every port written by name: pymtl3 finds a block's writers in its source,
      # so writes through getattr or a helper would leave the ports undriven
      v, m = s.jobs["vpu"], s.jobs["mpu"]
      s.vpu_inst.rdy @= v is None and not s.done["vpu"]
      s.vpu_cmd.val @= bool( v and v.q["cmd"] )
      if v and v.q["cmd"]:
        s.vpu_cmd.msg @= v.q["cmd"][0]
      s.vpu_a.val @= bool( v and v.q["a"] )
      if v and v.q["a"]:
        s.vpu_a.msg @= v.q["a"][0]
      s.vpu_b.val @= bool( v and v.q["b"] )
      if v and v.q["b"]:
        s.vpu_b.msg @= v.q["b"][0]
      s.vpu_out.rdy @= v is not None and len( v.outs ) < v.n_out
      s.vpu_done.val @= s.done["vpu"]
      s.vpu_done.msg @= 1
      s.mpu_inst.rdy @= m is None and not s.done["mpu"]
      s.mpu_cmd.val @= bool( m and m.q["cmd"] )
      if m and m.q["cmd"]:
        s.mpu_cmd.msg @= m.q["cmd"][0]
      s.mpu_x.val @= bool( m and m.q["x"] )
      if m and m.q["x"]:
        s.mpu_x.msg @= m.q["x"][0]
      s.mpu_bias.val @= bool( m and m.q["bias"] )
      if m and m.q["bias"]:
        s.mpu_bias.msg @= m.q["bias"][0]
      s.mpu_out.rdy @= m is not None and len( m.outs ) < m.n_out
      s.mpu_done.val @= s.done["mpu"]
      s.mpu_done.msg @= 1
      cmds, rds = s.router
      s.router_inst.rdy @= not cmds and not rds
      s.router_cmd.val @= bool( cmds )
      if cmds:
        s.router_cmd.msg @= cmds[0]
      s.router_rd.val @= bool( rds )
      if rds:
        s.router_rd.msg @= rds[0]

    @update_ff
    def up_rfm_fl_state():
      if s.reset:
        reset_state()
        return
      if s.rf_wr.val & s.rf_wr.rdy:
        s.rf.mem[ int( s.rf_wr.msg.entry ) ] = entry_values( s.rf_wr.msg.data )
      if s.rf_rd_resp.val & s.rf_rd_resp.rdy:
        s.resp.popleft()
      if s.rf_rd.val & s.rf_rd.rdy:
        s.resp.append( to_msgs( s.rf.read_entries( int( s.rf_rd.msg ), 1 ), cfg.d )[0] )
      if s.router_wr.val & s.router_wr.rdy:
        apply_writes( s.rf, [ s.router_wr.msg ] )
      for name, make in ( ( "vpu", vpu_job ), ( "mpu", mpu_job ) ):
        job = s.jobs[ name ]
        if job is not None:
          for port, q in job.q.items():
            p = getattr( s, f"{name}_{port}" )
            if p.val & p.rdy:
              q.popleft()
          out = getattr( s, f"{name}_out" )
          if out.val & out.rdy:
            job.outs.append( _clone( out.msg ) )
          if len( job.outs ) == job.n_out and job.sent():
            job.finish( job.outs )
            s.jobs[ name ] = None
            s.done[ name ] = True
        done = getattr( s, f"{name}_done" )
        if done.val & done.rdy:
          s.done[ name ] = False
        inst = getattr( s, f"{name}_inst" )
        if inst.val & inst.rdy:
          s.jobs[ name ] = make( inst.msg )
      cmds, rds = s.router
      if s.router_cmd.val & s.router_cmd.rdy:
        cmds.popleft()
      if s.router_rd.val & s.router_rd.rdy:
        rds.popleft()
      if s.router_inst.val & s.router_inst.rdy:
        inst, op, _ = decoded( int( s.router_inst.msg ) )
        cmds.append( router_cmd( inst ) )
        rds.extend( rd_messages( cfg, s.rf, int( inst.rf ), int( inst.len ),
                                  int( s.core_id ), cores ) )

  def line_trace( s ):
    busy = "".join( n[0].upper() if s.jobs[ n ] else "." for n in ( "vpu", "mpu" ) )
    return f"({busy}r{len( s.router[1] )})"

