"""The DMA's timing: `DMARTL`'s engines and decisions (`DMAReadRTL`,
`DMAWriteRTL`) on Python values, engine by engine.

The one definition of when the DMA takes and gives a message: `DMACL`
drives its ports from `DMATiming` and carries the words; `pymtl_dfx.perf`
runs it without data (`words=None`, `load_data=True`).  Per cycle: the
state-only outputs (`inst_rdy`, `done_pending`, `rf_rd_val`, `rf_wr_val`,
`w_val`, `req_vals`), the input-dependent rdy's (`resp_rdy`,
`rf_rd_resp_rdy`), then `tick(...)` with the ports' final values.
"""

from collections import deque

from ...lib.tile_walker import TileWalkerCL
from ..control.decode_cache import decoded
from .DMAReadRTL import check_channels, read_sizes
from .DMAWriteRTL import write_sizes
from .semantics import mpu_grid
from .streams import check_inst, geometry, is_ddr, join_elems, tr_word0
from ...isa import DmaOp as D



class ReadEngineCL:
  """`DMAReadRTL` on Python values (a helper object, like `FifoCL`)."""

  def __init__( s, cfg, spec, tiles ):
    check_channels( spec )
    s.C, s.modes = read_sizes( cfg, spec, tiles )
    s.TW = s.modes[-1][0]
    s.jump = tiles and s.TW < s.C      # a tile's first channel changes per tile
    s.psum_entries = cfg.psum_entries
    s.raster = cfg.mpu_raster_walk
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
      s.rq_walk = TileWalkerCL( *grid, s.psum_entries, s.raster )
      s.rs_walk = TileWalkerCL( *grid, s.psum_entries, s.raster )
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

  def req_vals( s ):
    """Per channel: a read request is up (an address of the segment not yet
    asked for)."""
    if not ( s.busy and s.rq ):
      return [ False ] * s.C
    end = s.end
    return [ a < end for a in s.na ]

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
    C, end = s.C, s.end
    fired = [ c for c, f in enumerate( req_fire ) if f ]
    na = s.na
    for c in fired:
      na[c] += C
    # every channel's addresses of the segment are asked for once the fired ones moved on
    seg_done = s.busy and s.rq and all( a >= end for a in na )
    fin = s.finish()
    if fin:
      s.busy = False
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
      if words is not None:
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
    s.d, s.EW, s.E = g.d, g.entry_words, g.word_elems
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

  def channels( s ):
    """{channel: slot} of the pending slots (what goes out, without data)."""
    if not ( s.busy and s.full ):
      return {}
    C = s.C
    if s.tr:
      return { ( s.wa + j * s.EW ) % C: j for j in s.pending }
    return { ( s.wa + j ) % C: j for j in s.pending }

  def requests( s ):
    """{channel: (slot, row, strb, data word)} of the pending slots."""
    out = {}
    if not ( s.busy and s.full ):
      return out
    C, E = s.C, s.E
    for j in s.pending:
      if s.tr:
        a = s.wa + j * s.EW
        x = s.ebuf[ s.beat * s.S_t + j ]
        out[ a % C ] = ( j, ( a // C ), s.strb, join_elems( [ x ] * E ) )
      else:
        a = s.wa + j
        k = ( s.beat * s.S_n + j ) * E
        out[ a % C ] = ( j, ( a // C ), s.spec.all_elems, join_elems( s.ebuf[ k:k + E ] ) )
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


class DMATiming:
  """The DMA's registers and decisions around its four engines."""

  def __init__( s, cfg, specs ):
    s.cfg, s.specs = cfg, specs
    s.EW = geometry( cfg ).entry_words
    s.reset()

  def reset( s ):
    cfg, specs = s.cfg, s.specs
    s.rd = { "hbm": ReadEngineCL( cfg, specs["hbm"], True ),
             "ddr": ReadEngineCL( cfg, specs["ddr"], False ) }
    s.wr = { "hbm": WriteEngineCL( cfg, specs["hbm"], True ),
             "ddr": WriteEngineCL( cfg, specs["ddr"], False ) }
    s.done_pending = False
    s.rd_left = s.rd_next = 0
    s.sel_ddr = s.sel_mpu = False
    s.rf_base = 0
    s.inst_q = deque()       # cfg.dma_inst_queue words taken, not yet started

  # -- outputs from state ----------------------------------------------------------

  def busy_any( s ):
    return any( e.busy for e in ( *s.rd.values(), *s.wr.values() ) )

  def engine_rdy( s ):
    """The engines can start an instruction (DFX's inst.rdy)."""
    return not s.busy_any() and not s.done_pending and s.rd_left == 0

  def inst_rdy( s ):
    """inst.rdy: the engines are ready or, with `dma_inst_queue`, the queue
    has room (`FifoRTL`'s rule: from state only)."""
    if s.cfg.dma_inst_queue:
      return len( s.inst_q ) < s.cfg.dma_inst_queue
    return s.engine_rdy()

  def rf_rd_val( s ):
    return s.rd_left != 0

  def rf_wr_val( s ):
    return ( s.rd["hbm"].full and not s.sel_mpu ) or s.rd["ddr"].full

  def w_val( s ):
    return s.rd["hbm"].full and s.sel_mpu

  def req_vals( s, m ):
    """Per channel of memory m: a request is up (read or write)."""
    rd = s.rd[m]
    if rd.busy:
      return rd.req_vals()
    chans = s.wr[m].channels()
    return [ c in chans for c in range( rd.C ) ]

  # -- outputs from inputs -------------------------------------------------------------

  def out_rdy( s, m, w_rdy, rf_wr_rdy ):
    return w_rdy if ( m == "hbm" and s.sel_mpu ) else rf_wr_rdy

  def resp_rdy( s, m, resp_val, out_rdy ):
    """Per channel of memory m: resp.rdy (the read beat's channels, or
    every channel while the write engine counts acknowledgements)."""
    rd = s.rd[m]
    if s.wr[m].busy:
      return [ True ] * rd.C
    rdy = [ False ] * rd.C
    for c in rd.beat( resp_val, out_rdy )[1]:
      rdy[c] = True
    return rdy

  def sent( s, m, req_rdy ):
    """The slots of memory m's write beat that go out this cycle."""
    chans = s.wr[m].channels()
    return [ j for c, j in chans.items() if req_rdy[c] ]

  def rf_rd_resp_rdy( s, hbm_req_rdy, ddr_req_rdy ):
    return s.wr["hbm"].rd_rdy( s.sent( "hbm", hbm_req_rdy ) ) or \
           s.wr["ddr"].rd_rdy( s.sent( "ddr", ddr_req_rdy ) )

  # -- the registers -------------------------------------------------------------------

  def tick( s, req_rdy, resp_val, resp_words, w_rdy, rf_wr_rdy, rd_resp_val, rd_resp_data,
            done_rdy, inst_word, rf_rd_fire ):
    """req_rdy / resp_val: {memory: per channel}; resp_words: {memory:
    channel -> word} or None (no data); rd_resp_data: the entry's elements
    (anything not None without data); inst_word: the word taken on inst
    this cycle (or None); rf_rd_fire: rf_rd's handshake."""
    # with the queue, its head starts when the engines were ready at the
    # start of the cycle (the FIFO's deq), and the word taken on inst joins
    # the queue (visible the next cycle)
    start = inst_word
    if s.cfg.dma_inst_queue:
      start = s.inst_q.popleft() if s.inst_q and s.engine_rdy() else None
      if inst_word is not None:
        s.inst_q.append( inst_word )
    fin = any( e.finish() for e in ( *s.rd.values(), *s.wr.values() ) )
    sends = { m: s.sent( m, req_rdy[m] ) for m in ( "hbm", "ddr" ) }
    for m, e in s.rd.items():
      out_rdy = s.out_rdy( m, w_rdy, rf_wr_rdy )
      go, chans = e.beat( resp_val[m], out_rdy )
      out_fire = e.full and bool( out_rdy ) and ( m == "ddr" ) == s.sel_ddr
      fire = [ v and r for v, r in zip( e.req_vals(), req_rdy[m] ) ] if e.busy else [ False ] * e.C
      words = None if resp_words is None else [ resp_words[m]( c ) for c in chans ]
      e.tick( fire, go, words, out_fire )
    for m, e in s.wr.items():
      load = None
      if e.rd_rdy( sends[m] ) and rd_resp_val:
        load = rd_resp_data
      n_resp = sum( 1 for v in resp_val[m] if v ) if e.busy else 0
      e.tick( sends[m], load, n_resp )
    s.done_pending = fin or ( s.done_pending and not done_rdy )
    if start is not None:            # the port: the state above has moved on
      s.load( start )
    elif rf_rd_fire:
      s.rd_next += 1
      s.rd_left -= 1

  def load( s, word ):
    cfg = s.cfg
    inst, op, _ = decoded( word )
    check_inst( cfg, op, inst )
    addr, vecs, rf = int( inst.addr ), int( inst.vecs ), int( inst.rf )
    m = "ddr" if is_ddr( op ) else "hbm"
    s.sel_ddr, s.sel_mpu = m == "ddr", bool( inst.mpu )
    s.rf_base = s.rd_next = rf
    n_words = vecs * s.EW
    if op in ( D.HBM_READ, D.DDR_READ ) and inst.mpu:
      n_r, n_c, _ = mpu_grid( inst, cfg.d, cfg.l, cfg.psum_entries )
      s.rd[m].start( addr, n_words, vecs // cfg.l, True, ( n_r, n_c, int( inst.cmajor ) ) )
    elif op in ( D.HBM_READ, D.DDR_READ ):
      s.rd[m].start( addr, n_words, vecs, False )
    else:
      s.rd_left = vecs
      if inst.tr:
        pos = int( inst.pos )
        s.wr[m].start( tr_word0( cfg, addr, vecs, pos ), True,
                       1 << ( pos % cfg.mem_word_elems ), vecs * cfg.d, vecs )
      else:
        s.wr[m].start( addr, False, s.specs[m].all_elems, n_words, vecs )
