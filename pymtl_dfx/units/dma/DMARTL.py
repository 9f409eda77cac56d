"""DMA at RTL: one instruction at a time behind the ports of `msgs.py`.

`DMACtrlRTL` (control) decodes the instruction (for `hbm_read mpu` also
the tile grid: n_r = ceil(rows/d), n_c = (vecs/l) / n_r by a combinational
long division, since the instruction carries rows and vecs), starts one of
four engines
(`DMAReadRTL` for HBM with tiles and for DDR, `DMAWriteRTL` for HBM with the
transposed write and for DDR), sends the rf_rd addresses of a write, and
answers done the cycle after the engine finishes.  `DMARTL` wires the
engines to the memory channels (a channel's req comes from whichever engine
of its memory is busy) and to rf_wr / w.  Parameters come from cfg only.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...isa import DmaOp as D
from ...isa.fields import VECS_BITS
from ...isa.formats import DmaInst
from ...lib.fifo import FifoRTL
from ..control.FootprintRTL import field
from ..control.msgs import DoneMsg, InstMsg
from ..memory.msgs import strb_type, word_type
from .DMAReadRTL import AddrT, DMAReadRTL, GridT
from .DMAWriteRTL import DMAWriteRTL
from .msgs import VregT
from .ports import declare_ports
from .streams import geometry, log2

ENGINES = ( "hbm_rd", "ddr_rd", "hbm_wr", "ddr_wr" )


def _hs( ifc ):
  if ifc.val and ifc.rdy:
    return "*"
  return "#" if ifc.val else "."


class DMACtrlRTL( Component ):

  def construct( s, cfg ):
    g = geometry( cfg )
    logEW, logd, logl = log2( g.entry_words ), log2( cfg.d ), log2( cfg.l )
    ELEM_LO = log2( g.word_elems )
    Strb = strb_type( g.word_elems )
    OpT = mk_bits( field( DmaInst, "op" )[1] - field( DmaInst, "op" )[0] )
    VecsT = mk_bits( VECS_BITS )
    AW = AddrT.nbits
    STRB_BITS = Strb.nbits
    sl = lambda name: slice( *field( DmaInst, name ) )

    s.inst_val = InPort();  s.inst_rdy = OutPort()
    s.inst_msg = InPort( InstMsg )
    s.done_val = OutPort(); s.done_rdy = InPort()
    s.rd_val = OutPort();   s.rd_rdy = InPort()
    s.rd_msg = OutPort( VregT )
    s.busy = [ InPort() for _ in ENGINES ]
    s.finish = [ InPort() for _ in ENGINES ]
    s.start = [ OutPort() for _ in ENGINES ]
    # the engines' operands, valid with `start`
    s.addr = OutPort( AddrT )
    s.n_words = OutPort( AddrT )
    s.n_units = OutPort( Bits32 )
    s.mpu = OutPort()
    s.n_r = OutPort( GridT )          # hbm_read mpu: the tile grid
    s.n_c = OutPort( GridT )
    s.cmajor = OutPort()
    s.tr = OutPort()
    s.wa0 = OutPort( AddrT )
    s.strb = OutPort( Strb )
    s.n_acks = OutPort( AddrT )
    s.n_entries = OutPort( AddrT )
    # the instruction being executed, for the output muxes
    s.sel_ddr = OutPort()
    s.sel_mpu = OutPort()
    s.rf_base = OutPort( VregT )

    s.op = Wire( OpT )
    s.vecs = Wire( VecsT )
    s.rf = Wire( VregT )
    s.pos = Wire( mk_bits( sl( "pos" ).stop - sl( "pos" ).start ) )
    s.busy_any = Wire()
    s.finish_any = Wire()
    s.load = Wire()
    s.done_pending = Wire()
    s.rd_left = Wire( VecsT )
    s.rd_next = Wire( VregT )
    s.elems = Wire( AddrT )
    s.base_v = Wire( AddrT )

    s.addr_f = Wire( mk_bits( sl( "addr" ).stop - sl( "addr" ).start ) )
    s.addr_f //= s.inst_msg[ sl( "addr" ) ]
    s.op //= s.inst_msg[ sl( "op" ) ]
    s.vecs //= s.inst_msg[ sl( "vecs" ) ]
    s.rf //= s.inst_msg[ sl( "rf" ) ]
    s.pos //= s.inst_msg[ sl( "pos" ) ]
    s.mpu //= s.inst_msg[ sl( "mpu" ) ]
    s.cmajor //= s.inst_msg[ sl( "cmajor" ) ]
    RowsT = mk_bits( sl( "rows" ).stop - sl( "rows" ).start )
    s.rows = Wire( RowsT )
    s.rows //= s.inst_msg[ sl( "rows" ) ]

    # n_c = n_tiles / n_r, restoring division one quotient bit per stage
    # (the program guarantees it divides: `streams.check_inst`)
    GW = GridT.nbits
    RW = GW + 1
    RT = mk_bits( RW )
    RW1, DM1 = RW - 1, cfg.d - 1
    s.n_tiles = Wire( GridT )
    s.dv_d = Wire( RT )                   # the divisor n_r
    s.dv_rem = [ Wire( RT ) for _ in range( GW + 1 ) ]
    s.dv_t = [ Wire( RT ) for _ in range( GW ) ]
    s.dv_q = [ Wire() for _ in range( GW ) ]
    for i in range( GW ):
      s.n_c[ GW - 1 - i ] //= s.dv_q[i]

    @update
    def up_dma_grid():
      s.n_r @= trunc( ( zext( s.rows, RW ) + DM1 ) >> logd, GW )
      s.n_tiles @= s.vecs >> logl            # VECS_BITS == GridT.nbits
      s.dv_d @= zext( s.n_r, RW )
      s.dv_rem[0] @= 0
      for i in range( GW ):
        s.dv_t[i] @= concat( s.dv_rem[i][ 0:RW1 ], s.n_tiles[ GW - 1 - i ] )
        if s.dv_t[i] >= s.dv_d:
          s.dv_rem[ i + 1 ] @= s.dv_t[i] - s.dv_d
          s.dv_q[i] @= 1
        else:
          s.dv_rem[ i + 1 ] @= s.dv_t[i]
          s.dv_q[i] @= 0
    s.tr //= s.inst_msg[ sl( "tr" ) ]
    s.rd_msg //= s.rd_next
    s.done_val //= s.done_pending

    @update
    def up_dma_decode():
      s.addr @= zext( s.addr_f, AW )
      s.n_words @= zext( s.vecs, AW ) << logEW
      s.elems @= zext( s.vecs, AW ) << logd
      if s.mpu:
        s.n_units @= zext( s.vecs >> logl, 32 )
      else:
        s.n_units @= zext( s.vecs, 32 )
      # transposed: region vector (pos // d) * ceil(vecs*d / l) * l, element pos % d
      s.base_v @= zext( s.pos >> logd, AW ) * ( ( ( s.elems + AddrT( cfg.l - 1 ) ) >> logl ) << logl )
      if s.tr:
        s.wa0 @= s.addr + ( s.base_v << logEW ) + zext( ( s.pos & ( cfg.d - 1 ) ) >> ELEM_LO, AW )
        s.n_acks @= s.elems
      else:
        s.wa0 @= s.addr
        s.n_acks @= s.n_words
      s.strb @= Strb( 1 ) << zext( s.pos[ 0:ELEM_LO ], STRB_BITS )
      s.n_entries @= zext( s.vecs, AW )

    @update
    def up_dma_ctrl_status():
      s.busy_any @= s.busy[0] | s.busy[1] | s.busy[2] | s.busy[3]
      s.finish_any @= s.finish[0] | s.finish[1] | s.finish[2] | s.finish[3]
      s.inst_rdy @= ~s.busy_any & ~s.done_pending & ( s.rd_left == 0 )
      s.rd_val @= s.rd_left != 0

    # A block of its own: inst_rdy must not share a block with what reads
    # inst_val, or Verilator sees the control unit's val -> rdy path as a
    # combinational loop (UNOPTFLAT) and re-evaluates the core every cycle.
    @update
    def up_dma_ctrl_load():
      s.load @= s.inst_val & s.inst_rdy
      s.start[0] @= s.load & ( s.op == OpT( D.HBM_READ ) )
      s.start[1] @= s.load & ( s.op == OpT( D.DDR_READ ) )
      s.start[2] @= s.load & ( s.op == OpT( D.HBM_WRITE ) )
      s.start[3] @= s.load & ( s.op == OpT( D.DDR_WRITE ) )

    @update_ff
    def up_dma_ctrl_ff():
      if s.reset:
        s.done_pending <<= 0
        s.rd_left <<= 0
      else:
        s.done_pending <<= s.finish_any | ( s.done_pending & ~s.done_rdy )
        if s.load:
          s.sel_ddr <<= ( s.op == OpT( D.DDR_READ ) ) | ( s.op == OpT( D.DDR_WRITE ) )
          s.sel_mpu <<= s.mpu
          s.rf_base <<= s.rf
          s.rd_next <<= s.rf
          if ( s.op == OpT( D.HBM_WRITE ) ) | ( s.op == OpT( D.DDR_WRITE ) ):
            s.rd_left <<= s.vecs
        elif s.rd_val & s.rd_rdy:
          s.rd_next <<= s.rd_next + 1
          s.rd_left <<= s.rd_left - 1

  def line_trace( s ):
    return "D" if s.done_pending else ( "B" if s.busy_any else " " )


class DMAChannelMuxRTL( Component ):
  """A memory's channels to its read and its write engine (one is busy at
  a time; an idle engine sends no request and takes no response)."""

  def construct( s, spec ):
    T = spec.types
    C = spec.channels
    s.rd_busy = InPort()
    s.rd_req = [ RecvIfcRTL( T["Req"] ) for _ in range( C ) ]
    s.wr_req = [ RecvIfcRTL( T["Req"] ) for _ in range( C ) ]
    s.rd_resp = [ SendIfcRTL( T["Resp"] ) for _ in range( C ) ]
    s.wr_resp = [ SendIfcRTL( T["Resp"] ) for _ in range( C ) ]
    s.req = [ SendIfcRTL( T["Req"] ) for _ in range( C ) ]
    s.resp = [ RecvIfcRTL( T["Resp"] ) for _ in range( C ) ]
    for c in range( C ):
      s.rd_req[c].rdy //= s.req[c].rdy
      s.wr_req[c].rdy //= s.req[c].rdy
      s.rd_resp[c].val //= s.resp[c].val
      s.wr_resp[c].val //= s.resp[c].val
      s.rd_resp[c].msg //= s.resp[c].msg
      s.wr_resp[c].msg //= s.resp[c].msg

    @update
    def up_dma_channel_mux():
      for c in range( C ):
        s.req[c].val @= s.rd_req[c].val | s.wr_req[c].val
        if s.rd_busy:
          s.req[c].msg @= s.rd_req[c].msg
        else:
          s.req[c].msg @= s.wr_req[c].msg
        s.resp[c].rdy @= s.rd_resp[c].rdy | s.wr_resp[c].rdy

  def line_trace( s ):
    return ""


class DMARTL( Component ):

  def construct( s, cfg ):
    T = declare_ports( s, cfg )
    g = geometry( cfg )
    d, EW, ELEMS = g.d, g.entry_words, g.word_elems
    Word = word_type( ELEMS )

    s.ctrl = DMACtrlRTL( cfg )
    s.hbm_rd = DMAReadRTL( cfg, T["hbm"], True )
    s.ddr_rd = DMAReadRTL( cfg, T["ddr"], False )
    s.hbm_wr = DMAWriteRTL( cfg, T["hbm"], True )
    s.ddr_wr = DMAWriteRTL( cfg, T["ddr"], False )
    c = s.ctrl
    engines = [ s.hbm_rd, s.ddr_rd, s.hbm_wr, s.ddr_wr ]

    if cfg.dma_inst_queue:
      # the instructions queue in front of the control (`dma_inst_queue`)
      s.inst_q = FifoRTL( InstMsg, cfg.dma_inst_queue )
      s.inst_q.enq //= s.inst
      inst = s.inst_q.deq
    else:
      inst = s.inst
    c.inst_val //= inst.val;   c.inst_rdy //= inst.rdy
    c.inst_msg //= inst.msg
    c.done_val //= s.done.val;   c.done_rdy //= s.done.rdy
    s.done.msg //= DoneMsg( 1 )
    c.rd_val //= s.rf_rd.val;    c.rd_rdy //= s.rf_rd.rdy
    c.rd_msg //= s.rf_rd.msg
    for i, e in enumerate( engines ):
      c.busy[i] //= e.busy
      c.finish[i] //= e.finish
      e.start //= c.start[i]
    for e in engines[:2]:
      e.addr //= c.addr
      e.n_words //= c.n_words
      e.n_units //= c.n_units
      e.mpu //= c.mpu
      e.n_r //= c.n_r
      e.n_c //= c.n_c
      e.cmajor //= c.cmajor
    for e in engines[2:]:
      e.wa0 //= c.wa0
      e.tr //= c.tr
      e.strb //= c.strb
      e.n_acks //= c.n_acks
      e.n_entries //= c.n_entries
      e.rd_val //= s.rf_rd_resp.val
      for k in range( d ):
        e.rd_data[k] //= s.rf_rd_resp.msg.v[k]

    @update
    def up_dma_rd_resp_rdy():
      s.rf_rd_resp.rdy @= s.hbm_wr.rd_rdy | s.ddr_wr.rd_rdy

    # a memory's channels serve whichever of its engines is busy
    s.hbm_mux = DMAChannelMuxRTL( T["hbm"] )
    s.ddr_mux = DMAChannelMuxRTL( T["ddr"] )
    for name, mux, rd, wr in ( ( "hbm", s.hbm_mux, s.hbm_rd, s.hbm_wr ),
                               ( "ddr", s.ddr_mux, s.ddr_rd, s.ddr_wr ) ):
      mux.rd_busy //= rd.busy
      for ch in range( T[ name ].channels ):
        mux.rd_req[ch] //= rd.req[ch]
        mux.wr_req[ch] //= wr.req[ch]
        mux.rd_resp[ch] //= rd.resp[ch]
        mux.wr_resp[ch] //= wr.resp[ch]
        mux.req[ch] //= getattr( s, f"{name}_req" )[ch]
        mux.resp[ch] //= getattr( s, f"{name}_resp" )[ch]

    # outputs: an entry from either read engine, a tile from the HBM one
    s.entry_words = [ Wire( Word ) for _ in range( EW ) ]
    s.entry_idx = Wire( Bits32 )

    @update
    def up_dma_out():
      s.rf_wr.val @= ( s.hbm_rd.out_val & ~s.ctrl.sel_mpu ) | s.ddr_rd.out_val
      s.w.val @= s.hbm_rd.out_val & s.ctrl.sel_mpu
      if s.ctrl.sel_mpu:
        s.hbm_rd.out_rdy @= s.w.rdy
      else:
        s.hbm_rd.out_rdy @= s.rf_wr.rdy
      s.ddr_rd.out_rdy @= s.rf_wr.rdy
      if s.ctrl.sel_ddr:
        for w in range( EW ):
          s.entry_words[w] @= s.ddr_rd.out_words[w]
        s.entry_idx @= s.ddr_rd.out_idx
      else:
        for w in range( EW ):
          s.entry_words[w] @= s.hbm_rd.out_words[w]
        s.entry_idx @= s.hbm_rd.out_idx
      s.rf_wr.msg.entry @= s.ctrl.rf_base + s.entry_idx[ 0:VregT.nbits ]

    for k in range( d ):
      s.rf_wr.msg.data[k] //= s.entry_words[ k // ELEMS ][ 16 * ( k % ELEMS ):16 * ( k % ELEMS ) + 16 ]
    for k in range( d * cfg.l ):
      s.w.msg.v[k] //= s.hbm_rd.out_words[ k // ELEMS ][ 16 * ( k % ELEMS ):16 * ( k % ELEMS ) + 16 ]

  def line_trace( s ):
    return ( f"{_hs( s.inst )}({s.ctrl.line_trace()} {s.hbm_rd.line_trace()}{s.ddr_rd.line_trace()}"
             f"{s.hbm_wr.line_trace()}{s.ddr_wr.line_trace()}){_hs( s.rf_wr )}{_hs( s.w )}" )
