"""The host's port drivers: Python components inside the simulated top that
stream a core's program into its `inst` port and put requests on the
memories' host ports (`HostTop`), and the tight loop that ticks a Verilated
appliance without pymtl3's per-cycle work (`VerilatedSteps`).  They are
stimulus, not hardware: they stay in Python at every level."""

from collections import deque

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..isa import encode
from ..units.dma.msgs import mk_dma_types
from ..units.memory.ports import mk_host_types
from ..units.control.msgs import InstMsg
from .Appliance import Appliance
from .liveness import StepTimeout


# -- Python drivers inside the simulated top ------------------------------------

class WordSource( Component ):
  """Sends the words pushed into it, one per cycle while the sink is ready."""

  def construct( s, Type ):
    s.send = SendIfcRTL( Type )
    s.Type = Type
    s.q = deque()

    @update_once
    def up_word_source_ports():
      s.send.val @= len( s.q ) > 0
      if s.q:
        s.send.msg @= s.q[0]

    @update_ff
    def up_word_source_state():
      if s.reset:
        s.q.clear()
      elif s.send.val & s.send.rdy:
        s.q.popleft()

  def push( s, msgs ):
    s.q.extend( msgs )

  def line_trace( s ):
    return f"{len( s.q ):3d}"


class HostMemPort( Component ):
  """One memory's host port: sends queued requests, takes every response."""

  def construct( s, H ):
    s.Req = H["Req"]
    s.req = SendIfcRTL( H["Req"] )
    s.resp = RecvIfcRTL( H["Resp"] )
    s.q = deque()
    s.got = []

    @update_once
    def up_host_port_ports():
      s.req.val @= len( s.q ) > 0
      if s.q:
        s.req.msg @= s.q[0]
      s.resp.rdy @= 1

    @update_ff
    def up_host_port_state():
      if s.reset:
        s.q.clear()
        return
      if s.req.val & s.req.rdy:
        s.q.popleft()
      if s.resp.val & s.resp.rdy:
        s.got.append( int( s.resp.msg.data ) )

  def line_trace( s ):
    return f"{len( s.q )}/{len( s.got )}"


class HostTop( Component ):
  """The appliance with one word source per core and its host ports' drivers."""

  def construct( s, cfg, cores, levels, hbm_depth, ddr_depth, level, runtime_id=False ):
    s.dut = Appliance( cfg, cores, levels, hbm_depth, ddr_depth, level, runtime_id )
    T = mk_dma_types( cfg )
    s.src = [ WordSource( InstMsg ) for _ in range( cores ) ]
    s.hbm = [ HostMemPort( mk_host_types( T["hbm"] ) ) for _ in range( cores ) ]
    s.ddr = [ HostMemPort( mk_host_types( T["ddr"] ) ) for _ in range( cores ) ]
    for i in range( cores ):
      s.src[i].send //= s.dut.inst[i]
      s.hbm[i].req //= s.dut.hbm_host_req[i]
      s.dut.hbm_host_resp[i] //= s.hbm[i].resp
      s.ddr[i].req //= s.dut.ddr_host_req[i]
      s.dut.ddr_host_resp[i] //= s.ddr[i].resp

  def line_trace( s ):
    return s.dut.line_trace()


# -- a Verilated appliance driven without pymtl3's per-cycle work ---------------

def _vl( name ):
  """A port's field in pymtl3's cffi struct: Verilator escapes `__`."""
  return name.replace( "__", "___05F" )


class VerilatedSteps:
  """Ticks a Verilated appliance (the imported `dut` of `HostTop`) from a
  tight loop over its cffi port struct.  pymtl3's `sim_tick` would, every
  cycle, run every Python component's blocks and copy every top-level
  port of the model in and out (the host ports' 569- and 577-bit requests
  as 18-19 words each) although during a step only `inst` changes, and
  only when a word is taken.  The loop keeps pymtl3's order (clock edge,
  then inputs and the combinational evaluation, then the outputs the host
  reads), so a step takes the same cycles either way; the other inputs
  keep the values pymtl3 left (no host request, responses taken), which is
  what the idle host drivers would drive.  A cycle is two evaluations of
  the model, not pymtl3's three: the rising edge, then the new inputs with
  the clock low (pymtl3's `seq_eval` evaluates at clock low before the edge
  although no input changed since its `comb_eval`); each evaluation also
  recomputes the logic fed by the top's inputs (the memories' host ports).
  The progress of a core is reported only in cycles with a handshake.
  With a probe's Verilator wave (`waves.VerilatorVcd`), an edge inside its
  window is pymtl3's `seq_eval` instead (clock low, evaluate, dump; clock
  high, evaluate, dump): one more evaluation without a changed input, so
  the same cycles."""

  def __init__( s, dut, n ):
    s.m, lib = dut._ffi_m, dut._ffi_inst
    s.eval = lib.comb_eval            # one model->eval()
    s.seq = lib.seq_eval              # the edge with the wrapper's VCD dumps
    s.clk = s.m.clk
    s.n = n
    s.msg = [ getattr( s.m, _vl( "inst__msg" ) )[i] for i in range( n ) ]
    s.val = [ getattr( s.m, _vl( "inst__val" ) )[i] for i in range( n ) ]
    s.rdy = [ getattr( s.m, _vl( "inst__rdy" ) )[i] for i in range( n ) ]
    s.idle = [ s.m.idle[i] for i in range( n ) ]
    s.issued = [ s.m.issued[i] for i in range( n ) ]
    s.retired = [ s.m.retired[i] for i in range( n ) ]

  def run( s, progs, tracks, limit, stuck, probe=None, cycle0=0 ):
    """Stream each core's words into its inst port until every core is idle
    and every word taken; returns the cycles.  `probe`: its Verilator wave
    of the backend's cycles, this step's first cycle being `cycle0`."""
    n, nw = s.n, InstMsg.nbits // 32
    words = [ [ [ int( encode( inst ) ) >> 32 * j & 0xffffffff for j in range( nw ) ]
                for inst in prog ] for prog in progs ]
    ptr = [ 0 ] * n
    offered = [ False ] * n        # inst val in the last combinational evaluation
    taken = [ False ] * n
    ev, m, clk = s.eval, s.m, s.clk
    issued, retired = s.issued, s.retired
    edge = probe.before_edge if probe is not None and probe.vcd is not None else None
    clk[0] = 0
    ev( m )
    k = 0
    while True:
      for i in range( n ):                 # clock edge
        if taken[i]:
          ptr[i] += 1
      if edge is not None and edge( cycle0 + k ):
        s.seq( m )
      else:
        clk[0] = 1
        ev( m )
      for i in range( n ):                 # inputs
        if ptr[i] < len( words[i] ):
          if taken[i] or not offered[i]:
            w, msg = words[i][ ptr[i] ], s.msg[i]
            for j in range( nw ):
              msg[j] = w[j]
            s.val[i][0] = 1
            offered[i] = True
        elif offered[i]:
          s.val[i][0] = 0
          offered[i] = False
      clk[0] = 0
      ev( m )
      done = True
      for i in range( n ):                 # outputs
        taken[i] = offered[i] and s.rdy[i][0]
        if issued[i][0] or retired[i][0]:
          tracks[i].cycle( k, issued[i][0], retired[i][0] )
        done = done and s.idle[i][0] and ptr[i] >= len( words[i] )
      k += 1
      if done:
        break
      if k >= limit:
        for t in tracks:
          t.close( k )
        raise StepTimeout( stuck( limit, [ len( w ) - p for w, p in zip( words, ptr ) ] ) )
    for t in tracks:
      t.close( k )
    return k
