"""AXI4 test parts: a protocol checker and a random back-pressure slice.

`AxiCheckRTL` watches one AXI4 bus (every port an input, named as the
signals; `watch` connects it to the bus's drivers) and fails the simulation when a channel's
valid drops before its ready, or its payload changes while valid & !ready
(AMBA AXI4, A3.2.1).  It counts each channel's handshakes (`beats`).

`AxiStallRTL` sits between a master (`m`, its slave side) and a slave
(`sl`, its master side): each of the five channels goes through a one-entry
slice that takes a beat only on random cycles (probability 1 - p of being
ready) and holds it, valid and stable, until the far side takes it.  So
every channel sees random back-pressure from both ends, and AW and W reach
the slave in any order.

Both are stimulus (Python), not hardware.
"""

import random

from pymtl3 import *

from ..kernel.axi import AXI4, AxiMasterIfc, AxiSlaveIfc, widths

CHANNELS = ( "aw", "w", "b", "ar", "r" )
FROM_MASTER = { "aw": True, "w": True, "b": False, "ar": True, "r": False }


class AxiProtocolError( AssertionError ):
  pass


def payload_signals( ch ):
  """The payload signals of channel `ch` (all but its valid and ready)."""
  return [ n for n, _, _ in AXI4 if n.startswith( ch ) and n not in ( ch + "valid", ch + "ready" ) ]


class AxiCheckRTL( Component ):

  def construct( s, addr_bits, data_bits, name="axi" ):
    s.name = name
    for sig, ( bits, _ ) in widths( AXI4, addr_bits, data_bits ).items():
      setattr( s, sig, InPort( bits ) )
    s.held = {}                    # channel -> payload seen with valid & !ready
    s.beats = { ch: 0 for ch in CHANNELS }
    s.cycle = 0

    @update_ff
    def up_axi_check():
      if s.reset:
        s.held, s.cycle = {}, 0
        s.beats = { ch: 0 for ch in CHANNELS }
        return
      s.cycle += 1
      for ch in CHANNELS:
        s._check( ch )

  def _check( s, ch ):
    valid, ready = int( getattr( s, ch + "valid" ) ), int( getattr( s, ch + "ready" ) )
    now = tuple( int( getattr( s, n ) ) for n in payload_signals( ch ) )
    was = s.held.pop( ch, None )
    if was is not None:
      if not valid:
        raise AxiProtocolError( f"{s.name}: {ch}valid dropped before {ch}ready (cycle {s.cycle})" )
      if now != was:
        raise AxiProtocolError( f"{s.name}: {ch} payload changed while {ch}valid & !{ch}ready "
                                f"(cycle {s.cycle}): {was} -> {now}" )
    if valid and not ready:
      s.held[ ch ] = now
    s.beats[ ch ] += valid & ready


def watch( checker, master, slave ):
  """Connect every port of `checker` to the same-named signal of one bus,
  at its driver: `master` is the interface that drives the master's
  signals (an AxiMasterIfc), `slave` the one that drives the slave's."""
  for sig, ( _, by_master ) in widths( AXI4 ).items():
    connect( getattr( checker, sig ), getattr( master if by_master else slave, sig ) )


def _clone( msg ):
  return msg.clone()


class StallSliceRTL( Component ):
  """One channel: takes a beat on a random cycle, holds it until taken."""

  def construct( s, Type, p, seed ):
    s.up_val = InPort()
    s.up_rdy = OutPort()
    s.up_msg = InPort( Type )
    s.dn_val = OutPort()
    s.dn_rdy = InPort()
    s.dn_msg = OutPort( Type )
    rng = random.Random( seed )
    s.full, s.data = False, Type()

    @update_ff
    def up_stall_slice():
      if s.reset:
        s.full = False
        s.up_rdy <<= 0
        s.dn_val <<= 0
        return
      if s.dn_val & s.dn_rdy:
        s.full = False
      if s.up_val & s.up_rdy:
        s.full, s.data = True, _clone( s.up_msg )
      s.dn_val <<= s.full
      s.dn_msg <<= s.data
      s.up_rdy <<= int( not s.full and rng.random() >= p )


class AxiStallRTL( Component ):

  def construct( s, addr_bits, data_bits, p=0.5, seed=0 ):
    s.m  = AxiSlaveIfc( addr_bits, data_bits )     # the master's side
    s.sl = AxiMasterIfc( addr_bits, data_bits )    # the slave's side
    w = widths( AXI4, addr_bits, data_bits )
    for i, ch in enumerate( CHANNELS ):
      sigs = payload_signals( ch )
      Type = mk_bitstruct( f"AxiCh_{ch}_{addr_bits}_{data_bits}",
                           { n: mk_bits( w[n][0] ) for n in sigs } )
      sl = StallSliceRTL( Type, p, seed * 5 + i )
      setattr( s, f"slice_{ch}", sl )
      up, dn = ( s.m, s.sl ) if FROM_MASTER[ ch ] else ( s.sl, s.m )
      connect( sl.up_val, getattr( up, ch + "valid" ) )
      connect( sl.up_rdy, getattr( up, ch + "ready" ) )
      connect( sl.dn_val, getattr( dn, ch + "valid" ) )
      connect( sl.dn_rdy, getattr( dn, ch + "ready" ) )
      for n in sigs:
        connect( getattr( sl.up_msg, n ), getattr( up, n ) )
        connect( getattr( sl.dn_msg, n ), getattr( dn, n ) )

  def line_trace( s ):
    return ""


def run_with_duts( th, duts, cmdline_opts, limit, what, progress=lambda: "" ):
  """Elaborate harness `th`, mark its children named in `duts` for pymtl3's
  command-line options (under --test-verilog each becomes a Verilator
  model; the rest of the harness stays Python), reset and tick until
  `th.done()` (at most `limit` cycles).  Returns the cycle count."""
  from .harness import _plain_opts, run_until_done, translating
  from ..hdl import verilator5
  from pymtl3.stdlib.test_utils import config_model_with_cmdline_opts
  verilator5.apply()
  opts = _plain_opts( cmdline_opts )
  th.elaborate()
  if translating( "rtl", opts ):
    for name in duts:
      verilator5.name_without_double_underscores( getattr( th, name ) )
  th = config_model_with_cmdline_opts( th, opts, duts=list( duts ) )
  th.apply( DefaultPassGroup( linetrace=bool( opts.get( "line_trace" ) ) ) )
  return th, run_until_done( th, limit, what, progress )
