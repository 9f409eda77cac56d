"""DMA at CL: `DMARTL`'s registers and decisions on Python values, engine by
engine (`ReadEngineCL`, `WriteEngineCL`), so every handshake happens in the
RTL's cycle.  It also checks what the hardware assumes (`check_inst`): a
bad instruction raises at the cycle it is accepted."""

from pymtl3 import *

from ...config import MEM_WORD_ELEMS
from ...isa import DmaOp as D
from ..control.decode_cache import decoded
from ..fpu.msgs import FP16
from ...lib.tile_walker import TileWalkerCL
from ..memory.msgs import ALL_ELEMS
from .DMAReadRTL import check_channels, read_sizes
from .DMAWriteRTL import write_sizes
from .msgs import VregT
from .ports import declare_ports
from .DMARTL import _hs
from .semantics import mpu_grid
from .streams import check_inst, geometry, is_ddr, join_elems, split_word, tr_word0

ELEMS = MEM_WORD_ELEMS


class ReadEngineCL:
  """`DMAReadRTL` on Python values (a helper object, like `FifoCL`)."""

  def __init__( s, cfg, spec, tiles ):
    check_channels( spec )
    s.C, s.modes = read_sizes( cfg, spec, tiles )
    s.TW = s.modes[-1][0]
    s.jump = tiles and s.TW < s.C      # a tile's first channel changes per tile
    s.psum_entries = cfg.psum_entries
    s.spec = spec
    s.busy = False
    s.full = False
    s.units = s.n_units = 0
    s.tile, s.na, s.end, s.rot, s.cnt = False, [ 0 ] * s.C, 0, 0, 0
    s.rq, s.base = False, 0
    s.buf = [ 0 ] * s.modes[-1][0]

  def start( s, addr, n_words, n_units, tile, grid=( 0, 0, 0 ) ):
    """grid: (n_r, n_c, cmajor) of a matrix read."""
    C = s.C
    s.busy = True
    s.tile = bool( tile ) and len( s.modes ) > 1
    s.base = addr
    s.rq = n_units != 0
    s.na = s.channel_starts( addr )
    s.end = addr + ( s.TW if s.tile else n_words )    # the first tile is grid index 0
    if s.tile:
      s.rq_walk = TileWalkerCL( *grid, s.psum_entries )
      s.rs_walk = TileWalkerCL( *grid, s.psum_entries )
    s.rot = addr % C
    s.cnt = 0
    s.full = False
    s.buf = [ 0 ] * s.modes[-1][0]
    s.units, s.n_units = 0, n_units

  def channel_starts( s, base ):
    return [ base + ( ( c - base ) % s.C ) for c in range( s.C ) ]

  def tile_base( s, walk ):
    """Address of the walker's next tile."""
    return s.base + walk.gi( 1 ) * s.TW

  def mode( s ):
    return s.modes[ 1 if s.tile else 0 ]

  def req_val( s, c ):
    return s.busy and s.rq and s.na[c] < s.end

  def row( s, c ):
    return ( s.na[c] // s.C ) % ( 1 << s.spec.row_bits )

  def beat( s, resp_val, out_rdy ):
    """(beat_go, channels taken) for this cycle."""
    if not s.busy:
      return False, ()
    U, P = s.mode()
    chans = [ ( s.rot + j ) % s.C for j in range( P ) ]
    go = all( resp_val[c] for c in chans ) and ( not s.full or out_rdy )
    return go, ( chans if go else () )

  def finish( s ):
    return s.busy and s.units == s.n_units

  def tick( s, req_fire, go, words, out_fire ):
    """`words`: the P rotated response words when `go`."""
    C = s.C
    seg_done = s.busy and s.rq and all(
      s.na[c] >= s.end or ( req_fire[c] and s.na[c] + C >= s.end ) for c in range( C ) )
    fin = s.finish()
    if fin:
      s.busy = False
    for c in range( C ):
      if req_fire[c]:
        s.na[c] += C
    if seg_done:
      if not s.tile or s.rq_walk.last():
        s.rq = False
      else:
        nxt = s.tile_base( s.rq_walk )
        s.end = nxt + s.TW
        s.na = s.channel_starts( nxt )
        s.rq_walk.step()
    last = False
    if go:
      U, P = s.mode()
      s.buf[ s.cnt * P:( s.cnt + 1 ) * P ] = words
      last = s.cnt == U // P - 1
      s.cnt = 0 if last else s.cnt + 1
      if s.jump and s.tile:
        if not s.rs_walk.last():           # after the last tile rot is not used
          s.rot = s.tile_base( s.rs_walk ) % C
        s.rs_walk.step()
      else:
        s.rot = ( s.rot + P ) % C
    s.full = ( go and last ) or ( s.full and not out_fire )
    if out_fire:
      s.units += 1


class WriteEngineCL:
  """`DMAWriteRTL` on Python values."""

  def __init__( s, cfg, spec, tr ):
    check_channels( spec )
    g = geometry( cfg )
    s.d, s.EW = g.d, g.entry_words
    s.C, s.S_n, s.S_t = write_sizes( cfg, spec, tr )
    s.spec = spec
    s.busy = False
    s.full = False
    s.acks = 0
    s.tr, s.strb, s.wa, s.beat, s.pending, s.left = False, 0, 0, 0, [], 0

  def start( s, wa0, tr, strb, n_acks, n_entries ):
    s.busy = True
    s.left = n_entries
    s.tr, s.strb = bool( tr ), strb
    s.wa, s.acks = wa0, n_acks
    s.full = False
    s.beat = 0
    s.pending = []

  def slots( s ):
    return s.S_t if s.tr else s.S_n

  def beats( s ):
    return s.d // s.S_t if s.tr else s.EW // s.S_n

  def requests( s ):
    """{channel: (slot, row, strb, data word)} of the pending slots."""
    out = {}
    if not ( s.busy and s.full ):
      return out
    C = s.C
    for j in s.pending:
      if s.tr:
        a = s.wa + j * s.EW
        x = s.ebuf[ s.beat * s.S_t + j ]
        out[ a % C ] = ( j, ( a // C ), s.strb, join_elems( [ x ] * ELEMS ) )
      else:
        a = s.wa + j
        k = ( s.beat * s.S_n + j ) * ELEMS
        out[ a % C ] = ( j, ( a // C ), ALL_ELEMS, join_elems( s.ebuf[ k:k + ELEMS ] ) )
    return out

  def beat_done( s, sent ):
    return s.busy and s.full and not ( set( s.pending ) - set( sent ) )

  def last_beat( s ):
    return s.beat == s.beats() - 1

  def rd_rdy( s, sent ):
    return s.busy and s.left > 0 and ( not s.full or ( s.beat_done( sent ) and s.last_beat() ) )

  def finish( s ):
    return s.busy and s.acks == 0

  def tick( s, sent, load_data, n_resp ):
    fin = s.finish()
    done = s.beat_done( sent )
    last = s.last_beat()
    if fin:
      s.busy = False
    s.acks -= n_resp
    if done:
      s.wa += s.S_t * s.EW if s.tr else s.S_n
    all_slots = list( range( s.slots() ) )
    if load_data is not None:
      s.left -= 1
      s.ebuf = load_data
      s.full = True
      s.beat = 0
      s.pending = all_slots
    elif done:
      if last:
        s.full = False
        s.pending = []
      else:
        s.beat += 1
        s.pending = all_slots
    else:
      s.pending = [ j for j in s.pending if j not in sent ]


class _State:
  pass


class DMACL( Component ):

  def construct( s, cfg ):
    T = declare_ports( s, cfg )
    s.cfg = cfg
    g = geometry( cfg )
    s.EW = g.entry_words
    specs = { "hbm": T["hbm"], "ddr": T["ddr"] }
    RFWrite, W = T["RFWrite"], T["W"]
    Req = { m: specs[m].types["Req"] for m in specs }
    HC, DC, EW = specs["hbm"].channels, specs["ddr"].channels, g.entry_words

    st = s.st = _State()

    def reset_state():
      st.rd = { "hbm": ReadEngineCL( cfg, specs["hbm"], True ),
               "ddr": ReadEngineCL( cfg, specs["ddr"], False ) }
      st.wr = { "hbm": WriteEngineCL( cfg, specs["hbm"], True ),
               "ddr": WriteEngineCL( cfg, specs["ddr"], False ) }
      st.done_pending = False
      st.rd_left = st.rd_next = 0
      st.sel_ddr = st.sel_mpu = False
      st.rf_base = 0

    reset_state()

    def busy_any():
      return any( e.busy for e in ( *st.rd.values(), *st.wr.values() ) )

    def inst_rdy():
      return not busy_any() and not st.done_pending and st.rd_left == 0

    def requests( m ):
      """(val, msg) per channel of memory m, from registered state only."""
      e, rd = st.wr[m], st.rd[m]
      w_reqs = e.requests()
      out = []
      for c in range( e.C ):
        if rd.busy:
          out.append( ( rd.req_val( c ), Req[m]( 0, rd.row( c ), 0, 0 ) ) )
        elif c in w_reqs:
          j, row, strb, data = w_reqs[c]
          out.append( ( 1, Req[m]( 1, row % ( 1 << specs[m].row_bits ), strb, data ) ) )
        else:
          out.append( ( 0, Req[m]( 0, 0, 0, 0 ) ) )
      return out

    def beats( m, resp_val, out_rdy ):
      """This cycle's read beat of memory m: (go, channels taken)."""
      return st.rd[m].beat( resp_val, out_rdy )

    def sent( m, req_rdy ):
      """The slots of memory m's write beat that go out this cycle."""
      w_reqs = st.wr[m].requests()
      return [ w_reqs[c][0] for c in w_reqs if req_rdy[c] ]

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
    # recomputes their decisions from the ports' final values.
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
      s.inst.rdy @= inst_rdy()
      s.done.val @= st.done_pending
      s.done.msg @= 1
      s.rf_rd.val @= st.rd_left != 0
      s.rf_rd.msg @= st.rd_next % ( 1 << VregT.nbits )
      h, dd = st.rd["hbm"], st.rd["ddr"]
      s.rf_wr.val @= ( h.full and not st.sel_mpu ) or dd.full
      s.w.val @= h.full and st.sel_mpu
      src = dd if st.sel_ddr else h
      if ( h.full and not st.sel_mpu ) or dd.full:
        elems = [ x for w in src.buf[ :EW ] for x in split_word( w ) ]
        s.rf_wr.msg @= RFWrite( ( st.rf_base + src.units ) % ( 1 << VregT.nbits ),
                                [ FP16( x ) for x in elems ] )
      if h.full and st.sel_mpu:
        s.w.msg @= W( [ FP16( x ) for w in h.buf for x in split_word( w ) ] )

    @update
    def up_dma_cl_hbm_resp_rdy():
      val = []
      for c in range( HC ):
        val.append( s.hbm_resp[c].val )
      _, chans = beats( "hbm", val, s.w.rdy if st.sel_mpu else s.rf_wr.rdy )
      busy = st.wr["hbm"].busy
      for c in range( HC ):
        s.hbm_resp[c].rdy @= ( c in chans ) or busy

    @update
    def up_dma_cl_ddr_resp_rdy():
      val = []
      for c in range( DC ):
        val.append( s.ddr_resp[c].val )
      _, chans = beats( "ddr", val, s.rf_wr.rdy )
      busy = st.wr["ddr"].busy
      for c in range( DC ):
        s.ddr_resp[c].rdy @= ( c in chans ) or busy

    @update
    def up_dma_cl_rd_resp_rdy():
      h, d = [], []
      for c in range( HC ):
        h.append( s.hbm_req[c].rdy )
      for c in range( DC ):
        d.append( s.ddr_req[c].rdy )
      s.rf_rd_resp.rdy @= st.wr["hbm"].rd_rdy( sent( "hbm", h ) ) or \
                          st.wr["ddr"].rd_rdy( sent( "ddr", d ) )

    @update_ff
    def up_dma_cl_state():
      if s.reset:
        reset_state()
        return
      fin = any( e.finish() for e in ( *st.rd.values(), *st.wr.values() ) )
      # this cycle's decisions again, from the ports' final values
      sends = {}
      for m in ( "hbm", "ddr" ):
        sends[m] = sent( m, [ r.rdy for r in getattr( s, f"{m}_req" ) ] )
      for m, e in st.rd.items():
        reqs, resps = getattr( s, f"{m}_req" ), getattr( s, f"{m}_resp" )
        out = ( s.w if ( m == "hbm" and st.sel_mpu ) else s.rf_wr )
        go, chans = beats( m, [ r.val for r in resps ], out.rdy )
        out_fire = e.full and bool( out.rdy ) and ( m == "ddr" ) == st.sel_ddr
        e.tick( [ e.busy and bool( reqs[c].val & reqs[c].rdy ) for c in range( e.C ) ],
                go, [ int( resps[c].msg.data ) for c in chans ], out_fire )
      for m, e in st.wr.items():
        resps = getattr( s, f"{m}_resp" )
        load = None
        if e.rd_rdy( sends[m] ) and s.rf_rd_resp.val:
          load = [ int( x ) for x in s.rf_rd_resp.msg.v ]
        n_resp = sum( 1 for r in resps if e.busy and r.val ) if e.busy else 0
        e.tick( sends[m], load, n_resp )
      st.done_pending = fin or ( st.done_pending and not s.done.rdy )
      if s.inst.val & s.inst.rdy:      # the port: the state above has moved on
        s.load( int( s.inst.msg ) )
      elif s.rf_rd.val and s.rf_rd.rdy:
        st.rd_next += 1
        st.rd_left -= 1


  def load( s, word ):
    st = s.st
    cfg = s.cfg
    inst, op, _ = decoded( word )
    check_inst( cfg, op, inst )
    addr, vecs, rf = int( inst.addr ), int( inst.vecs ), int( inst.rf )
    m = "ddr" if is_ddr( op ) else "hbm"
    st.sel_ddr, st.sel_mpu = m == "ddr", bool( inst.mpu )
    st.rf_base = st.rd_next = rf
    n_words = vecs * s.EW
    if op in ( D.HBM_READ, D.DDR_READ ) and inst.mpu:
      n_r, n_c, _ = mpu_grid( inst, cfg.d, cfg.l, cfg.psum_entries )
      st.rd[m].start( addr, n_words, vecs // cfg.l, True, ( n_r, n_c, int( inst.cmajor ) ) )
    elif op in ( D.HBM_READ, D.DDR_READ ):
      st.rd[m].start( addr, n_words, vecs, False )
    else:
      st.rd_left = vecs
      if inst.tr:
        pos = int( inst.pos )
        st.wr[m].start( tr_word0( cfg, addr, vecs, pos ), True,
                       1 << ( pos % ELEMS ), vecs * cfg.d, vecs )
      else:
        st.wr[m].start( addr, False, ALL_ELEMS, n_words, vecs )

  def line_trace( s ):
    st = s.st
    dp = "D" if st.done_pending else " "
    eng = "".join( ( "R" if e.busy else " " ) for e in st.rd.values() ) + \
          "".join( ( "W" if e.busy else " " ) for e in st.wr.values() )
    return f"{_hs( s.inst )}({dp}{eng}){_hs( s.rf_wr )}{_hs( s.w )}"
