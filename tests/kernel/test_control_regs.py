"""The control protocol of s_axi_control (ControlRegsRTL + KernelStatusRTL)
driven by the host's own code (control.KernelControl over
lite_master.LiteMasterSim), at rtl in pymtl3's simulation and, under
--test-verilog, the same tests in Verilator: arguments read back and latched
at start, done clear-on-read, idle/ready, interrupts through GIE/IER/ISR, a
start while busy ignored, auto_restart, sticky errors, exact cycle and busy
counters, partial strobes, unmapped addresses, both AW/W orders, and the
host side's bad inputs."""

import pytest

from pymtl3 import *

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.kernel.axi import AXI4_LITE, RESP_SLVERR, AxiLiteSlaveIfc, flat_ports
from pymtl_dfx.kernel.control import (AP_DONE, AP_IDLE, AP_READY, AP_START, AUTO_RESTART,
                                      KernelArgError, KernelControl, KernelTimeout)
from pymtl_dfx.kernel.interface import CTRL_ADDR_BITS, ERROR_BITS, register_map
from pymtl_dfx.kernel.lite_master import LiteMasterSim, LiteResponseError, LiteTimeout
from pymtl_dfx.testing.core_mixing import dfx_config
from pymtl_dfx.units.control.msgs import UNITS

from ctrl_top import PATTERN, PREFIX, build, busy_reference, finish

CFG = dfx_config( d=8 )
REGS = { r.name: r for r in register_map( CFG ) }
ARGS = [ r for r in REGS.values() if r.kind == "arg" ]


class Bench:
  def __init__( s, cmdline_opts, w_first=False, cfg=CFG ):
    s.cfg = cfg
    s.top = build( cfg, cmdline_opts )
    s.io = LiteMasterSim( s.top, PREFIX, s.top.sim_tick, w_first=w_first )
    s.ctl = KernelControl( s.io, cfg )
    s.arg_regs = s.ctl.args

  def cycles( s, n=1 ):
    for _ in range( n ):
      s.top.sim_eval_combinational()
      s.top.sim_tick()

  def pulse( s, port, value=1 ):
    p = getattr( s.top, port )
    p @= value
    s.cycles()
    p @= 0

  def args( s, inst_count, seed=0 ):
    """Distinct values for every argument (64-bit ones with both words set)."""
    out = {}
    for i, r in enumerate( s.arg_regs ):
      out[ r.name ] = ( ( 0x1234_5678_0000_0000 * ( r.bits == 64 ) ) ^ ( 0x0101_0101 * ( i + 1 ) )
                        ^ ( seed << 8 ) ) & ( ( 1 << r.bits ) - 1 )
    out[ "inst_count" ] = inst_count
    return out

  def run( s, n, polls=200 ):
    s.ctl.set_args( **s.args( n ) )
    s.ctl.start()
    return s.ctl.wait_done( polls, between=s.cycles )


@pytest.fixture
def bench( cmdline_opts, request ):
  b = Bench( cmdline_opts, w_first=getattr( request, "param", False ) )
  yield b
  finish( b.top )


LEVEL = pytest.mark.parametrize( "level", [ "rtl" ] )
ORDERS = pytest.mark.parametrize( "bench", [ False, True ], indirect=True,
                                  ids=[ "aw_with_w", "w_before_aw" ] )


@LEVEL
@ORDERS
def test_args_read_back_and_latched_at_start( level, bench ):
  b = bench
  first = b.args( 40, seed=1 )
  b.ctl.set_args( **first )
  aw, w, _ = b.io.last_write          # the order this case drives
  assert ( w < aw ) if b.io.w_first else ( w == aw ), b.io.last_write
  assert b.ctl.read_args() == first
  b.ctl.start()
  b.cycles( 2 )
  assert int( b.top.busy ) == 1
  second = b.args( 5, seed=2 )
  assert second != first
  b.ctl.set_args( **second )          # rewritten during the run
  assert b.ctl.read_args() == second
  for r in ARGS:                      # the run keeps what it started with
    assert int( getattr( b.top, f"arg_{r.name}" ) ) == first[ r.name ], r.name
  b.ctl.wait_done( 200, between=b.cycles )
  assert b.ctl.status()[ "cycles" ] == 40        # inst_count as latched, not 5
  b.ctl.start()
  b.ctl.wait_done( 200, between=b.cycles )
  for r in ARGS:
    assert int( getattr( b.top, f"arg_{r.name}" ) ) == second[ r.name ], r.name
  assert b.ctl.status()[ "cycles" ] == 5


@LEVEL
def test_done_clear_on_read_idle_and_ready( level, bench ):
  b = bench
  assert b.ctl.read_ctrl() == AP_IDLE
  b.ctl.set_args( **b.args( 30 ) )
  b.ctl.start()
  ctrl = b.ctl.read_ctrl()            # pending or running: never idle
  assert ctrl & AP_START and not ctrl & ( AP_IDLE | AP_DONE | AP_READY ), hex( ctrl )
  b.cycles( 40 )                      # finished, nobody has read CTRL yet
  assert int( b.top.busy ) == 0
  assert b.ctl.read_ctrl() == AP_DONE | AP_IDLE | AP_READY
  assert b.ctl.read_ctrl() == AP_IDLE             # done and ready cleared by the read
  assert b.ctl.poll_done()                        # ... but remembered by the host side
  b.ctl.start()
  assert not b.ctl.poll_done()                    # until the next start
  assert int( b.top.runs ) == 2


@LEVEL
def test_interrupts_through_gie_ier_isr( level, bench ):
  b = bench
  b.run( 6 )
  assert b.ctl.isr() == 0 and int( b.top.irq ) == 0      # IER 0: no ISR bit
  b.ctl.enable_interrupts( done=True )
  b.cycles( 3 )
  assert b.ctl.isr() == 0 and int( b.top.irq ) == 0      # nothing stale
  b.run( 6 )
  assert b.ctl.isr() == 1 and int( b.top.irq ) == 1
  b.io.write32( REGS[ "ISR" ].offset, 1 )                      # toggle: clears
  assert b.ctl.isr() == 0 and int( b.top.irq ) == 0
  b.io.write32( REGS[ "ISR" ].offset, 1 )                      # toggle: sets again
  assert b.ctl.isr() == 1 and int( b.top.irq ) == 1
  b.io.write32( REGS[ "GIE" ].offset, 0 )
  assert int( b.top.irq ) == 0 and b.ctl.isr() == 1      # GIE masks, ISR stays
  assert b.ctl.clear_isr() == 1 and b.ctl.isr() == 0
  b.ctl.enable_interrupts( done=False, ready=True )
  b.run( 6 )
  assert b.ctl.isr() == 2 and int( b.top.irq ) == 1      # ready pulses with done
  b.io.write32( REGS[ "IER" ].offset, 1 )                      # ready no longer enabled
  assert int( b.top.irq ) == 0
  assert b.ctl.clear_isr() == 2 and b.ctl.isr() == 0


@LEVEL
def test_start_while_busy_is_ignored( level, bench ):
  b = bench
  b.ctl.set_args( **b.args( 25 ) )
  b.ctl.start()
  b.cycles( 5 )
  b.ctl.start()                       # a second start during the run: dropped
  assert b.ctl.read_ctrl() & AP_START
  b.ctl.wait_done( 200, between=b.cycles )
  b.cycles( 30 )
  assert int( b.top.runs ) == 1
  assert b.ctl.read_ctrl() == AP_IDLE
  assert b.ctl.status()[ "cycles" ] == 25


@LEVEL
def test_auto_restart( level, bench ):
  b = bench
  b.ctl.set_args( **b.args( 11 ) )
  b.ctl.start( auto_restart=True )
  assert b.ctl.read_ctrl() & AUTO_RESTART
  # polled back to back (2 cycles a read; a run and its restart take 13),
  # every phase of the restart is read: never idle, done seen each run
  ctrls = [ b.ctl.read_ctrl() for _ in range( 40 ) ]
  assert not any( c & AP_IDLE for c in ctrls ), [ hex( c ) for c in ctrls ]
  assert all( c & AP_START and c & AUTO_RESTART for c in ctrls )
  runs = int( b.top.runs )
  assert runs >= 6 and sum( bool( c & AP_DONE ) for c in ctrls ) >= runs - 1, runs
  b.io.write32( REGS[ "CTRL" ].offset, 0 )        # auto_restart off: this run is the last
  b.cycles( 30 )
  last = int( b.top.runs )
  assert runs <= last <= runs + 1
  b.cycles( 30 )
  assert int( b.top.runs ) == last
  assert b.ctl.read_ctrl() & ( AP_IDLE | AP_START | AUTO_RESTART ) == AP_IDLE


@LEVEL
def test_errors_are_sticky( level, bench ):
  b = bench
  b.ctl.set_args( **b.args( 12 ) )
  seen = 0
  for name, bit in ERROR_BITS.items():     # one error per run; each stays after the next start
    b.ctl.start()
    b.cycles( 3 )
    b.pulse( "inject_err", 1 << bit )
    b.ctl.wait_done( 200, between=b.cycles )
    seen |= 1 << bit
    assert b.ctl.status()[ "errors" ] == seen, name
  assert seen == sum( 1 << b for b in ERROR_BITS.values() )


@LEVEL
def test_counters_exact( level, bench ):
  b = bench
  for n, tx, rx, stalls in ( ( 12, 3, 1, 2 ), ( 10, 1, 4, 0 ) ):
    b.ctl.set_args( **b.args( n ) )
    b.ctl.start()
    b.cycles( 1 )
    for _ in range( tx ):
      b.pulse( "inject_tx_fire" )
    for _ in range( rx ):
      b.pulse( "inject_rx_fire" )
    for _ in range( stalls ):
      b.pulse( "inject_tx_stall" )
    b.ctl.wait_done( 200, between=b.cycles )
    st = b.ctl.status()
    assert set( st ) == { r.name for r in REGS.values() if r.kind == "status" }
    want = { f"busy_{u}": busy_reference( p, n ) for u, p in zip( UNITS, PATTERN ) }
    assert want == { "busy_dma": 5, "busy_mpu": 4, "busy_vpu": 6, "busy_router": 0 }
    assert { k: st[ k ] for k in want } == want
    assert st[ "cycles" ] == n
    assert ( st[ "ring_tx_beats" ], st[ "ring_rx_beats" ], st[ "ring_tx_stalls" ] ) == \
           ( tx, rx, stalls )
    assert st[ "errors" ] == 0


@LEVEL
@ORDERS
def test_partial_strobes( level, bench ):
  b = bench
  lo = REGS[ "inst_addr" ].offset
  b.io.write32( lo, 0x11223344 )
  b.io.write32( lo + 4, 0x55667788 )
  b.io.write32( lo, 0xAABBCCDD, strb=0b0101 )
  b.io.write32( lo + 4, 0xEEFF0011, strb=0b1000 )
  assert b.io.read32( lo ) == 0x11BB33DD
  assert b.io.read32( lo + 4 ) == 0xEE667788
  b.io.write32( REGS[ "CTRL" ].offset, AP_START, strb=0b1110 )   # byte 0 not enabled
  b.cycles( 5 )
  assert int( b.top.runs ) == 0 and b.ctl.read_ctrl() == AP_IDLE
  b.io.write32( REGS[ "GIE" ].offset, 1, strb=0b0010 )
  assert b.io.read32( REGS[ "GIE" ].offset ) == 0


@LEVEL
def test_unmapped_and_read_only( level, bench ):
  b = bench
  end = max( r.offset + r.bits // 8 for r in REGS.values() )
  for off in ( end, end + 0x40, 0xFFC ):
    b.io.write32( off, 0xFFFFFFFF )          # OKAY, dropped
    assert b.io.read32( off ) == 0, hex( off )
  count = REGS[ "inst_count" ]                # a 32-bit argument: its hi word is unmapped
  b.io.write32( count.offset, 7 )
  b.io.write32( count.offset + 4, 0xFFFFFFFF )
  assert ( b.io.read32( count.offset ), b.io.read32( count.offset + 4 ) ) == ( 7, 0 )
  b.run( 7 )
  cyc = REGS[ "cycles" ]
  b.io.write32( cyc.offset, 0 )               # status is read-only
  assert b.ctl.status()[ "cycles" ] == 7
  assert b.ctl.read_args()[ "inst_count" ] == 7


@LEVEL
def test_host_side_bad_inputs( level, bench ):
  b = bench
  good = b.args( 5 )
  bad = [ ( dict( good, nosuch=1 ), "nosuch" ),
          ( { k: v for k, v in good.items() if k != "hbm01" }, "hbm01" ),
          ( dict( good, ring_pos=1 << 32 ), "ring_pos" ),
          ( dict( good, inst_addr=-1 ), "inst_addr" ),
          ( dict( good, inst_count=True ), "inst_count" ),
          ( dict( good, hbm00="0x10" ), "hbm00" ) ]
  for values, name in bad:
    with pytest.raises( KernelArgError, match=name ):
      b.ctl.set_args( **values )
  assert b.ctl.read_args()[ "inst_count" ] == 0      # nothing was written
  b.ctl.set_args( **dict( good, inst_count=1000 ) )
  b.ctl.start()
  with pytest.raises( KernelTimeout, match="no ap_done in 3 polls" ):
    b.ctl.wait_done( 3, between=b.cycles )
  with pytest.raises( ValueError, match="no AXI4-Lite port m_axi_x_awvalid" ):
    LiteMasterSim( b.top, "m_axi_x", b.top.sim_tick )
  # a slave that never answers (held in reset: it takes AW, W and AR but
  # never responds)
  b.top.reset @= 1
  stuck = LiteMasterSim( b.top, PREFIX, b.top.sim_tick, max_cycles=8 )
  with pytest.raises( LiteTimeout, match="write of 0x10 on s_axi_control: no BVALID in 8 cycles" ):
    stuck.write32( 0x10, 1 )
  with pytest.raises( LiteTimeout, match="read of 0x0 on s_axi_control: no RVALID in 8 cycles" ):
    stuck.read32( 0 )


@pytest.mark.parametrize( "level", [ "rtl" ] )
def test_paper_config_map( level, cmdline_opts ):
  """The decode follows register_map at the paper's 32 HBM channels too:
  every argument reads back, the run sees every one, every status word."""
  cfg = DFXConfig()
  b = Bench( cmdline_opts, cfg=cfg )
  try:
    assert len( b.arg_regs ) > 32
    values = b.args( 9, seed=3 )
    b.ctl.set_args( **values )
    assert b.ctl.read_args() == values
    b.ctl.start()
    b.ctl.wait_done( 100, between=b.cycles )
    for r in b.arg_regs:
      assert int( getattr( b.top, f"arg_{r.name}" ) ) == values[ r.name ], r.name
    st = b.ctl.status()
    assert st[ "cycles" ] == 9 and st[ "busy_dma" ] == busy_reference( PATTERN[ 0 ], 9 )
  finally:
    finish( b.top )


class SlvErrCoreRTL( Component ):
  """Takes every request and answers SLVERR (for LiteMasterSim's own check)."""

  def construct( s ):
    s.ifc = AxiLiteSlaveIfc( CTRL_ADDR_BITS )
    s.b = Wire()
    s.r = Wire()

    @update
    def up_out():
      s.ifc.awready @= ~s.b
      s.ifc.wready @= ~s.b
      s.ifc.bvalid @= s.b
      s.ifc.bresp @= RESP_SLVERR
      s.ifc.arready @= ~s.r
      s.ifc.rvalid @= s.r
      s.ifc.rdata @= 0
      s.ifc.rresp @= RESP_SLVERR

    @update_ff
    def up_state():
      s.b <<= ~s.reset & ( ( s.ifc.awvalid & s.ifc.wvalid & ~s.b ) | ( s.b & ~s.ifc.bready ) )
      s.r <<= ~s.reset & ( ( s.ifc.arvalid & ~s.r ) | ( s.r & ~s.ifc.rready ) )


class SlvErrSlave( Component ):
  def construct( s ):
    s.core = SlvErrCoreRTL()
    flat_ports( s, "s", AXI4_LITE, False, s.core.ifc, addr_bits=CTRL_ADDR_BITS, data_bits=32 )


def test_lite_master_reports_error_responses():
  m = SlvErrSlave()
  m.apply( DefaultPassGroup() )
  m.sim_reset()
  io = LiteMasterSim( m, "s", m.sim_tick )
  with pytest.raises( LiteResponseError, match="write of 0x10 on s: SLVERR" ):
    io.write32( 0x10, 5 )
  with pytest.raises( LiteResponseError, match="read of 0x8 on s: SLVERR" ):
    io.read32( 0x8 )
