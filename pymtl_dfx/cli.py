"""The `dfx` command line.

  dfx generate     GPT-2 text generation on the modelled appliance
  dfx demo         what the model can do today, in about a minute
  dfx verilog      the RTL core as Verilog for an FPGA build (linted)
  dfx perf         cycles and latency of a generation, CL-exact without data
  dfx numerics     the special functions' measured error table

Every user mistake or bad file ends in one line on stderr: exit 1, or 2 for
a usage error (argparse's, a bad --set or --unit-levels, a prompt longer
than the model's positions); --debug shows the traceback instead.  A closed
pipe (`| head`) exits 141 silently, Ctrl-C 130 with one line.
"""

import argparse
import os
import sys
import tempfile
import time


def cmd_numerics( args ):
  from .numerics.error_report import markdown_table
  print( markdown_table(), end="" )


def _demo_fpu( n ):
  from .testing.fp16_ops import OPS, random_operands, run_fp16_op
  for op in OPS:
    t0 = time.perf_counter()
    r = run_fp16_op( op, "rtl", {}, random_operands( op, n, seed=11 ) )
    dt = time.perf_counter() - t0
    print( f"  FP16 {op:5s} RTL (PyMTL3 sim, latency {OPS[op]['latency']:2d}): {n} random "
           f"operands bit-exact with numerics, {r.cycles / dt:,.0f} cycles/s" )


DEMO_PROMPT = [ 1, 5, 9, 17, 3 ]


def _demo_gpt2( seed, n_new ):
  from .appliance.host import Host
  from .compiler import stats as S
  from .compiler.build import compile_model
  from .config import DFXConfig, gpt2_preset
  from .gpt2 import DFXForward, ReferenceModel, generate, random_weights
  cfg = gpt2_preset( "tiny" )
  prompt = DEMO_PROMPT
  w = random_weights( cfg, seed )
  ref32 = generate( ReferenceModel( w ), prompt, n_new )
  ref16 = generate( DFXForward( w.to_fp16() ), prompt, n_new )
  print( f"  GPT-2 '{cfg.name}' ({cfg.n_layer} layers, {cfg.n_embd} wide, {cfg.n_head} heads, "
         f"random weights, seed {seed}), prompt ids {prompt}, greedy" )
  print( f"    FP32 reference           {ref32}" )
  print( f"    DFX numerics (reference) {ref16}" )
  for cores in ( 1, 2, 4 ):
    host = Host( compile_model( w.to_fp16(), DFXConfig( cores=cores ), cores,
                                max_tokens=len( prompt ) + n_new ), "func" )
    t0 = time.perf_counter()
    got = host.generate( prompt, n_new )
    dt = time.perf_counter() - t0
    tot = S.total( host.stats )
    print( f"    functional appliance, {cores} core(s)  {got}  "
           f"{'same tokens as DFX numerics' if got == ref16 else 'TOKENS DIFFER'}; {tot['instructions']} instructions, "
           f"{tot['ring_bytes']} ring bytes, {dt:.1f} s" )


def cmd_demo( args ):
  from .config import gpt2_preset
  check_context( len( DEMO_PROMPT ), args.new_tokens, gpt2_preset( "tiny" ) )   # before the slow parts
  print( "pymtl_dfx demo: the golden numerics, the FP16 operators as RTL, and GPT-2 text\n"
         "generation on the modelled appliance (functional level) on 1, 2 and 4 cores.\n"
         "Cycle-level timing and the RTL units of the whole core are not built yet.\n" )
  print( "1. Special functions, error over every finite FP16 input (vs float64):" )
  cmd_numerics( args )
  print( "\n2. FP16 operators as PyMTL3 RTL:" )
  old = os.getcwd()
  os.chdir( tempfile.mkdtemp( prefix="dfx-demo-" ) )
  try:
    _demo_fpu( args.pairs )
  finally:
    os.chdir( old )
  print( "\n3. GPT-2 generation: FP32, DFX numerics, and the functional appliance:" )
  _demo_gpt2( args.seed, args.new_tokens )


# -- errors: one line each -------------------------------------------------------

class UsageError( Exception ):
  """The arguments are wrong (exit 2, as argparse's own usage errors)."""


# What a user mistake or a bad file raises: the library's errors are
# ValueError subclasses (ConfigError, CompileError, CheckpointError,
# TokenizerError, ImageFormatError, WeightError, ...), files raise OSError,
# NaN logits ArithmeticError.  Anything else is a bug and keeps its traceback.
USER_ERRORS = ( ValueError, OSError, ArithmeticError, MemoryError )
EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_PIPE = 1, 2, 130, 141


class _Parser( argparse.ArgumentParser ):
  """argparse that reports a usage error on one line (and exits 2)."""

  def error( self, message ):
    self.exit( EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n" )


def _int_at_least( lo ):
  def parse( text ):
    try:
      value = int( text )
    except ValueError:
      raise argparse.ArgumentTypeError( f"{text!r} is not an integer" ) from None
    if value < lo:
      raise argparse.ArgumentTypeError( f"{value} must be at least {lo}" )
    return value
  parse.__name__ = f"integer >= {lo}"
  return parse


positive = _int_at_least( 1 )
# numpy's seeded generators take no negative seed
seed_type = _int_at_least( 0 )


def _unit_levels( text ):
  """'mpu=rtl,vpu=cl' -> {'mpu': 'rtl', 'vpu': 'cl'}, names checked against
  the core's units and levels so that a typo is a usage error."""
  from .core.Core import CORE_LEVELS, UNIT_NAMES
  out, bad = {}, []
  for item in ( x.strip() for x in text.split( "," ) ):
    unit, eq, level = ( p.strip() for p in item.partition( "=" ) )
    if not item:
      continue
    if not eq or not unit or not level:
      bad.append( f"{item!r} is not unit=level" )
    elif unit not in UNIT_NAMES:
      bad.append( f"{unit!r} is not a unit (units: {', '.join( UNIT_NAMES )})" )
    elif level not in CORE_LEVELS:
      bad.append( f"{unit}={level!r} is not a unit level (levels: {', '.join( CORE_LEVELS )})" )
    elif unit in out and out[ unit ] != level:
      bad.append( f"{unit} is given twice ({out[ unit ]}, {level})" )
    else:
      out[ unit ] = level
  if bad or not out:
    raise argparse.ArgumentTypeError( "; ".join( bad ) or f"{text!r} names no unit" )
  return out


def _host_levels_kw():
  """The name under which Host takes per-unit levels (`unit_levels`, or
  `levels` as it is called today), or None if it takes none."""
  import inspect
  from .appliance.host import Host
  params = inspect.signature( Host ).parameters
  return next( ( k for k in ( "unit_levels", "levels" ) if k in params ), None )


# -- dfx generate -------------------------------------------------------------------

def _dfx_config( args ):
  """DFXConfig from --set and --cores; bad settings are usage errors."""
  from .config import ConfigError, DFXConfig
  try:
    dfx = DFXConfig().with_overrides( args.set )
  except ConfigError as e:
    raise UsageError( str( e ) ) from None
  set_cores = any( a.partition( "=" )[0].strip() == "cores" for a in args.set )
  if args.cores is None:
    return dfx
  if set_cores and dfx.cores != args.cores:
    raise UsageError( f"--cores {args.cores} and --set cores={dfx.cores} disagree" )
  try:
    return dfx.replace( cores=args.cores )
  except ConfigError as e:
    raise UsageError( str( e ) ) from None


def _model_config( spec ):
  """The model's GPT2Config, without loading its weights."""
  from .config import GPT2_PRESETS, gpt2_preset
  from .gpt2.checkpoint import read_config
  if os.path.isdir( spec ):
    return read_config( spec )
  if spec in GPT2_PRESETS:
    return gpt2_preset( spec )
  raise UsageError( f"--model {spec!r} is neither a checkpoint directory nor a "
                    f"preset ({', '.join( GPT2_PRESETS )})" )


def _load_weights( spec, cfg, seed ):
  from .gpt2 import load_checkpoint, random_weights
  if os.path.isdir( spec ):
    w = load_checkpoint( spec )
    if w.config != cfg:    # the directory changed under us
      raise ValueError( f"{spec}: config.json changed while loading" )
    return w
  return random_weights( cfg, seed )


def _prompt_ids( args, tok, vocab ):
  if args.prompt_ids is not None:
    try:
      ids = [ int( x ) for x in args.prompt_ids.split( "," ) if x.strip() ]
    except ValueError:
      raise UsageError( f"--prompt-ids {args.prompt_ids!r} must be "
                        f"comma-separated integers" ) from None
  else:
    ids = tok.encode( args.prompt )    # TokenizerError names the problem
  bad = [ i for i in ids if not 0 <= i < vocab ]
  if not ids or bad:
    raise UsageError( f"prompt ids must be 1 or more ids in [0, {vocab})"
                      + ( f"; out of range: {bad[:8]}" if bad else "" ) )
  return ids


def check_context( n_prompt, n_new, cfg ):
  """Refuse a generation longer than the model's position table up front:
  past n_positions, wpe has no row and the appliance would read whatever
  memory follows it (tokens that look right and are not)."""
  if n_prompt + n_new > cfg.n_positions:
    raise UsageError( f"{n_prompt} prompt tokens + {n_new} new tokens = "
                      f"{n_prompt + n_new} positions, but model {cfg.name!r} has "
                      f"n_positions={cfg.n_positions}; use --new-tokens <= "
                      f"{max( 0, cfg.n_positions - n_prompt )} or a shorter prompt" )


def _host_kwargs( args ):
  if not args.unit_levels:
    return {}
  if args.level == "func":
    raise UsageError( "--unit-levels needs a stream level (--level fl, cl, rtl or verilog), "
                      "not func" )
  kw = _host_levels_kw()
  if kw is None:
    raise UsageError( "--unit-levels: this Host takes no per-unit levels" )
  return { kw: args.unit_levels }


def cmd_generate( args ):
  import json
  from .appliance.host import Host
  from .compiler import stats as S
  from .compiler.build import compile_model, plan
  from .gpt2.tokenizer import load_tokenizer

  dfx = _dfx_config( args )
  cores = dfx.cores
  host_kw = _host_kwargs( args )
  # Every check that needs no weights runs before a (possibly 6 GB) load.
  cfg = _model_config( args.model )
  tok = load_tokenizer( args.model if os.path.isdir( args.model ) else None, cfg.vocab_size )
  ids = _prompt_ids( args, tok, cfg.vocab_size )
  check_context( len( ids ), args.new_tokens, cfg )
  max_tokens = len( ids ) + args.new_tokens
  plan( cfg, dfx, cores, max_tokens )      # every compile-time limit (CompileError)
  weights = _load_weights( args.model, cfg, args.seed )
  t0 = time.perf_counter()
  compiled = compile_model( weights.to_fp16(), dfx, cores, max_tokens=max_tokens )
  compile_s = time.perf_counter() - t0
  host = Host( compiled, args.level, **host_kw )
  on_token = None
  if not args.json:
    print( tok.decode( ids ), end="", flush=True )
    on_token = lambda t: print( tok.decode( [ t ] ), end="", flush=True )   # noqa: E731
  tokens = host.generate( ids, args.new_tokens, on_token )
  if args.json:
    steps = host.step_seconds
    print( json.dumps( {
      "model": args.model, "level": args.level, "unit_levels": args.unit_levels or {},
      "cores": cores, "seed": args.seed, "set": args.set,
      "prompt_ids": ids, "tokens": tokens, "text": tok.decode( tokens ),
      "steps": len( steps ), "sim_cycles": host.cycles,
      "seconds": { "compile": round( compile_s, 3 ), "total": round( sum( steps ), 3 ),
                   "per_generated_token": round( sum( steps[ len( ids ): ] ) /
                                                 max( 1, len( steps ) - len( ids ) ), 3 ) },
      "per_op_class": host.stats, "total": S.total( host.stats ),
      "padding": compiled.layout["padding"],
      **_timing( host, dfx ),
    }, indent=2 ) )
  else:
    print()
    t = _timing( host, dfx )
    if t:
      c = t["cycles"]
      share = ", ".join( f"{k} {100 * v / max( 1, c['total'] ):.0f}%"
                         for k, v in sorted( c["per_op_class"].items(), key=lambda kv: -kv[1] )
                         if v )
      print( f"[{args.level}: {c['total']:,} cycles = {t['ms_at_clock']['total']:.3f} ms at "
             f"{dfx.clock_mhz} MHz over {len( c['per_step'] )} steps; {share}]", file=sys.stderr )


TIMED_LEVELS = ( "cl", "rtl", "verilog" )


def _timing( host, dfx ):
  """The cycles of a timed level (CL, RTL, Verilator) and their time at the
  kernel clock; {} for the untimed levels (func, fl)."""
  if host.level not in TIMED_LEVELS:
    return {}
  r = host.results()
  ms = lambda c: c / ( dfx.clock_mhz * 1e3 )   # noqa: E731
  cycles = dict( total=r["cycles"], per_step=r["step_cycles"], per_stage=r["stage_cycles"],
                 per_op_class=r["class_cycles"], unit_busy=r["unit_busy"] )
  return dict( cycles=cycles,
               ms_at_clock=dict( total=ms( r["cycles"] ),
                                 per_step=[ ms( c ) for c in r["step_cycles"] ],
                                 per_stage={ k: ms( v ) for k, v in r["stage_cycles"].items() } ) )


# -- main -----------------------------------------------------------------------------

# -- dfx verilog --------------------------------------------------------------------

def cmd_verilog( args ):
  import json
  from .core.verilog import write_core_verilog
  dfx = _dfx_config( args )
  t0 = time.perf_counter()
  if not args.json:
    print( f"translating the RTL core (d={dfx.d}, l={dfx.l}, {dfx.cores} core(s)) "
           f"{'and linting it ' if args.lint else ''}into {args.out} ...", flush=True )
  record = write_core_verilog( dfx, args.out, lint=args.lint )
  record["seconds"] = round( time.perf_counter() - t0, 1 )
  if args.json:
    print( json.dumps( { k: v for k, v in record.items() }, indent=2 ) )
    return
  lint = record.get( "lint" )
  print( f"{args.out}/{record['files'][0]}: top module {record['top']}, {record['lines']:,} lines; "
         + ( f"verilator --lint-only -Wall clean apart from waived classes "
             f"({', '.join( sorted( lint['waivers'] ) )}; reasons in config.json)"
             if lint else "not linted" )
         + f"; {record['seconds']} s" )


def _parser():
  from .appliance.host import LEVELS
  common = argparse.ArgumentParser( add_help=False )
  common.add_argument( "--debug", action="store_true",
                       help="show the traceback of an error instead of one line" )
  ap = _Parser( prog="dfx", description="pymtl_dfx: a multi-level model of DFX" )
  sub = ap.add_subparsers( dest="cmd", required=True )
  p = sub.add_parser( "generate", parents=[ common ],
                      help="GPT-2 text generation on the modelled appliance" )
  p.add_argument( "--model", required=True, help="preset name or Hugging Face checkpoint directory" )
  g = p.add_mutually_exclusive_group( required=True )
  g.add_argument( "--prompt", help="prompt text" )
  g.add_argument( "--prompt-ids", help="prompt token ids, e.g. 1,2,3" )
  p.add_argument( "--new-tokens", type=positive, default=16 )
  p.add_argument( "--cores", type=positive, default=None,
                  help="FPGAs on the ring (1, 2, 4 in DFX; default 1, or --set cores=N); "
                       "any count the compiler supports: heads and columns that do "
                       "not divide are padded" )
  p.add_argument( "--set", action="append", default=[], metavar="KEY=VALUE",
                  help="a DFXConfig field, e.g. --set d=32 --set hbm_channels=16 (repeatable)" )
  p.add_argument( "--level", choices=LEVELS, default="func",
                  help="func: instruction-level functional appliance (fast); fl/cl/rtl: "
                       "cores of stream units at that level; verilog: the whole "
                       "appliance in Verilator" )
  p.add_argument( "--unit-levels", type=_unit_levels, default=None, metavar="UNIT=LEVEL,...",
                  help="per-unit levels at a stream level, e.g. mpu=rtl,vpu=cl" )
  p.add_argument( "--seed", type=seed_type, default=0, help="seed of a preset's random weights" )
  p.add_argument( "--json", action="store_true", help="print one JSON object" )
  p.set_defaults( fn=cmd_generate )
  p = sub.add_parser( "demo", parents=[ common ], help="run what the model can do today" )
  p.add_argument( "--pairs", type=positive, default=2000, help="random operands per FP16 operator" )
  p.add_argument( "--seed", type=seed_type, default=2 )
  p.add_argument( "--new-tokens", type=positive, default=12 )
  p.set_defaults( fn=cmd_demo )
  p = sub.add_parser( "verilog", parents=[ common ],
                      help="write the RTL core as Verilog for an FPGA build",
                      description="Translate the core (every unit at RTL, HBM/DDR channels as "
                                  "ports) to one Verilog file, lint it with verilator "
                                  "--lint-only -Wall, and write it with a file list and the "
                                  "config it was built for.",
                      epilog="example: dfx verilog --out build/core_d32 --set d=32 --set l=8 "
                             "--set hbm_channels=4" )
  p.add_argument( "--out", required=True, help="output directory (new or empty)" )
  p.add_argument( "--cores", type=positive, default=None,
                  help="cores of the appliance the core is built for (default 1)" )
  p.add_argument( "--set", action="append", default=[], metavar="KEY=VALUE",
                  help="a DFXConfig field, e.g. --set d=32 (repeatable)" )
  p.add_argument( "--no-lint", dest="lint", action="store_false", help="skip the Verilator lint" )
  p.add_argument( "--json", action="store_true", help="print one JSON object" )
  p.set_defaults( fn=cmd_verilog )
  from .perf.cli import add_parser as add_perf
  add_perf( sub, common, positive, _model_config, _dfx_config )
  p = sub.add_parser( "numerics", parents=[ common ], help="measured error of exp/recip/rsqrt/gelu" )
  p.set_defaults( fn=cmd_numerics )
  return ap


def _one_line( e ):
  return " ".join( str( e ).split( "\n" ) ) or type( e ).__name__


def _silence_stdout():
  """After a closed pipe, point stdout at /dev/null so that the interpreter's
  final flush does not raise (and print) a second BrokenPipeError."""
  try:
    devnull = os.open( os.devnull, os.O_WRONLY )
    os.dup2( devnull, sys.stdout.fileno() )
  except ( OSError, ValueError, AttributeError ):
    pass   # not a real file (e.g. captured by a test)


def main( argv=None ):
  ap = _parser()
  args = ap.parse_args( argv )
  prog = f"dfx {args.cmd}"
  try:
    args.fn( args )
  except UsageError as e:
    if args.debug:
      raise
    print( f"{prog}: error: {_one_line( e )}", file=sys.stderr )
    return EXIT_USAGE
  except BrokenPipeError:
    # `dfx generate ... | head`: the reader has what it wanted
    _silence_stdout()
    return EXIT_PIPE
  except KeyboardInterrupt:
    if args.debug:
      raise
    print( f"{prog}: interrupted", file=sys.stderr )
    return EXIT_INTERRUPTED
  except USER_ERRORS as e:
    if args.debug:
      raise
    print( f"{prog}: {_one_line( e )}", file=sys.stderr )
    return EXIT_ERROR
  return 0


if __name__ == "__main__":
  sys.exit( main() )
