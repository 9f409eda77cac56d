"""Drive any component with a stream boundary at any level.

`run_stream_test(dut, ...)` wraps the DUT between sources and sinks, applies
pymtl3's command-line options (so `--test-verilog` turns an RTL DUT into a
Verilator model), runs until every sink has its messages or a cycle limit
passes, and returns the cycle count and arrival stamps.
"""

from pymtl3 import *
from pymtl3.stdlib.test_utils import config_model_with_cmdline_opts

from ..hdl import verilator5
from .src_sink import CheckSinkRTL, DelaySourceRTL, received
from ..hdl.wide_ports import WidePortsRTL, connect_stream

verilator5.apply()


class StreamHarness( Component ):
  """Sources on the DUT's `recv`-style ports, checking sinks on `send` ports."""

  def construct( s, dut, sources, sinks, max_delay=0, seed=0, describe=str ):
    s.dut = dut
    s.srcs = {}
    s.sinks = {}
    for i, ( port, ( Type, msgs ) ) in enumerate( sorted( sources.items() ) ):
      src = DelaySourceRTL( Type, msgs, max_delay, seed + 2 * i )
      setattr( s, f"src_{port}", src )
      connect_stream( src.send, getattr( s.dut, port ) )
      s.srcs[ port ] = src
    for i, ( port, ( Type, msgs ) ) in enumerate( sorted( sinks.items() ) ):
      sink = CheckSinkRTL( Type, msgs, max_delay, seed + 2 * i + 1, describe )
      setattr( s, f"sink_{port}", sink )
      connect_stream( sink.recv, getattr( s.dut, port ) )
      s.sinks[ port ] = sink

  def done( s ):
    return all( x.done() for x in s.srcs.values() ) and \
           all( x.done() for x in s.sinks.values() )

  def line_trace( s ):
    srcs = " ".join( x.line_trace() for x in s.srcs.values() )
    sinks = " ".join( x.line_trace() for x in s.sinks.values() )
    return f"{srcs} > {s.dut.line_trace()} > {sinks}"


class StreamTestResult:
  def __init__( s, cycles, arrivals ):
    s.cycles = cycles
    s.arrivals = arrivals


def _plain_opts( cmdline_opts ):
  opts = dict( cmdline_opts or {} )
  opts.setdefault( "test_verilog", "" )
  opts.setdefault( "test_yosys_verilog", "" )
  opts.setdefault( "dump_vcd", "" )
  opts.setdefault( "dump_vtb", "" )
  opts.setdefault( "dump_textwave", False )
  return opts


def run_stream_test( dut, sources, sinks, level, cmdline_opts=None,
                     max_delay=0, seed=0, max_cycles=None, describe=str,
                     line_trace=False ):
  """Run `dut` at `level`; sources/sinks map a port name to (Type, msgs).

  Only an RTL DUT is translated: FL and CL components have nothing to
  translate, and the level fixture does not run them under --test-verilog.
  """
  opts = _plain_opts( cmdline_opts )
  if translating( level, opts ):
    dut = WidePortsRTL( dut )
  th = elaborate_for( StreamHarness( dut, sources, sinks, max_delay, seed, describe ),
                      level, opts, line_trace )
  n_msgs = sum( len( m ) for _, m in sinks.values() ) + \
           sum( len( m ) for _, m in sources.values() )
  limit = max_cycles or ( opts.get( "max_cycles" ) and int( opts["max_cycles"] ) ) \
          or 1000 + 50 * ( max_delay + 1 ) * n_msgs
  cycles = run_until_done(
    th, limit, f"{type( dut ).__name__} at {level}",
    lambda: "received " + received( th.sinks ) )
  return StreamTestResult( cycles, { p: list( x.arrivals ) for p, x in th.sinks.items() } )


def translating( level, opts ):
  """Whether an RTL run goes through Verilog (pymtl3's --test-verilog options)."""
  return level == "rtl" and bool( opts.get( "test_verilog" ) or opts.get( "test_yosys_verilog" ) )


def elaborate_for( th, level, opts, line_trace=False ):
  """Elaborate a harness whose DUT is `th.dut`; at RTL pymtl3's command-line
  options (the Verilator import) apply to that DUT.  Returns the harness to
  simulate."""
  th.elaborate()
  if level == "rtl":
    if translating( level, opts ):
      verilator5.name_without_double_underscores( th.dut )
    th = config_model_with_cmdline_opts( th, opts, duts=[ "dut" ] )
  th.apply( DefaultPassGroup( linetrace=line_trace ) )
  return th


def run_until_done( th, limit, what, progress ):
  """Reset and tick until `th.done()`; after `limit` cycles fail, naming
  `what` and `progress()`.  Imported models are finalised either way.
  Returns the cycle count."""
  try:
    th.sim_reset()
    while not th.done():
      if th.sim_cycle_count() >= limit:
        raise AssertionError( f"no progress: {what} did not finish in {limit} cycles; "
                              f"{progress()}" )
      th.sim_tick()
    return th.sim_cycle_count()
  finally:
    _finalize( th )


def _finalize( model ):
  for child in model.get_child_components():
    _finalize( child )
  if hasattr( model, "finalize" ):
    model.finalize()
