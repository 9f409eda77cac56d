"""DMA at FL behind the ports of `msgs.py`: the meaning of `streams.py`
with unbounded queues and no timing (`DMAFunc` is the instruction-level FL that
reaches the arrays directly).  A read queues all its requests at once (a
matrix read: each tile's words, tiles in stream order from
`tiling.grid_tiles`), places each response at its word and sends a unit
when its words are all there; a write asks for every entry, turns each into its writes and is over
when every write is acknowledged."""

from collections import deque

from pymtl3 import *

from ...isa import DmaOp as D
from ..control.decode_cache import decoded
from ..fpu.msgs import FP16
from .msgs import VregT
from .ports import declare_ports
from ...lib.tiling import grid_tiles
from .semantics import mpu_grid
from .streams import check_inst, geometry, is_ddr, join_elems, split_word, tr_word0



class _State:
  pass


class DMAFL( Component ):

  def construct( s, cfg ):
    T = declare_ports( s, cfg )
    s.cfg = cfg
    s.g = geometry( cfg )
    s.T = T
    s.specs = { "hbm": T["hbm"], "ddr": T["ddr"] }
    HC, DC = T["hbm"].channels, T["ddr"].channels

    st = s.st = _State()

    def reset_state():
      st.active = None                 # dict describing the instruction
      st.done_pending = False
      st.reqs = { m: [ deque() for _ in range( sp.channels ) ] for m, sp in s.specs.items() }
      st.expect = { m: [ deque() for _ in range( sp.channels ) ] for m, sp in s.specs.items() }
      st.words = {}
      st.out = deque()                 # (port name, msg)
      st.rd_q = deque()

    reset_state()

    @update_once
    def up_dma_fl_ports():
      s.inst.rdy @= st.active is None and not st.done_pending
      s.done.val @= st.done_pending
      s.done.msg @= 1
      for c in range( HC ):
        q = st.reqs["hbm"][c]
        s.hbm_req[c].val @= len( q ) > 0
        if q:
          s.hbm_req[c].msg @= q[0]
        s.hbm_resp[c].rdy @= len( st.expect["hbm"][c] ) > 0
      for c in range( DC ):
        q = st.reqs["ddr"][c]
        s.ddr_req[c].val @= len( q ) > 0
        if q:
          s.ddr_req[c].msg @= q[0]
        s.ddr_resp[c].rdy @= len( st.expect["ddr"][c] ) > 0
      head = st.out[0][0] if st.out else None
      s.rf_wr.val @= head == "rf_wr"
      s.w.val @= head == "w"
      if head == "w":
        s.w.msg @= st.out[0][1]
      elif head == "rf_wr":
        s.rf_wr.msg @= st.out[0][1]
      s.rf_rd.val @= len( st.rd_q ) > 0
      if st.rd_q:
        s.rf_rd.msg @= st.rd_q[0]
      s.rf_rd_resp.rdy @= st.active is not None and st.active["entries_left"] > 0

    @update_ff
    def up_dma_fl_state():
      if s.reset:
        reset_state()
        return
      if s.done.val & s.done.rdy:
        st.done_pending = False
      for port in ( "rf_wr", "w" ):
        p = getattr( s, port )
        if p.val & p.rdy:
          st.out.popleft()
      if s.rf_rd.val & s.rf_rd.rdy:
        st.rd_q.popleft()
      for m, sp in s.specs.items():
        reqs, resps = getattr( s, f"{m}_req" ), getattr( s, f"{m}_resp" )
        for c in range( sp.channels ):
          if reqs[c].val & reqs[c].rdy:
            st.reqs[m][c].popleft()
          if resps[c].val & resps[c].rdy:
            k = st.expect[m][c].popleft()
            if k is None:
              st.active["acks_left"] -= 1
            else:
              st.words[k] = int( resps[c].msg.data )
      if s.rf_rd_resp.val & s.rf_rd_resp.rdy:
        s.write_entry( [ int( x ) for x in s.rf_rd_resp.msg.v ] )
      if st.active is not None:
        s.emit_units()
        a = st.active
        if a["units_left"] == 0 and a["acks_left"] == 0 and a["entries_left"] == 0 \
           and not st.out:
          st.active = None
          st.done_pending = True
      if s.inst.val & s.inst.rdy:
        s.start( int( s.inst.msg ) )

  def request( s, m, addr, wr, strb, data, k ):
    st = s.st
    sp = s.specs[m]
    c, row = addr % sp.channels, addr // sp.channels
    st.reqs[m][c].append( sp.types["Req"]( wr, row % ( 1 << sp.row_bits ), strb, data ) )
    st.expect[m][c].append( k )

  def start( s, word ):
    st = s.st
    cfg, g = s.cfg, s.g
    inst, op, _ = decoded( word )
    check_inst( cfg, op, inst )
    addr, vecs, rf = int( inst.addr ), int( inst.vecs ), int( inst.rf )
    m = "ddr" if is_ddr( op ) else "hbm"
    n_words = vecs * g.entry_words
    a = dict( m=m, rf=rf, addr=addr, units_left=0, acks_left=0, entries_left=0,
              next_unit=0, next_entry=0, tr=bool( inst.tr ), pos=int( inst.pos ), vecs=vecs )
    st.active = a
    st.words = {}
    if op in ( D.HBM_READ, D.DDR_READ ):
      a["unit"] = g.tile_words if inst.mpu else g.entry_words
      a["port"] = "w" if inst.mpu else "rf_wr"
      a["units_left"] = n_words // a["unit"]
      if inst.mpu:
        n_r, n_c, band = mpu_grid( inst, cfg.d, cfg.l, cfg.psum_entries )
        TW = g.tile_words
        for t, gi in enumerate( grid_tiles( n_r, n_c, band, int( inst.cmajor ),
                                            cfg.mpu_raster_walk ) ):
          for o in range( TW ):
            s.request( m, addr + int( gi ) * TW + o, 0, 0, 0, t * TW + o )
      else:
        for k in range( n_words ):
          s.request( m, addr + k, 0, 0, 0, k )
    else:
      a["entries_left"] = vecs
      a["acks_left"] = vecs * cfg.d if inst.tr else n_words
      st.rd_q.extend( VregT( ( rf + i ) % ( 1 << VregT.nbits ) ) for i in range( vecs ) )

  def emit_units( s ):
    st = s.st
    a, T = st.active, s.T
    while a["units_left"] > 0:
      U = a["unit"]
      lo = a["next_unit"] * U
      if any( k not in st.words for k in range( lo, lo + U ) ):
        return
      elems = [ FP16( x ) for k in range( lo, lo + U ) for x in split_word( st.words.pop( k ), s.g.word_elems ) ]
      if a["port"] == "w":
        st.out.append( ( "w", T["W"]( elems ) ) )
      else:
        entry = ( a["rf"] + a["next_unit"] ) % ( 1 << VregT.nbits )
        st.out.append( ( "rf_wr", T["RFWrite"]( entry, elems ) ) )
      a["next_unit"] += 1
      a["units_left"] -= 1

  def write_entry( s, elems ):
    st = s.st
    cfg, g, a = s.cfg, s.g, st.active
    i = a["next_entry"]
    a["next_entry"] += 1
    a["entries_left"] -= 1
    m = a["m"]
    if a["tr"]:
      w0 = tr_word0( cfg, a["addr"], a["vecs"], a["pos"] )
      lane = a["pos"] % g.word_elems
      for k, x in enumerate( elems ):
        e = i * cfg.d + k
        s.request( m, w0 + e * g.entry_words, 1, 1 << lane, x << ( 16 * lane ), None )
    else:
      E = g.word_elems
      for w in range( g.entry_words ):
        s.request( m, a["addr"] + i * g.entry_words + w, 1, s.specs[m].all_elems,
                   join_elems( elems[ w * E:( w + 1 ) * E ] ), None )

  def line_trace( s ):
    st = s.st
    state = "D" if st.done_pending else ( "A" if st.active else " " )
    return f"({state}{len( st.out )})"
