"""Waves and line traces of a simulated appliance, within a cycle window.

A `Probe` is what a backend records while it runs: a VCD wave (`wave`, a
path) and the top's line trace (`trace`, a text stream), both only for the
cycles of `window` (lo, hi): cycles lo to hi - 1, counted as the backend
counts them (every clock edge after reset: the memory loads, the token
steps, the logit read-backs; `StreamBackend.cycle`).  A full generation
runs millions of cycles and a VCD of a whole core grows by kilobytes a
cycle, so the window is bounded by default (`DEFAULT_WINDOW`).

The backend calls `before_edge(k)` and `after_edge(k)` around its clock
edge k and `close()` at the end; how the wave is written depends on the
level:
  * fl, cl, rtl: `PymtlVcd`, a VCD of every signal of the pymtl3 top
    (the scopes, names and net sharing of pymtl3's `VcdGenerationPass`),
    sampled after each edge in the window.  pymtl3's pass cannot be
    windowed (it writes every cycle from the first, reading every signal
    through `eval`), so this writer samples through one compiled function
    and skips the cycles outside the window at no cost;
  * verilog: Verilator's own VCD of the whole appliance, every internal
    signal, through pymtl3's import option `vl_trace`
    (`VerilatorVcd`).  pymtl3 3.1.17's C wrapper dumps inside `seq_eval`
    only while the model struct's `_vcd_en` is set, and keeps the dump
    time in the struct's `trace_time`; the probe sets both before every
    edge (on inside the window, the time at the cycle's edge), so the
    wave starts and stops at the window and its time axis is the
    backend's cycle count.  The wrapper writes VCD only (it constructs a
    VerilatedVcdC; no FST): `vcd2fst` (shipped with GTKWave) converts.

Both waves use the same time axis: 1 cycle = 1 ns (timescale 100ps, 10
units a cycle), the rising edge of cycle k at k ns, so a signal's time in
the viewer is the cycle of the line trace's `k:` column.
"""

import os
import shutil
import tempfile
import time

# cycles lo to hi - 1 (hi None: to the end of the run).  Measured: ~1 KB a
# cycle at cl (d=32, 1 core), ~13 KB at verilog (d=8, 1 core, every
# internal signal, while the images load), so 10,000 cycles stay in the tens
# to hundreds of MB where a whole run at verilog would be gigabytes
DEFAULT_WINDOW = ( 0, 10_000 )
TIMESCALE = "100ps"
CYCLE_UNITS = 10                # one cycle = 10 x 100 ps = 1 ns
# pymtl3's Verilator wrapper keeps the dump time in an unsigned int
VERILATOR_LAST_CYCLE = ( 2 ** 32 - 1 ) // CYCLE_UNITS - 1


class WaveError( ValueError ):
  pass


def parse_window( text ):
  """'A:B' (cycles A to B-1), 'A:' (from A to the end), ':B' (from 0)."""
  lo, colon, hi = text.partition( ":" )
  if not colon:
    raise WaveError( f"{text!r} is not A:B (e.g. 0:10000: cycles 0 to 9999)" )
  try:
    lo = int( lo ) if lo.strip() else 0
    hi = int( hi ) if hi.strip() else None
  except ValueError:
    raise WaveError( f"{text!r}: A and B must be integers (A:B, e.g. 0:10000)" ) from None
  if lo < 0:
    raise WaveError( f"{text!r}: the first cycle {lo} is negative" )
  if hi is not None and hi <= lo:
    raise WaveError( f"{text!r}: the window is empty (B={hi} must be greater than A={lo})" )
  return lo, hi


def window_text( window ):
  lo, hi = window
  return f"cycles {lo:,} to {hi - 1:,}" if hi is not None else f"cycles {lo:,} to the end"


class Probe:
  """A wave (`wave`: a file path) and a line trace (`trace`: a text stream
  or None) of the cycles in `window`."""

  def __init__( s, wave=None, trace=None, window=DEFAULT_WINDOW ):
    s.wave, s.trace, s.window = wave, trace, tuple( window )
    s.lo, s.hi = s.window
    s.vcd = None                # the writer of the level (`attach`)
    s.lines = 0                 # trace lines written

  def inside( s, k ):
    return k >= s.lo and ( s.hi is None or k < s.hi )

  def check_level( s, level ):
    if s.wave is not None and level == "verilog" and ( s.hi is None or
                                                      s.hi - 1 > VERILATOR_LAST_CYCLE ):
      raise WaveError( f"--wave-cycles: at the verilog level the window must end by cycle "
                       f"{VERILATOR_LAST_CYCLE:,} (pymtl3's Verilator wrapper counts the dump "
                       f"time in 32 bits, {CYCLE_UNITS} units a cycle), not run to the end"
                       if s.hi is None else
                       f"--wave-cycles: at the verilog level the window must end by cycle "
                       f"{VERILATOR_LAST_CYCLE:,} (pymtl3's Verilator wrapper counts the dump "
                       f"time in 32 bits, {CYCLE_UNITS} units a cycle), not at {s.hi - 1:,}" )

  # -- set-up, by the backend ------------------------------------------------------

  def verilator_build( s ):
    """A `VerilatorVcd` to pass to `core.prepare_sim` (the verilog level)."""
    if s.wave is None:
      return None
    s.vcd = VerilatorVcd( s.wave )
    return s.vcd

  def attach( s, top ):
    """After the simulation is prepared: the pymtl3 wave of `top`, or the
    Verilator wave's controls."""
    if s.wave is None:
      return
    if isinstance( s.vcd, VerilatorVcd ):
      s.vcd.attach( top.dut )
    else:
      s.vcd = PymtlVcd( top, s.wave )

  # -- per clock edge -------------------------------------------------------------

  def before_edge( s, k ):
    """Before edge k; True if a Verilator model dumps this edge."""
    if isinstance( s.vcd, VerilatorVcd ):
      return s.vcd.before_edge( k, s.inside( k ) )
    return False

  def after_edge( s, k, top ):
    if not s.inside( k ):
      return
    if isinstance( s.vcd, PymtlVcd ):
      s.vcd.sample( k )
    if s.trace is not None:
      print( f"{k:>8}: {top.line_trace()}", file=s.trace )
      s.lines += 1

  def close( s ):
    if s.vcd is not None:
      s.vcd.close()
    if s.trace is not None:
      s.trace.flush()


# -- fl, cl, rtl: a VCD of the pymtl3 top ------------------------------------------------

def _symbols():
  """VCD identifiers: printable ASCII 33-126, then pairs, ..."""
  chars = [ chr( i ) for i in range( 33, 127 ) ]
  n = 0
  while True:
    q, r = divmod( n, len( chars ) )
    code = chars[r]
    while q:
      q, r = divmod( q - 1, len( chars ) )
      code = chars[r] + code
    yield code
    n += 1


def _leaves( T, expr ):
  """(expression, bits) of every Bits field of a value of type T, most
  significant first: the order of a bitstruct's `to_bits` (fields as
  declared, a list's last element highest), which builds a `Bits` and so
  fails past 1023 bits (the FL/CL messages of a wide memory word)."""
  from pymtl3.datatypes.bitstructs import is_bitstruct_class
  if isinstance( T, list ):
    return [ x for i in reversed( range( len( T ) ) ) for x in _leaves( T[0], f"{expr}[{i}]" ) ]
  if is_bitstruct_class( T ):
    return [ x for name, t in T.__bitstruct_fields__.items()
             for x in _leaves( t, f"{expr}.{name}" ) ]
  return [ ( expr, T.nbits ) ]


def _int_expr( signal ):
  """Python reading `signal`'s value as one int (`_leaves`)."""
  leaves = _leaves( signal._dsl.Type, repr( signal ) )
  terms, shift = [], 0
  for expr, n in reversed( leaves ):
    terms.append( f"int( {expr} )" + ( f" << {shift}" if shift else "" ) )
    shift += n
  return " | ".join( reversed( terms ) ) if len( terms ) > 1 else terms[0]


def _mangle( name ):
  # as pymtl3's pass: a(0) for a[0] (GTKWave reads [] as a bit range)
  return name.replace( "[", "(" ).replace( "]", ")" ).replace( ":", "__" )


class PymtlVcd:
  """A VCD of every top-level signal of the simulated pymtl3 `top` (per
  component its ports and wires, one identifier per net as pymtl3's
  `VcdGenerationPass`), written to `path` by `sample(k)` after edge k."""

  def __init__( s, top, path ):
    from pymtl3.dsl import Const
    s.f = open( path, "w" )
    nets = []               # (net's first signal, width)
    net_of = {}
    for _, net in top.get_all_value_nets():
      members = [ x for x in net if not isinstance( x, Const ) and x.is_top_level_signal() ]
      if members:
        for x in members:
          net_of[x] = len( nets )
        nets.append( members[0] )
    by_host = {}
    for x in top._dsl.all_signals:
      if x.is_top_level_signal():
        by_host.setdefault( x.get_host_component(), [] ).append( x )
    symbols = _symbols()
    s.clk = next( symbols )
    syms = []
    f = s.f
    f.write( f"$date\n  {time.asctime()}\n$end\n$version\n  pymtl_dfx (pymtl3 signals)\n$end\n"
             f"$comment\n  1 cycle = 1 ns: the rising edge of cycle k at k ns\n$end\n"
             f"$timescale {TIMESCALE} $end\n" )

    def scope( m, indent ):
      name = m.get_field_name()
      f.write( f"{indent}$scope module {_mangle( 'top' if name == 's' else name )} $end\n" )
      mname = repr( m )
      for x in sorted( by_host.get( m, () ), key=repr ):
        if repr( x ).rpartition( "." )[2] == "clk":
          # pymtl3 joins every component's clk to the top's and never
          # toggles it: the wave draws one clock, high from each edge
          f.write( f"{indent}  $var reg 1 {s.clk} clk $end\n" )
          continue
        i = net_of.get( x )
        if i is None:              # a signal of no net (written in an update block)
          i = net_of[x] = len( nets )
          nets.append( x )
        while len( syms ) <= i:
          syms.append( None )
        if syms[i] is None:
          syms[i] = next( symbols )
        f.write( f"{indent}  $var reg {x._dsl.Type.nbits} {syms[i]} "
                 f"{_mangle( repr( x )[ len( mname ) + 1: ] )} $end\n" )
      for child in m.get_child_components():
        scope( child, indent + "  " )
      f.write( f"{indent}$upscope $end\n" )

    scope( top, "" )
    f.write( "$enddefinitions $end\n" )
    keep = [ i for i in range( len( nets ) ) if i < len( syms ) and syms[i] is not None ]
    s.syms = [ syms[i] for i in keep ]
    s.widths = [ nets[i]._dsl.Type.nbits for i in keep ]
    # one compiled function reads every net (pymtl3's pass evals each signal's name)
    body = ", ".join( f"( {_int_expr( nets[i] )} )" for i in keep )
    code = compile( f"def _sample( s ):\n  return ( {body}{',' if keep else ''} )\n",
                    "<dfx wave>", "exec" )
    scope_ = {}
    exec( code, {}, scope_ )
    s._read = scope_["_sample"]
    s.top = top
    s.last = None
    s.cycles = 0

  def sample( s, k ):
    values = s._read( s.top )
    f, t = s.f, k * CYCLE_UNITS
    out = [ f"#{t}\n" ]
    if s.last is None:
      out.append( "$dumpvars\n" )
      changed = range( len( values ) )
    else:
      last = s.last
      changed = [ i for i, v in enumerate( values ) if v != last[i] ]
    out.append( f"1{s.clk}\n" )
    for i in changed:
      w, v = s.widths[i], values[i]
      out.append( f"{v}{s.syms[i]}\n" if w == 1 else f"b{v:b} {s.syms[i]}\n" )
    if s.last is None:
      out.append( "$end\n" )
    out.append( f"#{t + CYCLE_UNITS // 2}\n0{s.clk}\n" )
    f.write( "".join( out ) )
    s.last = values
    s.cycles += 1

  def close( s ):
    if not s.f.closed:
      s.f.close()


# -- verilog: Verilator's VCD -----------------------------------------------------------

class VerilatorVcd:
  """Verilator's VCD of an imported model, written by pymtl3's C wrapper
  (`vl_trace`) to `path`, switched on and off per edge."""

  def __init__( s, path ):
    s.path = os.path.abspath( path )
    s.en = s.tt = None
    s.cycles = 0
    # pymtl3 bakes the file name into a Python string of the generated
    # wrapper as NAME + ".verilator1.vcd": a link of that name in a fresh
    # folder of plain characters points at the user's path, whatever it holds
    s.tmp = tempfile.mkdtemp( prefix="dfx-wave-" )
    s.stem = os.path.join( s.tmp, "wave" )
    if os.path.lexists( s.path ):
      os.unlink( s.path )   # checked writable (`outputs.check_file`); a link would be followed
    os.symlink( s.path, s.stem + ".verilator1.vcd" )

  def import_options( s ):
    """The pymtl3 import metadata of a traced model."""
    from pymtl3.passes.backends.verilog import VerilogVerilatorImportPass as P
    return { P.vl_trace: True, P.vl_trace_filename: s.stem, P.vl_trace_timescale: TIMESCALE,
             P.vl_trace_cycle_time: CYCLE_UNITS }

  def attach( s, dut ):
    """The struct fields of pymtl3 3.1.17's C wrapper after the ports and
    `void * model`: `int _vcd_en; void * tfp; unsigned int trace_time;`
    (the Python side declares the struct only up to `model`)."""
    shutil.rmtree( s.tmp, ignore_errors=True )    # the model has opened the file
    ffi, m = dut.ffi, dut._ffi_m
    name = dut._ip_cfg.translated_top_module
    at = ffi.offsetof( f"V{name}_t", "model" ) + ffi.sizeof( "void *" )
    base = ffi.cast( "char *", m )
    ptr = ffi.sizeof( "void *" )
    tfp = ( at + ffi.sizeof( "int" ) + ptr - 1 ) // ptr * ptr
    s.en = ffi.cast( "int *", base + at )
    s.tt = ffi.cast( "unsigned int *", base + tfp + ptr )
    if s.en[0] != 1:
      raise WaveError( "the Verilator model was built without its VCD (vl_trace)" )
    s.en[0] = 0        # nothing of reset; `before_edge` switches it on

  def before_edge( s, k, on ):
    """seq_eval dumps at trace_time + 5 (clock low: the inputs of the
    cycle before) and + 10 (after the edge): the edge of cycle k lands at
    k x 10.  Cycle 0's clock-low sample would fall before time 0, so the
    wave starts at cycle 1 at the earliest."""
    on = on and k >= 1
    s.en[0] = 1 if on else 0
    if on:
      s.tt[0] = ( k - 1 ) * CYCLE_UNITS
      s.cycles += 1
    return on

  def close( s ):
    if s.en is not None:
      s.en[0] = 0
    shutil.rmtree( s.tmp, ignore_errors=True )
