"""One core's units, joined as `core.Core` joins them, without data.

Every unit is its CL model's own timing object (`units/<unit>/timing.py`,
the memories' and links' `RateQueueCL`, the weight FIFO's `FifoCL`), so
every handshake happens in the cycle it happens at CL.  A cycle is two
phases, as in pymtl3's simulation of the CL core: `comb()` computes every
port value from the state at the start of the cycle (state-only outputs
first, then the few rdy's that depend on a neighbour's val or rdy, in
dependency order) and `tick()` lets every unit take the handshakes that
fired.
"""

from collections import namedtuple

from ..core.netlist import DMA, MEMORIES, MPU, ROUTER, VPU
from ..lib.fifo import FifoCL
from ..lib.rate_queue import RateQueueCL
from ..units.control.ControlUnitCL import Candidate, stall_reasons
from ..units.control.msgs import UNITS
from ..units.control.timing import IssueTiming
from ..units.dma.msgs import mk_dma_types
from ..units.dma.timing import DMATiming
from ..units.memory.ports import channel_rule
from ..units.mpu.timing import MPUTiming
from ..units.regfile.timing import RFMTiming
from ..units.router.timing import RouterTiming
from ..units.vpu.timing import VPUTiming

MEMS = MEMORIES
MEM_CHANNELS = tuple( ( m, f"{m}_req", f"{m}_resp" ) for m in MEMS )   # netlist channel names
# why a unit's next instruction waits at the head of the in-order issue:
# a register hazard with an older instruction (RAW/WAR/WAW), its wait flag,
# a full scoreboard, or its unit not ready (busy with the previous one)
STALLS = ( "dependency", "wait", "scoreboard_full", "unit_busy" )


def stall_kind( reasons ):
  """The first of STALLS that `stall_reasons`' strings name."""
  if any( r[ :3 ] in ( "RAW", "WAR", "WAW" ) for r in reasons ):
    return "dependency"
  if any( r.startswith( "wait_" ) for r in reasons ):
    return "wait"
  return "scoreboard_full"


class StallCounts:
  """Per unit, the cycles its oldest buffered instruction waited at issue,
  by reason (STALLS).  A statistic, not timing state: folding leaves every
  `statistic` object out of the canonical state and moves it on with
  `advance`, like the op-class and busy counts."""
  statistic = True

  def __init__( s ):
    s.by_unit = [ dict.fromkeys( STALLS, 0 ) for _ in range( 4 ) ]
    s.reason_for = s.reason = None   # the reason holds while the control unit's offer does

  def count( s, unit, offer, reason_of ):
    if offer is not s.reason_for:
      s.reason_for, s.reason = offer, reason_of()
    s.by_unit[ unit ][ s.reason ] += 1

  def snapshot( s ):
    return [ dict( w ) for w in s.by_unit ]

  def advance( s, S, before, after ):
    """S more stretches like the one from snapshot `before` to `after`."""
    for w, w0, w1 in zip( s.by_unit, before, after ):
      for k in w:
        w[ k ] += S * ( w1[ k ] - w0[ k ] )

MPUCmdT = namedtuple( "MPUCmdT", "op post rows cols" )
VPUCmdT = namedtuple( "VPUCmdT", "op len bcast" )
Packet = namedtuple( "Packet", "src idx" )

_MEM_ITEM = ( False, None )      # a DMA request's response (MemoryCL: (host?, word))


def mpu_cmd_of( inst ):
  return MPUCmdT( int( inst.hdr.op ), int( inst.post ), int( inst.rows ), int( inst.cols ) )


def vpu_cmd_of( inst ):
  return VPUCmdT( int( inst.hdr.op ), int( inst.len ), int( inst.bcast ) )


class CoreTiming:

  def __init__( s, cfg, core_id, cores ):
    s.cfg, s.core_id, s.cores = cfg, core_id, cores
    T = mk_dma_types( cfg )
    s.specs = specs = { "hbm": T["hbm"], "ddr": T["ddr"] }
    s.ctrl = IssueTiming( cfg, True, Candidate, stall_reasons )
    s.dma = DMATiming( cfg, specs )
    s.mem = { m: [ RateQueueCL( channel_rule( specs[m] ) ) for _ in range( specs[m].channels ) ]
              for m in MEMS }
    # channels that are not quiet (`RateQueueCL.quiet`): only these tick
    s.awake = { m: set() for m in MEMS }
    s.wfifo = FifoCL( cfg.weight_fifo_entries )
    s.rfm = RFMTiming( cfg, cores )
    s.mpu = MPUTiming( cfg )
    s.vpu = VPUTiming( cfg.d, cfg )
    s.router = RouterTiming( cfg, core_id, cores )
    s.words = []             # the program's words not yet taken by the buffer
    s.ptr = 0
    s.stalls = None

  def load( s, words ):
    s.words, s.ptr = list( words ), 0
    s.stalls = StallCounts()

  def _stall( s, cand, ok ):
    """Counts a cycle in which `cand`, the oldest buffered instruction, did
    not issue (the reason is fixed while the control unit's offer is)."""
    ctrl = s.ctrl
    s.stalls.count( cand.unit, ctrl._offer, lambda: "unit_busy" if ok else stall_kind(
      ctrl.stall_reasons( cand, ctrl.entries, ctrl.chain_idx, ctrl.check_hazards ) ) )

  def line_trace( s ):
    """The control unit (pc, buffered words, scoreboard, why its oldest
    instruction waits), then each unit: ready for an instruction or busy,
    with its completion pending or not, and the weight FIFO's fill."""
    ctrl = s.ctrl
    held = sum( e is not None for e in ctrl.entries )
    cand, ok = ctrl.offer()
    why = ""
    if cand is not None:
      reasons = ctrl.stall_reasons( cand, ctrl.entries, ctrl.chain_idx, ctrl.check_hazards )
      why = f" head waits: {', '.join( reasons )}" if reasons else ""
    rdy = ( s.dma.inst_rdy(), s.rfm.mpu_inst_rdy(), s.rfm.vpu_inst_rdy(), s.rfm.router_inst_rdy() )
    done = ( s.dma.done_pending, None, None, s.router.done_pending )
    units = " ".join( f"{name}:{'rdy' if r else 'busy'}{'+done' if d else ''}"
                      for name, r, d in zip( UNITS, rdy, done ) )
    return ( f"pc {ctrl.pc} buf {len( ctrl.buf )} sb {held}/{len( ctrl.entries )}{why} | "
             f"{units} wfifo {len( s.wfifo )}/{s.wfifo.entries}" )

  def drained( s ):
    return s.ptr >= len( s.words )

  def idle( s ):
    return s.ctrl.is_idle()

  # -- a cycle: ports from state, then the handshakes ------------------------------

  def comb( s, ring_recv_val, ring_send_rdy ):
    """Every port value of this cycle; ring_recv_val / ring_send_rdy: the
    links' (from their state).  Returns (issued bits, retired bits)."""
    ctrl, dma, rfm, mpu, vpu, router, wf = s.ctrl, s.dma, s.rfm, s.mpu, s.vpu, s.router, s.wfifo
    # control unit and program source
    inst_fire = not s.drained() and ctrl.inst_rdy()
    cand, ok = ctrl.offer()
    issue_u = cand.unit if ok else None
    # DMA and memories
    mem_req_rdy, mem_resp_val = {}, {}
    for m in MEMS:                 # a quiet channel accepts and has no response
      qs = s.mem[m]
      rdy, val = mem_req_rdy[m], mem_resp_val[m] = [ True ] * len( qs ), [ False ] * len( qs )
      for c in s.awake[m]:
        rdy[c], val[c] = qs[c].can_accept(), qs[c].ripe()
    req_val = { m: dma.req_vals( m ) for m in MEMS }
    w_val, enq_rdy = dma.w_val(), wf.enq_rdy()
    rf_wr_rdy = True           # the manager takes a DMA write every cycle
    resp_rdy = { "hbm": dma.resp_rdy( "hbm", mem_resp_val["hbm"], dma.out_rdy( "hbm", enq_rdy, rf_wr_rdy ) ),
                 "ddr": dma.resp_rdy( "ddr", mem_resp_val["ddr"], rf_wr_rdy ) }
    rd_resp_rdy = dma.rf_rd_resp_rdy( mem_req_rdy["hbm"], mem_req_rdy["ddr"] )
    rf_rd_val = dma.rf_rd_val()
    rf_rd_fire = rf_rd_val and rfm.rf_rd_rdy( rd_resp_rdy )
    # manager
    views = rfm.mpu_views()
    _, st, wr = views
    m_cmd_val, m_x_val, m_bias_val = rfm.mpu_cmd_val( st ), rfm.mpu_x_val( st ), rfm.mpu_bias_val( st )
    m_out_rdy, m_done_val = rfm.mpu_out_rdy( wr ), rfm.mpu_done_val( wr )
    v_cmd_val, v_a_val, v_b_val = rfm.vpu_cmd_val(), rfm.vpu_a_val(), rfm.vpu_b_val()
    v_out_rdy, v_done_val = rfm.vpu_out_rdy(), rfm.vpu_done_val()
    r_cmd_val, r_rd_val = rfm.router_cmd_val(), rfm.router_rd_val()
    # engines
    deq_val = wf.deq_val()
    g = mpu.decide( m_cmd_val, m_x_val, deq_val, m_bias_val, m_out_rdy )
    m_out_val = mpu.out_val()
    now = vpu.decide( v_cmd_val, v_a_val, v_b_val, v_out_rdy )
    v_out_val = vpu.out_val()
    # router
    router_wr_rdy = True       # the manager takes a router write every cycle
    r_recv_fire = router.rf_wr_val( ring_recv_val ) and router.ring_recv_rdy( router_wr_rdy )
    r_send_val = router.ring_send_val( r_rd_val )
    r_rd_fire = r_rd_val and router.rf_rd_rdy( ring_send_rdy )
    # control unit's handshakes
    unit_rdy = ( dma.inst_rdy(), rfm.mpu_inst_rdy(), rfm.vpu_inst_rdy(), rfm.router_inst_rdy() )
    done_val = ( dma.done_pending, m_done_val, v_done_val, router.done_pending )
    issued = issue_u is not None and unit_rdy[ issue_u ]
    if cand is not None and not issued:
      s._stall( cand, ok )
    dones = [ done_val[u] and ctrl.done_rdy( u ) for u in range( 4 ) ]
    # the values the units' ticks take besides their channels' handshakes
    s.p = dict( cand=cand, issue_u=issue_u, issued=issued, mem_req_rdy=mem_req_rdy,
                mem_resp_val=mem_resp_val, req_val=req_val, enq_rdy=enq_rdy,
                views=views, st=st, g=g, now=now, ring_send_rdy=ring_send_rdy )
    # the handshake record: one entry per channel of the netlist
    # (`core.netlist.PERF_CHANNELS`, what its `perf` says)
    s.hs = dict( inst=inst_fire,
                 dma_inst=issued and issue_u == DMA, mpu_inst=issued and issue_u == MPU,
                 vpu_inst=issued and issue_u == VPU, router_inst=issued and issue_u == ROUTER,
                 dma_done=dones[DMA], mpu_done=dones[MPU], vpu_done=dones[VPU],
                 router_done=dones[ROUTER],
                 rf_wr=rf_wr_rdy, rf_rd=rf_rd_fire, rf_rd_resp=rd_resp_rdy, w=w_val and enq_rdy,
                 wfifo_deq=deq_val and g["w_rdy"],
                 mpu_cmd=m_cmd_val and g["cmd"], mpu_x=m_x_val and g["x_rdy"],
                 mpu_bias=m_bias_val and g["bias_rdy"],
                 mpu_out=wr is not None and m_out_val and m_out_rdy,
                 vpu_cmd=v_cmd_val and now.cmd_rdy, vpu_a=v_a_val and now.issue,
                 vpu_b=v_b_val and now.issue and now.need_b,
                 vpu_out=v_out_val and v_out_rdy,
                 router_cmd=r_cmd_val and router.cmd_rdy(), router_rd=r_rd_fire,
                 router_wr=router_wr_rdy, ring_recv=r_recv_fire, ring_send=r_send_val,
                 hbm_req=mem_req_rdy["hbm"], ddr_req=mem_req_rdy["ddr"],
                 hbm_resp=resp_rdy["hbm"], ddr_resp=resp_rdy["ddr"] )
    bits_i = ( 1 << issue_u ) if issued else 0
    bits_r = sum( 1 << u for u in range( 4 ) if dones[u] )
    return bits_i, bits_r

  def send_packet( s ):
    """The packet on ring_send this cycle (when its val is up)."""
    r = s.router
    return r.fwd.head() if r.fwd.deq_val() else Packet( s.core_id, r.own_idx )

  def tick( s, recv_pkt ):
    """recv_pkt: the packet taken from the ring this cycle (or None)."""
    p, hs = s.p, s.hs
    ctrl, dma, rfm = s.ctrl, s.dma, s.rfm
    word = s.words[ s.ptr ] if hs["inst"] else None
    issue_word = p["cand"].word if p["issued"] else None
    # DMA and memories (their state first: the DMA reads nothing of theirs
    # in its tick that this cycle's comb has not already fixed)
    dma.tick( p["mem_req_rdy"], p["mem_resp_val"], None, p["enq_rdy"], hs["rf_wr"],
              rfm.rd_val, True, ctrl.done_rdy( DMA ),
              issue_word if hs["dma_inst"] else None, hs["rf_rd"] )
    for m, req_ch, resp_ch in MEM_CHANNELS:
      qs, awake = s.mem[m], s.awake[m]
      req, rdy, val, take = p["req_val"][m], hs[ req_ch ], p["mem_resp_val"][m], hs[ resp_ch ]
      fired = { c for c, ( r, y ) in enumerate( zip( req, rdy ) ) if r and y }
      for c in fired:
        qs[c].tick( _MEM_ITEM, val[c] and take[c] )
      for c in awake - fired:
        q = qs[c]
        q.tick( None, val[c] and take[c] )
        if q.quiet():
          awake.discard( c )
      awake |= fired          # a channel that took an item is not quiet
    s.wfifo.tick( True if hs["w"] else None, hs["wfifo_deq"] )
    # manager (its steps read the handshakes, decided above); the engines'
    # commands are read before the manager's steps move on
    vcmd = rfm.v.cmd if hs["vpu_cmd"] else None
    mcmd = p["st"].cmd if hs["mpu_cmd"] else None
    r = rfm.r
    rcmd = ( r.base, r.n ) if hs["router_cmd"] else None
    rfm.dma_step( hs["rf_rd"], 0, rfm.rd_val and hs["rf_rd_resp"] )
    new = rfm.vpu_step( hs["vpu_cmd"], hs["vpu_a"], hs["vpu_b"], hs["vpu_out"],
                        ctrl.done_rdy( VPU ), issue_word if hs["vpu_inst"] else None )
    if new is not None:
      new.cmd = vpu_cmd_of( new.inst )
    new = rfm.mpu_step( p["views"], hs["mpu_cmd"], hs["mpu_x"], hs["mpu_bias"],
                        hs["mpu_out"], ctrl.done_rdy( MPU ),
                        issue_word if hs["mpu_inst"] else None )
    if new is not None:
      new.cmd = mpu_cmd_of( new.inst )
    rfm.router_step( hs["router_cmd"], hs["router_rd"], issue_word if hs["router_inst"] else None )
    # engines
    s.mpu.tick( mcmd )
    s.vpu.advance( p["now"], vcmd )
    s.router.tick( recv_pkt, p["ring_send_rdy"], hs["router_rd"], hs["router_done"], rcmd )
    # control unit last: the units above took its issue on the old state
    ctrl.tick( p["issued"], [ hs["dma_done"], hs["mpu_done"], hs["vpu_done"], hs["router_done"] ], word )
    if word is not None:
      s.ptr += 1
