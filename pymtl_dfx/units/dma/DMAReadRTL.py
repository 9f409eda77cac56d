"""The read engine of one memory (datapath of `DMARTL`): per-channel request
walkers and the reassembly of words into output units.

Requests: the transfer is a run of segments of contiguous words, one for
an entry read (addr, n_words) and one per tile for a matrix read (`mpu`:
the tile at addr + gi*TW, TW words, gi from a `TileWalkerRTL` walking the
grid in tile order, zigzag or raster: `DFXConfig.mpu_raster_walk`).  Within a segment channel c walks its own addresses
base + ((c - base) mod C), +C, +2C, ... below the segment's end, one
request whenever its req is ready, independently of the other channels.
The next segment starts in the cycle the last channel is through with the
current one (its address comes from the walker's next grid index), so a
tile of TW = C words (the paper's config) goes out every cycle.

Reassembly: the memory holds each channel's responses in order until taken,
so the engine needs no buffer of its own besides the output unit.  A beat
takes P = min(C, unit words) words at once, word j from channel
(rot + j) mod C (the rotation mux), when all P are valid and the output
register is free or leaving this cycle; rot then advances by P (TW >= C:
every tile then starts on the same channel).  With TW < C a tile is one
beat, and the next tile's first channel comes from a second walker that
follows the responses.  After unit/P beats the unit is complete and is
offered on `out` (entry: EW words, tile with `mpu`: l*EW words).  At
P = unit words that is one unit per cycle.  `DMACL.ReadEngineCL` is the
same engine on Python values.
"""

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ...isa.fields import VECS_BITS
from ...lib.tile_walker import tile_walker_rtl
from .streams import geometry, log2

AddrT = Bits34        # word addresses: EXT_BITS plus room past the last word
GridT = mk_bits( VECS_BITS )   # tile-grid counts and indices (at most vecs tiles)


def read_sizes( cfg, spec, tiles ):
  """(C, [(unit words, beat words P), ...] per mode: entry, then tile)."""
  g = geometry( cfg )
  C = spec.channels
  modes = [ ( g.entry_words, g.read_beat( C, g.entry_words ) ) ]
  if tiles:
    modes.append( ( g.tile_words, g.read_beat( C, g.tile_words ) ) )
  return C, modes


def check_channels( spec ):
  C = spec.channels
  if C < 2 or C & ( C - 1 ):
    raise ValueError( f"DMA: {spec.name} has {C} channels; the DMA needs a power of two >= 2" )


class DMAReadRTL( Component ):

  def construct( s, cfg, spec, tiles ):
    check_channels( spec )
    C, modes = read_sizes( cfg, spec, tiles )
    logC = log2( C )
    RB = spec.row_bits
    T, Word = spec.types, spec.Word
    BUFW = max( u for u, _ in modes )
    NB = max( u // p for u, p in modes )
    IdxT = mk_bits( logC )
    PW = logC + 1
    PT = mk_bits( PW )
    AW = AddrT.nbits
    BeatT = mk_bits( max( 1, ( NB - 1 ).bit_length() ) )
    UnitT = Bits32
    U_e, P_e = modes[0]
    U_t, P_t = modes[-1]
    B_e, B_t = U_e // P_e, U_t // P_t
    PMAX = C       # rotated words: indexed by channel-wide selects

    s.start = InPort()
    s.addr = InPort( AddrT )
    s.n_words = InPort( AddrT )
    s.n_units = InPort( UnitT )
    s.mpu = InPort()                  # tiles (ignored without `tiles`)
    s.n_r = InPort( GridT )           # the tile grid (with mpu)
    s.n_c = InPort( GridT )
    s.cmajor = InPort()
    s.req = [ SendIfcRTL( T["Req"] ) for _ in range( C ) ]
    s.resp = [ RecvIfcRTL( T["Resp"] ) for _ in range( C ) ]
    s.out_val = OutPort()
    s.out_rdy = InPort()
    s.out_words = [ OutPort( Word ) for _ in range( BUFW ) ]
    s.out_idx = OutPort( UnitT )      # units already sent
    s.busy = OutPort()
    s.finish = OutPort()

    s.busy_r = Wire()
    s.tile = Wire()
    s.rq = Wire()                     # segments left to request
    s.base = Wire( AddrT )            # the instruction's addr
    s.na = [ Wire( AddrT ) for _ in range( C ) ]
    s.stop = Wire( AddrT )            # end of the segment being requested
    s.thru = [ Wire() for _ in range( C ) ]   # channel is through with the segment
    s.seg_done = Wire()
    s.seg_last = Wire()               # no segment after this one
    s.nxt_base = Wire( AddrT )        # the next segment (tile)
    s.rot_next = Wire( IdxT )
    s.start_tile = Wire()
    s.rot = Wire( IdxT )
    s.cnt = Wire( BeatT )
    s.full = Wire()
    s.units = Wire( UnitT )
    s.n_units_r = Wire( UnitT )
    s.obuf = [ Wire( Word ) for _ in range( BUFW ) ]

    s.resp_val = [ Wire() for _ in range( C ) ]
    s.resp_data = [ Wire( Word ) for _ in range( C ) ]
    s.req_fire = [ Wire() for _ in range( C ) ]
    s.rdata = [ Wire( Word ) for _ in range( PMAX ) ]
    s.rval = [ Wire() for _ in range( PMAX ) ]
    s.P = Wire( PT )
    s.beat_val = Wire()
    s.beat_go = Wire()
    s.last_beat = Wire()
    # which beat of a unit writes buffer word i, and from which rotated word
    s.beat_e = [ Wire( BeatT ) for _ in range( BUFW ) ]
    s.beat_t = [ Wire( BeatT ) for _ in range( BUFW ) ]
    s.sel_e = [ Wire( IdxT ) for _ in range( BUFW ) ]
    s.sel_t = [ Wire( IdxT ) for _ in range( BUFW ) ]
    for i in range( BUFW ):
      s.beat_e[i] //= BeatT( min( i // P_e, NB - 1 ) )
      s.beat_t[i] //= BeatT( i // P_t )
      s.sel_e[i] //= IdxT( i % P_e )
      s.sel_t[i] //= IdxT( i % P_t )
    s.has_e = [ Wire() for _ in range( BUFW ) ]    # word i is part of an entry
    for i in range( BUFW ):
      s.has_e[i] //= Bits1( i < U_e )

    for c in range( C ):
      s.resp_val[c] //= s.resp[c].val
      s.resp_data[c] //= s.resp[c].msg.data
      s.req[c].msg.wr //= 0
      s.req[c].msg.strb //= 0
      s.req[c].msg.data //= 0
      s.req[c].msg.row //= s.na[c][ logC:logC + RB ]
    for i in range( BUFW ):
      s.out_words[i] //= s.obuf[i]
    s.out_val //= s.full
    s.out_idx //= s.units
    s.busy //= s.busy_r

    JUMP = tiles and U_t < C          # a tile's first channel changes per tile
    logTW = log2( U_t )
    if tiles:
      s.rq_walk = tile_walker_rtl( GridT.nbits, cfg.psum_entries, cfg.mpu_raster_walk )
      s.rq_walk.start //= s.start_tile
      s.rq_walk.n_r //= s.n_r
      s.rq_walk.n_c //= s.n_c
      s.rq_walk.cmajor //= s.cmajor
      s.rq_walk.step //= lambda: s.seg_done & s.tile

      @update
      def up_read_next_seg():
        s.start_tile @= s.start & s.mpu
        s.nxt_base @= s.base + ( zext( s.rq_walk.nxt_gi, AW ) << logTW )
        s.seg_last @= ~s.tile | s.rq_walk.last
    else:
      s.start_tile //= 0
      s.nxt_base //= AddrT( 0 )
      s.seg_last //= 1

    if JUMP:
      s.rs_walk = tile_walker_rtl( GridT.nbits, cfg.psum_entries, cfg.mpu_raster_walk )
      s.rs_walk.start //= s.start_tile
      s.rs_walk.n_r //= s.n_r
      s.rs_walk.n_c //= s.n_c
      s.rs_walk.cmajor //= s.cmajor
      s.rs_walk.step //= lambda: s.beat_go & s.tile

      @update
      def up_read_rot_jump():
        if s.tile:
          s.rot_next @= s.base[ 0:logC ] + ( s.rs_walk.nxt_gi[ 0:logC ] << logTW )
        else:
          s.rot_next @= s.rot + s.P[ 0:logC ]
    else:
      @update
      def up_read_rot():
        s.rot_next @= s.rot + s.P[ 0:logC ]

    @update
    def up_read_req():
      s.seg_done @= s.busy_r & s.rq
      for c in range( C ):
        s.req[c].val @= s.busy_r & s.rq & ( s.na[c] < s.stop )
        s.req_fire[c] @= s.busy_r & s.rq & ( s.na[c] < s.stop ) & s.req[c].rdy
        s.thru[c] @= ~( s.na[c] < s.stop ) | ( s.req_fire[c] & ~( s.na[c] + AddrT( C ) < s.stop ) )
        s.seg_done @= s.seg_done & s.thru[c]

    @update
    def up_read_beat():
      if s.tile:
        s.P @= PT( P_t )
        s.last_beat @= s.cnt == BeatT( B_t - 1 )
      else:
        s.P @= PT( P_e )
        s.last_beat @= s.cnt == BeatT( B_e - 1 )
      s.beat_val @= 1
      for j in range( PMAX ):
        s.rdata[j] @= s.resp_data[ s.rot + IdxT( j ) ]
        s.rval[j] @= s.resp_val[ s.rot + IdxT( j ) ]
        if PT( j ) < s.P:
          s.beat_val @= s.beat_val & s.rval[j]
      s.beat_go @= s.busy_r & s.beat_val & ( ~s.full | s.out_rdy )
      for c in range( C ):
        s.resp[c].rdy @= s.beat_go & ( zext( IdxT( c ) - s.rot, PW ) < s.P )
      s.finish @= s.busy_r & ( s.units == s.n_units_r )

    @update_ff
    def up_read_ff():
      if s.reset:
        s.busy_r <<= 0
        s.full <<= 0
      elif s.start:
        s.busy_r <<= 1
        s.tile <<= s.mpu
        s.base <<= s.addr
        s.rq <<= s.n_units != 0
        for c in range( C ):
          s.na[c] <<= s.addr + zext( IdxT( c ) - s.addr[ 0:logC ], AW )
        if s.mpu:
          s.stop <<= s.addr + AddrT( U_t )      # the first tile is grid index 0
        else:
          s.stop <<= s.addr + s.n_words
        s.rot <<= s.addr[ 0:logC ]
        s.cnt <<= 0
        s.full <<= 0
        s.units <<= 0
        s.n_units_r <<= s.n_units
      else:
        if s.finish:
          s.busy_r <<= 0
        for c in range( C ):
          if s.req_fire[c]:
            s.na[c] <<= s.na[c] + AddrT( C )
        if s.seg_done:
          if s.seg_last:
            s.rq <<= 0
          else:
            s.stop <<= s.nxt_base + AddrT( U_t )
            for c in range( C ):
              s.na[c] <<= s.nxt_base + zext( IdxT( c ) - s.nxt_base[ 0:logC ], AW )
        if s.beat_go:
          for i in range( BUFW ):
            if s.tile:
              if s.cnt == s.beat_t[i]:
                s.obuf[i] <<= s.rdata[ s.sel_t[i] ]
            elif s.has_e[i] & ( s.cnt == s.beat_e[i] ):
              s.obuf[i] <<= s.rdata[ s.sel_e[i] ]
          if s.last_beat:
            s.cnt <<= 0
          else:
            s.cnt <<= s.cnt + 1
          s.rot <<= s.rot_next
        s.full <<= ( s.beat_go & s.last_beat ) | ( s.full & ~s.out_rdy )
        if s.full & s.out_rdy:
          s.units <<= s.units + 1

  def line_trace( s ):
    return f"{'R' if s.busy_r else ' '}{int( s.units )}{'*' if s.full else ' '}"
