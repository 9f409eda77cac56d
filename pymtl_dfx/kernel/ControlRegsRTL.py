"""`s_axi_control` at RTL: the kernel's AXI4-Lite slave with Vitis `ap_ctrl_hs`.

Every offset comes from `interface.register_map(cfg)`: the four control
registers (CTRL, GIE, IER, ISR), the arguments ("arg", written by the host,
read back as written) and the status words ("status", read-only inputs
`st_<name>` from `KernelStatusRTL`).  A 64-bit register is two words, lo at
its offset and hi at offset + 4.

Control protocol (as an `ap_ctrl_hs` RTL kernel must behave; the same rules
as the `s_axi_control` Vitis HLS writes for a non-pipelined kernel):

- CTRL bit 0 `ap_start`: set by a host write with bit 0 = 1 (a write of 0
  does not clear it).  A run begins in the next cycle in which the kernel
  has no run in progress: `busy` rises, every `arg_<name>` output takes the
  value of its register and `start` pulses for one cycle (the args are
  already the latched ones in that cycle).  `ap_start` stays 1 during the
  run and clears at `ap_ready`; with `auto_restart` set it stays 1, so the
  next run begins right after (two cycles after `done`).
- A start while busy is dropped: `ap_start` is already 1 then and a write of
  1 changes nothing, and it clears at the end of the run, so no second run is
  queued.  This is the HLS behaviour, and XRT relies on it: it writes
  `ap_start` only after it has seen the kernel idle or done, and a held start
  would launch a run the host never asked for, with whatever arguments were
  half-rewritten at that moment.  (A write in the very cycle of `done`
  counts as the next start: the run has ended at that edge, as in HLS.)
- CTRL bit 1 `ap_done`: set by the kernel's `done` pulse (only while a run is
  in progress), cleared when the host reads CTRL (the read returns 1 once).
  A `done` in the cycle of the read sets it again, so it is never lost.
- CTRL bit 2 `ap_idle`: 1 when no run is in progress and none is pending
  (`ap_start` is 0).  It is 0 in the cycle between the host's start and the
  run's first cycle, so a host that polls for `ap_done | ap_idle` (as XRT's
  scheduler does) never mistakes that window for a finished run.
- CTRL bit 3 `ap_ready`: a non-pipelined kernel takes new inputs when it
  finishes, so `ap_ready` is set with `ap_done` and, like it, cleared by a
  read of CTRL.
- CTRL bit 7 `auto_restart`: written by every host write of CTRL that
  enables byte 0 (so a plain start, CTRL = 1, turns it off).
- GIE bit 0: global interrupt enable.  IER bit 0: interrupt on `ap_done`,
  bit 1: on `ap_ready`.  ISR bit 0/1 are set when `ap_done`/`ap_ready` occurs
  while the IER bit is set (as in HLS: a run that finished with interrupts
  disabled leaves no stale ISR bit behind to fire when they are enabled),
  and a host write toggles each bit it writes as 1 (write back what was read
  to clear).  `interrupt` = GIE & |(ISR & IER).

Bus rules: AW and W are taken in either order (each has its own one-entry
holding register), the write happens when both are held and the previous
response has been taken, BRESP and RRESP are always OKAY.  Byte strobes are
honoured on every write (on CTRL, GIE, IER and ISR the control bits live in
byte 0, so a write without strobe 0 leaves them alone).  Addresses are word
addresses (the low two bits are ignored, AXI4-Lite lanes come from the
strobes); an address the map does not name reads 0 and a write to it is
dropped, as Vitis kernels do.  A 64-bit status register is read as two
words: the counters stop at `done`, so a read after `ap_done` is
consistent.
"""

from pymtl3 import *

from .ArgWordRTL import ArgWordRTL
from .axi import LITE_DATA_BITS, AxiLiteSlaveIfc, RESP_OKAY
from .interface import CTRL_ADDR_BITS, register_map

WORD_BYTES = LITE_DATA_BITS // 8


def word_layout( cfg ):
  """The map as 32-bit words: (words, args) where words[i] says what word i
  (byte offset 4 i) is: ("ctrl", name), ("arg", reg, half), ("status", reg,
  half) or None (reads 0); args is the arg registers in map order.  The
  args sit in one contiguous block of words (their store is indexed from
  the first), checked here."""
  regs = register_map( cfg )
  end = max( r.offset + r.bits // 8 for r in regs )
  words = [ None ] * ( end // WORD_BYTES )
  for r in regs:
    assert r.offset % WORD_BYTES == 0 and r.bits in ( 32, 64 ), r
    for half in range( r.bits // LITE_DATA_BITS ):
      at = r.offset // WORD_BYTES + half
      assert words[ at ] is None, f"{r.name} overlaps another register"
      words[ at ] = ( r.kind, r.name ) if r.kind == "ctrl" else ( r.kind, r, half )
  args = [ r for r in regs if r.kind == "arg" ]
  assert args, "the register map has no arguments"
  return words, args


class ControlRegsRTL( Component ):

  # its `interrupt` port has the name Vitis requires, a C++ word that
  # Verilator warns of where the module is a class of its own
  verilator_waivers = ( "SYMRSVDWORD", )

  def construct( s, cfg ):
    assert LITE_DATA_BITS == 32
    words, args = word_layout( cfg )
    regs = register_map( cfg )
    ctrl_at = { r.name: r.offset // WORD_BYTES for r in regs if r.kind == "ctrl" }
    W_CTRL, W_GIE, W_IER, W_ISR = ( ctrl_at[ n ] for n in ( "CTRL", "GIE", "IER", "ISR" ) )
    WB = CTRL_ADDR_BITS - 2                 # word-address bits
    NW = len( words )
    RB = max( 1, clog2( NW ) )
    A0 = args[ 0 ].offset // WORD_BYTES     # the first argument word
    NA = args[ -1 ].offset // WORD_BYTES + args[ -1 ].bits // 32 - A0
    assert all( A0 <= r.offset // WORD_BYTES < A0 + NA for r in args )
    # the map fits the address space, so aw_word - A0 below A0 wraps past the block
    assert NW < ( 1 << WB ) and A0 + NA <= NW

    s.s_axi = AxiLiteSlaveIfc( CTRL_ADDR_BITS )
    s.start = OutPort()
    s.done = InPort()
    s.interrupt = OutPort()
    s.busy = OutPort()
    for r in args:
      setattr( s, f"arg_{r.name}", OutPort( r.bits ) )
    for w in words:
      if w and w[ 0 ] == "status" and w[ 2 ] == 0:
        setattr( s, f"st_{w[ 1 ].name}", InPort( w[ 1 ].bits ) )

    # write channel: one held address, one held data beat, the response
    s.aw_full = Wire()
    s.aw_word = Wire( WB )
    s.w_full = Wire()
    s.w_data = Wire( 32 )
    s.w_strb = Wire( 4 )
    s.b_valid = Wire()
    s.w_fire = Wire()              # the held write happens at this edge
    s.w_mask = Wire( 32 )
    s.w_rel = Wire( WB )           # word index into the argument block
    # read channel
    s.r_valid = Wire()
    s.r_data = Wire( 32 )
    s.r_word = Wire( WB )
    s.r_next = Wire( 32 )
    s.r_idx = Wire( RB )   # r_word cut to the map's size (below NW only)
    s.ar_fire = Wire()
    # ap_ctrl_hs state
    s.ap_start = Wire()
    s.ap_done = Wire()
    s.ap_ready = Wire()
    s.auto_restart = Wire()
    s.running = Wire()
    s.start_r = Wire()
    s.gie = Wire()
    s.ier_done = Wire()
    s.ier_ready = Wire()
    s.isr_done = Wire()
    s.isr_ready = Wire()
    s.go = Wire()                  # a run begins at this edge
    s.run_done = Wire()
    s.wr_ctrl0 = Wire()            # a write of CTRL with byte 0 enabled
    s.wr_gie0 = Wire()
    s.wr_ier0 = Wire()
    s.wr_isr0 = Wire()
    s.rd_ctrl = Wire()
    # the argument registers as the host wrote them, and as latched at start
    s.arg_words = [ ArgWordRTL() for _ in range( NA ) ]
    s.arg_we = [ Wire() for _ in range( NA ) ]
    for j in range( NA ):
      s.arg_words[ j ].we //= s.arg_we[ j ]
      s.arg_words[ j ].wdata //= s.w_data
      s.arg_words[ j ].wmask //= s.w_mask
      s.arg_words[ j ].go //= s.go

    # what every word of the map reads
    s.ctrl_word = Wire( 32 )
    s.gie_word = Wire( 32 )
    s.ier_word = Wire( 32 )
    s.isr_word = Wire( 32 )
    s.rd_words = [ Wire( 32 ) for _ in range( NW ) ]
    ctrl_words = dict( CTRL=s.ctrl_word, GIE=s.gie_word, IER=s.ier_word, ISR=s.isr_word )
    for i, w in enumerate( words ):
      if w is None:
        s.rd_words[ i ] //= 0
      elif w[ 0 ] == "ctrl":
        s.rd_words[ i ] //= ctrl_words[ w[ 1 ] ]
      elif w[ 0 ] == "arg":
        s.rd_words[ i ] //= s.arg_words[ i - A0 ].store
      else:
        port = getattr( s, f"st_{w[ 1 ].name}" )
        s.rd_words[ i ] //= port[ 32 * w[ 2 ] : 32 * w[ 2 ] + 32 ]
    for r in args:
      port = getattr( s, f"arg_{r.name}" )
      j = r.offset // WORD_BYTES - A0
      port[ 0:32 ] //= s.arg_words[ j ].latch
      if r.bits == 64:
        port[ 32:64 ] //= s.arg_words[ j + 1 ].latch

    s.start //= s.start_r
    s.busy //= s.running

    @update
    def up_bus():
      s.s_axi.awready @= ~s.aw_full
      s.s_axi.wready @= ~s.w_full
      s.s_axi.bvalid @= s.b_valid
      s.s_axi.bresp @= RESP_OKAY
      s.s_axi.arready @= ~s.r_valid
      s.s_axi.rvalid @= s.r_valid
      s.s_axi.rdata @= s.r_data
      s.s_axi.rresp @= RESP_OKAY
      s.w_fire @= s.aw_full & s.w_full & ~s.b_valid
      s.ar_fire @= s.s_axi.arvalid & ~s.r_valid
      s.w_mask @= concat( sext( s.w_strb[ 3 ], 8 ), sext( s.w_strb[ 2 ], 8 ),
                          sext( s.w_strb[ 1 ], 8 ), sext( s.w_strb[ 0 ], 8 ) )
      s.w_rel @= s.aw_word - A0
      s.r_word @= s.s_axi.araddr[ 2:CTRL_ADDR_BITS ]
      s.r_idx @= s.r_word[ 0:RB ]
      if s.r_word < NW:
        s.r_next @= s.rd_words[ s.r_idx ]
      else:
        s.r_next @= 0

    @update
    def up_decode():
      s.wr_ctrl0 @= s.w_fire & ( s.aw_word == W_CTRL ) & s.w_strb[ 0 ]
      s.wr_gie0 @= s.w_fire & ( s.aw_word == W_GIE ) & s.w_strb[ 0 ]
      s.wr_ier0 @= s.w_fire & ( s.aw_word == W_IER ) & s.w_strb[ 0 ]
      s.wr_isr0 @= s.w_fire & ( s.aw_word == W_ISR ) & s.w_strb[ 0 ]
      s.rd_ctrl @= s.ar_fire & ( s.r_word == W_CTRL )
      s.go @= s.ap_start & ~s.running
      s.run_done @= s.done & s.running

    @update
    def up_words():
      s.ctrl_word @= 0
      s.ctrl_word[ 0 ] @= s.ap_start
      s.ctrl_word[ 1 ] @= s.ap_done
      s.ctrl_word[ 2 ] @= ~s.running & ~s.ap_start
      s.ctrl_word[ 3 ] @= s.ap_ready
      s.ctrl_word[ 7 ] @= s.auto_restart
      s.gie_word @= zext( s.gie, 32 )
      s.ier_word @= zext( concat( s.ier_ready, s.ier_done ), 32 )
      s.isr_word @= zext( concat( s.isr_ready, s.isr_done ), 32 )
      s.interrupt @= s.gie & ( ( s.isr_done & s.ier_done ) | ( s.isr_ready & s.ier_ready ) )

    @update_ff
    def up_write_channel():
      if s.reset:
        s.aw_full <<= 0
        s.w_full <<= 0
        s.b_valid <<= 0
      else:
        if s.w_fire:
          s.aw_full <<= 0
          s.w_full <<= 0
          s.b_valid <<= 1
        else:
          if s.s_axi.awvalid & ~s.aw_full:
            s.aw_full <<= 1
            s.aw_word <<= s.s_axi.awaddr[ 2:CTRL_ADDR_BITS ]
          if s.s_axi.wvalid & ~s.w_full:
            s.w_full <<= 1
            s.w_data <<= s.s_axi.wdata
            s.w_strb <<= s.s_axi.wstrb
          if s.b_valid & s.s_axi.bready:
            s.b_valid <<= 0

    @update_ff
    def up_read_channel():
      if s.reset:
        s.r_valid <<= 0
      elif s.ar_fire:
        s.r_valid <<= 1
        s.r_data <<= s.r_next
      elif s.s_axi.rready:
        s.r_valid <<= 0

    @update
    def up_arg_we():
      for j in range( NA ):
        s.arg_we[ j ] @= s.w_fire & ( s.w_rel == j )

    @update_ff
    def up_ctrl():
      if s.reset:
        s.ap_start <<= 0
        s.ap_done <<= 0
        s.ap_ready <<= 0
        s.auto_restart <<= 0
        s.running <<= 0
        s.start_r <<= 0
        s.gie <<= 0
        s.ier_done <<= 0
        s.ier_ready <<= 0
        s.isr_done <<= 0
        s.isr_ready <<= 0
      else:
        if s.wr_ctrl0 & s.w_data[ 0 ]:
          s.ap_start <<= 1
        elif s.run_done:
          s.ap_start <<= s.auto_restart
        if s.wr_ctrl0:
          s.auto_restart <<= s.w_data[ 7 ]
        if s.go:
          s.running <<= 1
        elif s.run_done:
          s.running <<= 0
        s.start_r <<= s.go
        if s.run_done:
          s.ap_done <<= 1
          s.ap_ready <<= 1
        elif s.rd_ctrl:
          s.ap_done <<= 0
          s.ap_ready <<= 0
        if s.wr_gie0:
          s.gie <<= s.w_data[ 0 ]
        if s.wr_ier0:
          s.ier_done <<= s.w_data[ 0 ]
          s.ier_ready <<= s.w_data[ 1 ]
        if s.run_done & s.ier_done:
          s.isr_done <<= 1
        elif s.wr_isr0:
          s.isr_done <<= s.isr_done ^ s.w_data[ 0 ]
        if s.run_done & s.ier_ready:
          s.isr_ready <<= 1
        elif s.wr_isr0:
          s.isr_ready <<= s.isr_ready ^ s.w_data[ 1 ]

  def line_trace( s ):
    st = "".join( c if v else "." for c, v in (
      ( "S", s.ap_start ), ( "B", s.running ), ( "D", s.ap_done ), ( "R", s.ap_ready ),
      ( "A", s.auto_restart ), ( "I", s.interrupt ) ) )
    aw = f"aw{int( s.aw_word ) * 4:03x}" if s.aw_full else "....."
    w = f"w{int( s.w_data ):08x}" if s.w_full else "........."
    r = f"r{int( s.r_data ):08x}" if s.r_valid else "........."
    return f"[{st} {aw} {w} {'b' if s.b_valid else '.'} {r}]"
