"""DMA at CL: `DMARTL`'s registers and decisions on Python values, engine by
engine (`timing.ReadEngineCL`, `WriteEngineCL`, `DMATiming`: the one
timing definition, shared with `pymtl_dfx.perf`), so every handshake happens
in the RTL's cycle.  It also checks what the hardware assumes (`check_inst`): a
bad instruction raises at the cycle it is accepted."""

from pymtl3 import *

from ..fpu.msgs import FP16
from .msgs import VregT
from .ports import declare_ports
from .DMARTL import _hs
from .streams import geometry, split_word
from .timing import DMATiming, ReadEngineCL, WriteEngineCL   # noqa: F401 (the engines' home)


class DMACL( Component ):

  def construct( s, cfg ):
    T = declare_ports( s, cfg )
    s.cfg = cfg
    specs = { "hbm": T["hbm"], "ddr": T["ddr"] }
    RFWrite, W = T["RFWrite"], T["W"]
    Req = { m: specs[m].types["Req"] for m in specs }
    g = geometry( cfg )
    HC, DC, EW, E = specs["hbm"].channels, specs["ddr"].channels, g.entry_words, g.word_elems
    s.st = st = DMATiming( cfg, specs )

    def requests( m ):
      """(val, msg) per channel of memory m, from registered state only."""
      vals = st.req_vals( m )
      e, rd = st.wr[m], st.rd[m]
      w_reqs = {} if rd.busy else e.requests()
      out = []
      for c in range( e.C ):
        if rd.busy:
          out.append( ( vals[c], Req[m]( 0, rd.row( c ), 0, 0 ) ) )
        elif c in w_reqs:
          j, row, strb, data = w_reqs[c]
          out.append( ( 1, Req[m]( 1, row % ( 1 << specs[m].row_bits ), strb, data ) ) )
        else:
          out.append( ( 0, Req[m]( 0, 0, 0, 0 ) ) )
      return out

    # Each output is driven by a block that names only what the RTL's output
    # depends on, so an RTL neighbour (whose own blocks may read our val and
    # write our rdy in one block) forms no loop with a block of ours that it
    # does not depend on at the signal level:
    #   state only (@update_once, reads no port): inst.rdy, done, rf_rd,
    #     rf_wr, w and the memory requests;
    #   {hbm,ddr}_resp[c].rdy: the read engine's beat (every channel's
    #     resp.val and the output's rdy), as DMAReadRTL's beat_go;
    #   rf_rd_resp.rdy: the write engines' beats (their channels' req.rdy),
    #     as DMAWriteRTL's rd_rdy.
    # The last two are @update: through an RTL memory or weight FIFO whose
    # block reads our rdy and writes our val they are in a block-level cycle,
    # which pymtl3 iterates to its fixed point; they are pure functions of
    # ports and state, so running them again is harmless.  The state update
    # recomputes their decisions from the ports' final values.  The
    # decisions are `timing.DMATiming`'s (shared with `pymtl_dfx.perf`).
    # Ports are named explicitly in the blocks (pymtl3 orders blocks by the
    # signals they name; it does not see signals named inside a comprehension).
    @update_once
    def up_dma_cl_reqs():
      hr, dr = requests( "hbm" ), requests( "ddr" )
      for c in range( HC ):
        s.hbm_req[c].val @= hr[c][0]
        s.hbm_req[c].msg @= hr[c][1]
      for c in range( DC ):
        s.ddr_req[c].val @= dr[c][0]
        s.ddr_req[c].msg @= dr[c][1]

    @update_once
    def up_dma_cl_out():
      s.inst.rdy @= st.inst_rdy()
      s.done.val @= st.done_pending
      s.done.msg @= 1
      s.rf_rd.val @= st.rf_rd_val()
      s.rf_rd.msg @= st.rd_next % ( 1 << VregT.nbits )
      h, dd = st.rd["hbm"], st.rd["ddr"]
      rf_wr_val = st.rf_wr_val()
      s.rf_wr.val @= rf_wr_val
      s.w.val @= st.w_val()
      src = dd if st.sel_ddr else h
      if rf_wr_val:
        elems = [ x for w in src.buf[ :EW ] for x in split_word( w, E ) ]
        s.rf_wr.msg @= RFWrite( ( st.rf_base + src.units ) % ( 1 << VregT.nbits ),
                                [ FP16( x ) for x in elems ] )
      if st.w_val():
        s.w.msg @= W( [ FP16( x ) for w in h.buf for x in split_word( w, E ) ] )

    @update
    def up_dma_cl_hbm_resp_rdy():
      val = []
      for c in range( HC ):
        val.append( s.hbm_resp[c].val )
      rdy = st.resp_rdy( "hbm", val, st.out_rdy( "hbm", s.w.rdy, s.rf_wr.rdy ) )
      for c in range( HC ):
        s.hbm_resp[c].rdy @= rdy[c]

    @update
    def up_dma_cl_ddr_resp_rdy():
      val = []
      for c in range( DC ):
        val.append( s.ddr_resp[c].val )
      rdy = st.resp_rdy( "ddr", val, s.rf_wr.rdy )
      for c in range( DC ):
        s.ddr_resp[c].rdy @= rdy[c]

    @update
    def up_dma_cl_rd_resp_rdy():
      h, d = [], []
      for c in range( HC ):
        h.append( s.hbm_req[c].rdy )
      for c in range( DC ):
        d.append( s.ddr_req[c].rdy )
      s.rf_rd_resp.rdy @= st.rf_rd_resp_rdy( h, d )

    @update_ff
    def up_dma_cl_state():
      if s.reset:
        st.reset()
        return
      tick()

    def tick():
      req_rdy, resp_val, words = {}, {}, {}
      for m in ( "hbm", "ddr" ):
        reqs, resps = getattr( s, f"{m}_req" ), getattr( s, f"{m}_resp" )
        req_rdy[m] = [ bool( r.rdy ) for r in reqs ]
        resp_val[m] = [ bool( r.val ) for r in resps ]
        words[m] = ( lambda rs: lambda c: int( rs[c].msg.data ) )( resps )
      data = [ int( x ) for x in s.rf_rd_resp.msg.v ] if s.rf_rd_resp.val else None
      word = int( s.inst.msg ) if s.inst.val & s.inst.rdy else None
      st.tick( req_rdy, resp_val, words, bool( s.w.rdy ), bool( s.rf_wr.rdy ),
               bool( s.rf_rd_resp.val ), data, bool( s.done.rdy ), word,
               bool( s.rf_rd.val & s.rf_rd.rdy ) )

  def line_trace( s ):
    st = s.st
    dp = "D" if st.done_pending else " "
    eng = "".join( ( "R" if e.busy else " " ) for e in st.rd.values() ) + \
          "".join( ( "W" if e.busy else " " ) for e in st.wr.values() )
    return f"{_hs( s.inst )}({dp}{eng}){_hs( s.rf_wr )}{_hs( s.w )}"
