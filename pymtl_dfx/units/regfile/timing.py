"""The register file manager's timing: `RegisterFileManagerRTL`'s control
(the DMA read pipe, the vector operand collector, the two x buffers of the
matrix collector with their collect / stream / write-back pointers, the
router's packet reader) on Python values, without data.

The one definition of when the manager takes and gives a message:
`RegisterFileManagerCL` drives its ports from this class and moves the
values around it; `pymtl_dfx.perf` runs it as is.  Every send port's val
and every recv port's rdy come from state at the start of the cycle (plus
rf_rd_resp.rdy for rf_rd.rdy); the `*_step` methods take the handshakes
that fired and change state at the end of the cycle.  A CL user reads the
counters (`v.a`, `v.o`, `ccnt`, `xk`, `bk`, `r.k`) for its values before
the step moves them.
"""

from ...lib.arith import ceil_div
from ...isa import ComputeOp as C, PostOp
from ..control.decode_cache import decoded
from ..router.streams import n_packets
from ..vpu.streams import n_b_msgs, n_chunks, n_out_msgs
from .streams import n_mpu_outs

IDLE, BUSY, DONE = range( 3 )


class MatrixSlot:
  """One x buffer and the matrix instruction it belongs to (a CL user
  keeps the collected entries and the instruction's messages here too)."""

  def __init__( s, inst, op, cfg ):
    s.inst, s.op = inst, op
    s.n_r = ceil_div( int( inst.rows ), cfg.d )
    s.n_x = s.n_r * ceil_div( int( inst.cols ), cfg.l )      # one x per weight tile
    s.n_bias = ceil_div( int( inst.cols ), cfg.l ) if op == C.CONV1D else 0
    s.n_out = n_mpu_outs( inst, cfg )
    s.chain = int( inst.hdr.chain )
    s.coll = s.started = s.strm = False


class Progress:
  """A VPU instruction's (or a sync's) progress."""

  def __init__( s, **kw ):
    s.cmd_pend, s.a, s.b, s.o, s.k = True, 0, 0, 0, 0
    s.__dict__.update( kw )


class RFMTiming:

  def __init__( s, cfg, cores ):
    s.cfg, s.cores = cfg, cores
    s.reset()

  def reset( s ):
    s.rd_val, s.rd_addr = False, 0
    s.v_state, s.v = IDLE, None
    s.slots = [ None, None ]
    s.aptr = s.cptr = s.sptr = s.wptr = 0
    s.ccnt = s.xk = s.bk = s.ocnt = 0
    s.cmd_done = False
    s.r_busy, s.r = False, None

  # -- DMA -----------------------------------------------------------------------

  def rf_rd_rdy( s, resp_rdy ):
    return ( not s.rd_val ) or bool( resp_rdy )

  def dma_step( s, rd_fire, rd_addr, resp_fire ):
    if rd_fire:
      s.rd_val, s.rd_addr = True, int( rd_addr )
    elif resp_fire:
      s.rd_val = False

  # -- VPU -----------------------------------------------------------------------

  def vpu_inst_rdy( s ):
    return s.v_state == IDLE

  def vpu_busy( s ):
    return s.v_state == BUSY

  def vpu_cmd_val( s ):
    return s.v_state == BUSY and s.v.cmd_pend

  def vpu_a_val( s ):
    return s.v_state == BUSY and s.v.a < s.v.n_a

  def vpu_b_val( s ):
    return s.v_state == BUSY and s.v.b < s.v.n_b

  def vpu_out_rdy( s ):
    return s.v_state == BUSY and s.v.o < s.v.n_o

  def vpu_done_val( s ):
    return s.v_state == DONE

  def vpu_step( s, cmd_fire, a_fire, b_fire, out_fire, done_rdy, inst_word ):
    """inst_word: vpu_inst's word when its val is up (taken when idle)."""
    v = s.v
    if s.v_state == BUSY:
      finish = not v.cmd_pend and v.a == v.n_a and v.b == v.n_b and v.o == v.n_o
      if cmd_fire:
        v.cmd_pend = False
      if a_fire:
        v.a += 1
      if b_fire:
        v.b += 1
      if out_fire:
        v.o += 1
      if finish:
        s.v_state = DONE
    elif s.v_state == DONE:
      if done_rdy:
        s.v_state = IDLE
    elif inst_word is not None:
      inst, op, _ = decoded( int( inst_word ) )
      n, d = int( inst.len ), s.cfg.d
      s.v = Progress( inst=inst, op=op, n_a=n_chunks( n, d ),
                      n_b=n_b_msgs( op, n, int( inst.bcast ), d ), n_o=n_out_msgs( op, n, d ) )
      s.v_state = BUSY
      return s.v
    return None

  # -- MPU -----------------------------------------------------------------------

  def mpu_views( s ):
    """(collecting, streaming, writing) slots: collecting waits while the
    older slot is a chain producer (its result streams into this one)."""
    cs, ss, ws = s.slots[ s.cptr ], s.slots[ s.sptr ], s.slots[ s.wptr ]
    older = s.slots[ s.wptr ] if s.wptr != s.cptr else None
    collecting = cs is not None and not cs.coll and not ( older is not None and older.chain )
    streaming = ss if ( ss is not None and ss.coll and not ss.strm ) else None
    writing = ws if ( ws is not None and ws.started ) else None
    return collecting, streaming, writing

  def mpu_inst_rdy( s ):
    return s.slots[ s.aptr ] is None

  def mpu_cmd_val( s, st ):
    return st is not None and not s.cmd_done

  def mpu_x_val( s, st ):
    return st is not None and s.xk < st.n_x

  def mpu_bias_val( s, st ):
    return st is not None and s.bk < st.n_bias

  def mpu_out_rdy( s, wr ):
    return wr is not None and s.ocnt < wr.n_out

  def mpu_done_val( s, wr ):
    return wr is not None and wr.strm and s.ocnt == wr.n_out

  def mpu_step( s, views, cmd_fire, x_fire, bias_fire, out_fire, done_rdy, inst_word ):
    """views: this cycle's `mpu_views()`; inst_word: mpu_inst's word when
    it is taken (val and rdy).  Returns the new slot, if any."""
    co, st, wr = views
    done_fire = s.mpu_done_val( wr ) and done_rdy      # decided on the state at the start
    if co:
      cs = s.slots[ s.cptr ]
      if s.ccnt == cs.n_r - 1:
        cs.coll, s.ccnt, s.cptr = True, 0, s.cptr ^ 1
      else:
        s.ccnt += 1
    if st is not None:
      finish = s.cmd_done and s.xk == st.n_x and s.bk == st.n_bias
      if cmd_fire:
        s.cmd_done = st.started = True
      if x_fire:
        s.xk += 1
      if bias_fire:
        s.bk += 1
      if finish:
        st.strm = True
        s.sptr ^= 1
        s.cmd_done, s.xk, s.bk = False, 0, 0
    if wr is not None:
      if out_fire:
        s.ocnt += 1
      elif done_fire:
        s.slots[ s.wptr ] = None
        s.ocnt, s.wptr = 0, s.wptr ^ 1
    if inst_word is not None:
      inst, op, _ = decoded( int( inst_word ) )
      slot = s.slots[ s.aptr ] = MatrixSlot( inst, op, s.cfg )
      s.aptr ^= 1
      return slot
    return None

  # -- router --------------------------------------------------------------------

  def router_inst_rdy( s ):
    return not s.r_busy

  def router_cmd_val( s ):
    return s.r_busy and s.r.cmd_pend

  def router_rd_val( s ):
    return s.r_busy and s.r.k < s.r.n_rd

  def router_step( s, cmd_fire, rd_fire, inst_word ):
    """inst_word: router_inst's word when its val is up (taken when idle)."""
    r = s.r
    if s.r_busy:
      finish = not r.cmd_pend and r.k == r.n_rd
      if cmd_fire:
        r.cmd_pend = False
      if rd_fire:
        r.k += 1
      if finish:
        s.r_busy = False
    elif inst_word is not None:
      inst, _, _ = decoded( int( inst_word ) )
      n = int( inst.len )
      s.r = Progress( inst=inst, base=int( inst.rf ), n=n,
                      n_rd=n_packets( n, s.cfg.router_words ) if s.cores > 1 else 0 )
      s.r_busy = True
      return s.r
    return None
