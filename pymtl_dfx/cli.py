"""The `dfx` command line.

  dfx generate     GPT-2 text generation on the modelled appliance
  dfx demo         text on 4 modelled cards, timed; GPT-2 345M beside the paper (~2 min)
  dfx verilog      the RTL core as Verilog for an FPGA build (linted)
  dfx perf         cycles and latency of a generation, CL-exact without data
  dfx report       the paper's figures and comparison table from the performance model
  dfx sweep        a design-space sweep: latency and U280 resources over a grid of configs
  dfx numerics     the special functions' measured error table

`dfx --version`; `dfx COMMAND --help` shows each option's default and an
example.  Every subcommand takes --json (one JSON object on stdout; an error
is {"error": {...}} there too, with the same exit code).  Progress lines go to
stderr for slow steps, only on a terminal and never with --json.

Every user mistake or bad file ends in one line on stderr: exit 1, or 2 for
a usage error (argparse's, a bad --set or --unit-levels, a prompt longer
than the model's positions); --debug shows the traceback instead.  A file
problem says which it is (missing, a directory, a FIFO, a permission
problem, a symlink loop: `files.describe_os_error`), and user or model text
is printed with its control characters escaped (`printable`: ESC as
\\x1b; the streamed text keeps its newlines and tabs).  A closed
pipe (`| head`) exits 141 silently, Ctrl-C 130 with one line; SIGTERM (kill,
timeout, CI) and SIGHUP unwind as Ctrl-C does, removing every partial
output, and exit 128 + the signal (143, 129) with one line.  Every output
path is checked before anything is loaded (`outputs`, docs/outputs.md).
"""

import argparse
import contextlib
import os
import signal
import sys
import time

from . import demo as DEMO
from .files import describe_os_error, describe_path
from .models import TINY_ENGLISH
from .printable import shown, stream_text


def cmd_numerics( args ):
  from .numerics.error_report import markdown_table, measure_all
  rows = measure_all()
  if getattr( args, "json", False ):
    import dataclasses
    import json
    print( json.dumps( { "functions": [ dataclasses.asdict( r ) for r in rows ] }, indent=2 ) )
    return
  print( markdown_table( rows ), end="" )


def cmd_demo( args ):
  import json
  if args.out is not None and args.paper == "skip":
    raise UsageError( f"--out {args.out} draws the comparison with the paper, which "
                      f"--paper skip leaves out; drop one of them" )
  from .gpt2.checkpoint import read_config
  from .gpt2.tokenizer import load_tokenizer
  from .bounds import check_dfx
  from .config import ConfigError, DFXConfig
  try:
    check_dfx( DFXConfig( cores=args.cores ) )
  except ConfigError as e:
    raise UsageError( str( e ) ) from None
  gpt = read_config( TINY_ENGLISH )
  n_prompt = len( load_tokenizer( TINY_ENGLISH, gpt.vocab_size ).encode( utf8_prompt( args.prompt ) ) )
  check_context( n_prompt, args.new_tokens, gpt )     # before the slow parts
  from .perf.cli import step_cache
  paper = dict( paper=args.paper, jobs=args.jobs, cache=step_cache( args ), out_dir=args.out )
  if args.json:
    quiet = lambda *a, **k: None    # noqa: E731
    print( json.dumps( DEMO.run_demo( args.prompt, args.new_tokens, args.cores, quiet, **paper ),
                       indent=2 ) )
    return
  progress = _Progress( "dfx demo", _stderr_is_tty() )

  def write( text ):
    print( stream_text( text ), end="", flush=True )

  def status( what ):
    def on_step( k, n ):
      progress.status( f"{what} {k}/{n}" )
      if k == n:
        progress.clear()
    return on_step

  DEMO.run_demo( args.prompt, args.new_tokens, args.cores, write=write,
                 on_step=status( "timing step" ),
                 on_paper_step=status( "timing GPT-2 345M: step" ), **paper )
  print( "\nMore: dfx generate --help (any level down to Verilator), dfx perf --help "
         "(any model size), dfx verilog --help." )


# -- errors: one line each -------------------------------------------------------

class UsageError( Exception ):
  """The arguments are wrong (exit 2, as argparse's own usage errors)."""


# What a user mistake or a bad file raises: the library's errors are
# ValueError subclasses (ConfigError, CompileError, CheckpointError,
# TokenizerError, ImageFormatError, WeightError, ...), files raise OSError,
# NaN logits ArithmeticError.  Anything else is a bug and keeps its traceback.
USER_ERRORS = ( ValueError, OSError, ArithmeticError, MemoryError )
EXIT_ERROR, EXIT_USAGE, EXIT_INTERRUPTED, EXIT_PIPE = 1, 2, 130, 141


# -- SIGTERM and SIGHUP: unwound as Ctrl-C ---------------------------------------------

# The signals `timeout`, `kill`, CI cancellation and a closed terminal send,
# and the word of main's one line for each.
STOP_SIGNALS = { name: word for name, word in ( ( "SIGTERM", "terminated" ),
                                                ( "SIGHUP", "hangup" ) )
                 if hasattr( signal, name ) }


class Terminated( KeyboardInterrupt ):
  """SIGTERM or SIGHUP, raised where the program is so that it unwinds as
  Ctrl-C does: every atomic write and temporary folder removes itself on the
  way out (`except BaseException`), and generate's --json prints its
  partial record.  main exits 128 + the signal's number."""

  def __init__( s, signum ):
    super().__init__( signum )
    s.signum = signum
    s.word = STOP_SIGNALS.get( signal.Signals( signum ).name, "terminated" )


@contextlib.contextmanager
def stop_signals_unwind():
  """While the block runs, SIGTERM and SIGHUP raise Terminated.  A signal
  that was ignored when the program started (nohup) stays ignored; a second
  one while the first unwinds is ignored, so that the clean-up finishes; a
  process forked meanwhile (perf's workers) still dies of it at once."""
  pid = os.getpid()
  old = {}

  def handler( signum, frame ):
    if os.getpid() != pid:
      signal.signal( signum, signal.SIG_DFL )
      os.kill( os.getpid(), signum )
      return
    for n in old:
      signal.signal( n, signal.SIG_IGN )
    raise Terminated( signum )

  for name in STOP_SIGNALS:
    n = getattr( signal, name )
    try:
      if signal.getsignal( n ) is signal.SIG_DFL:
        old[ n ] = signal.signal( n, handler )
    except ValueError:      # not the main thread: signals are not ours to take
      break
  try:
    yield
  finally:
    for n, h in old.items():
      signal.signal( n, h )


# -- output paths --------------------------------------------------------------------

def check_outputs( args ):
  """Every path the command would write, checked before anything is loaded
  or compiled (`outputs`: OutputPathError, one line naming the path and the
  reason): --save-image (a file), --out of verilog, report, sweep and demo
  and the step cache (directories), against the files the run reads."""
  from . import outputs
  model = getattr( args, "model", None ) or ( TINY_ENGLISH if args.cmd == "demo" else None )
  reads = outputs.model_reads( model )
  if getattr( args, "image", None ):
    reads[ args.image ] = "--image"
  if getattr( args, "save_image", None ) is not None:
    outputs.check_file( args.save_image, "--save-image", reads )
  if args.cmd in ( "verilog", "report", "sweep", "demo" ) and args.out is not None:
    outputs.check_dir( args.out, "--out", reads, empty=args.cmd == "verilog" )
  if hasattr( args, "cache" ):
    from .perf.cli import cache_dir
    where = cache_dir( args )
    if where is not None:
      outputs.check_dir( where, "--cache" if args.cache is not None else "the step cache",
                         reads )


class _Parser( argparse.ArgumentParser ):
  """argparse that reports a usage error on one line (and exits 2); with
  --json on the command line, also as a JSON error object on stdout."""

  json_errors = False

  def error( self, message ):
    message = shown( message )
    if _Parser.json_errors:
      _json_error( self.prog, "usage", message, EXIT_USAGE )
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
  """DFXConfig from --set and --cores; bad settings, and sizes past their
  bound (`bounds`: the RTL core's too, for what translates it), are usage
  errors."""
  from .bounds import check_dfx
  from .config import ConfigError, DFXConfig
  try:
    dfx = DFXConfig().with_overrides( args.set )
  except ConfigError as e:
    raise UsageError( str( e ) ) from None
  set_cores = any( a.partition( "=" )[0].strip() == "cores" for a in args.set )
  if args.cores is not None:
    if set_cores and dfx.cores != args.cores:
      raise UsageError( f"--cores {args.cores} and --set cores={dfx.cores} disagree" )
    try:
      dfx = dfx.replace( cores=args.cores )
    except ConfigError as e:
      raise UsageError( str( e ) ) from None
  rtl = args.cmd == "verilog" or getattr( args, "level", None ) in ( "rtl", "verilog" )
  try:
    check_dfx( dfx, rtl=rtl )
  except ConfigError as e:
    raise UsageError( str( e ) ) from None
  return dfx


def model_dir( spec ):
  """The checkpoint directory --model names, or None for a preset.

  The one rule for a name that is both: a preset's bare name (`tiny`)
  means the preset, whatever the current directory holds; a folder of that
  name is spelled as a path (`./tiny`).  So a command means the same in
  every directory.
  """
  from .config import GPT2_PRESETS
  if spec in GPT2_PRESETS:
    return None
  return spec if os.path.isdir( spec ) else None


def _model_config( spec ):
  """The model's GPT2Config, without loading its weights; says on stderr
  when a folder in the current directory has a preset's name (not used)."""
  from .config import GPT2_PRESETS, gpt2_preset
  from .gpt2.checkpoint import read_config
  path = model_dir( spec )
  if path is not None:
    return read_config( path )
  if spec in GPT2_PRESETS:
    if os.path.isdir( spec ):
      print( f"dfx: note: --model {spec} is the preset {spec!r}, not the folder "
             f"{os.path.join( os.curdir, spec )} (write that path for the folder)",
             file=sys.stderr )
    return gpt2_preset( spec )
  if os.path.lexists( spec ):    # a file, FIFO, device or broken symlink: say which
    raise UsageError( f"--model {describe_path( spec )}; expected a checkpoint directory or "
                      f"a preset ({', '.join( GPT2_PRESETS )})" )
  raise UsageError( f"--model {spec!r} is neither a checkpoint directory nor a "
                    f"preset ({', '.join( GPT2_PRESETS )})" )


def _load_weights( spec, cfg, seed ):
  from .gpt2 import load_checkpoint, random_weights
  if model_dir( spec ) is not None:
    w = load_checkpoint( spec )
    if w.config != cfg:    # the directory changed under us
      raise ValueError( f"{spec}: config.json changed while loading" )
    return w
  return random_weights( cfg, seed )


def utf8_prompt( text, option="--prompt" ):
  """`text` if it is UTF-8 text; a prompt typed in another encoding reaches
  Python as lone surrogates, which no tokenizer can encode."""
  try:
    text.encode( "utf-8" )
  except UnicodeEncodeError as e:
    raise UsageError( f"{option} '{shown( text )}' is not UTF-8 text: byte "
                      f"{shown( text[ e.start ] )} at character {e.start}" ) from None
  return text


def _prompt_ids( args, tok, vocab ):
  if args.prompt_ids is not None:
    items = args.prompt_ids.split( "," )
    if args.prompt_ids.strip() and any( not x.strip() for x in items ):
      raise UsageError( f"--prompt-ids '{shown( args.prompt_ids )}' has an empty item; expected "
                        f"comma-separated integers such as 1,2,3" )
    try:
      ids = [ int( x ) for x in items if x.strip() ]
    except ValueError:
      raise UsageError( f"--prompt-ids {args.prompt_ids!r} must be "
                        f"comma-separated integers" ) from None
  else:
    ids = tok.encode( utf8_prompt( args.prompt ) )    # TokenizerError names the problem
  bad = [ i for i in ids if not 0 <= i < vocab ]
  if not ids or bad:
    raise UsageError( f"prompt ids must be 1 or more ids in [0, {vocab})"
                      + ( f"; out of range: {bad[:8]}" if bad else "" ) )
  return ids


def check_context( n_prompt, n_new, cfg, new="--new-tokens", prompt=None ):
  """Refuse a generation longer than the model's position table up front:
  past n_positions, wpe has no row and the appliance would read whatever
  memory follows it (tokens that look right and are not).  The rule and
  its hint: `gpt2.decoding.context_problem`."""
  from .gpt2.decoding import context_problem
  problem = context_problem( n_prompt, n_new, cfg.n_positions,
                             f"model {cfg.name!r} has n_positions={cfg.n_positions}", new, prompt )
  if problem:
    raise UsageError( problem )


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


# -- progress on stderr ---------------------------------------------------------------

# Progress lines appear for anything slower than this, on a terminal only.
SLOW_SECONDS = 2.0


def _stderr_is_tty():
  try:
    return sys.stderr.isatty()
  except ( AttributeError, ValueError ):
    return False


def _stdout_is_tty():
  try:
    return sys.stdout.isatty()
  except ( AttributeError, ValueError ):
    return False


class _Progress:
  """Transient status lines on stderr ("\\r" + erase), and a closing line
  for a slow run; silent unless stderr is a terminal, and with --json."""

  def __init__( s, prog, enabled ):
    s.prog, s.on, s.shown = prog, enabled, False
    s.t0 = time.perf_counter()

  def elapsed( s ):
    return time.perf_counter() - s.t0

  def status( s, text, force=False ):
    if s.on and ( force or s.elapsed() > SLOW_SECONDS ):
      print( f"\r\033[K{s.prog}: {text}", end="", file=sys.stderr, flush=True )
      s.shown = True

  def clear( s ):
    if s.shown:
      print( "\r\033[K", end="", file=sys.stderr, flush=True )
      s.shown = False

  def done( s, text ):
    s.clear()
    if s.on and s.elapsed() > SLOW_SECONDS:
      print( f"{s.prog}: {text}", file=sys.stderr, flush=True )


# -- decoding options ---------------------------------------------------------------

DEFAULT_SEED = 0


def _resolve_seed( args ):
  """--seed (default DEFAULT_SEED), refused where it would seed nothing: a
  folder's or an image's weights are not random, and greedy decoding draws
  no samples."""
  if args.seed is not None and not args.temperature and (
      args.image or model_dir( args.model ) is not None ):
    whose = f"--image {args.image} holds the weights" if args.image else \
      f"--model {args.model} has its own weights"
    raise UsageError( f"--seed {args.seed} seeds nothing here: {whose} and greedy decoding "
                      f"draws no samples; drop --seed or add --temperature" )
  if args.seed is None:
    args.seed = DEFAULT_SEED


def _chooser( args, tok ):
  """(choose, stop token) from --temperature, --top-k, --stop-at-eos, --seed."""
  from .gpt2.decoding import Sampler, greedy_token
  if args.top_k and not args.temperature:
    raise UsageError( "--top-k needs --temperature > 0 (temperature 0 is greedy decoding)" )
  stop = None
  if args.stop_at_eos:
    stop = getattr( tok, "eot_id", None )
    if stop is None:
      raise UsageError( f"--stop-at-eos: model {args.model!r} has no tokenizer with an "
                        f"end-of-text token" )
  if not args.temperature:
    return greedy_token, stop
  return Sampler( args.temperature, args.top_k, seed=args.seed ), stop


def _float_at_least_0( text ):
  import math
  try:
    value = float( text )
  except ValueError:
    raise argparse.ArgumentTypeError( f"{text!r} is not a number" ) from None
  if not math.isfinite( value ) or value < 0:
    raise argparse.ArgumentTypeError( f"{text} must be a finite number >= 0" )
  return value


_float_at_least_0.__name__ = "number >= 0"


# -- compiled images ---------------------------------------------------------------------

def _use_image( args, cfg, n_tokens ):
  """The compiled model of --image, checked against --model, --cores/--set
  and the generation's length."""
  from .compiler.build import load_compiled
  compiled = load_compiled( args.image )
  have, want = compiled.gpt.to_hf_dict(), cfg.to_hf_dict()
  if have != want:
    # the sizes, and any other field that differs (e.g. only tie_word_embeddings)
    shown = [ "n_layer", "n_embd", "vocab_size" ]
    shown += [ k for k in ( "layer_norm_epsilon", "tie_word_embeddings" )
               if have.get( k ) != want[ k ] ]
    raise UsageError( f"--image {args.image} holds model {compiled.gpt.name!r} ("
                      + ", ".join( f"{k}={have.get( k )!r}" for k in shown )
                      + f"), not --model {args.model}" )
  if args.set or args.cores is not None:
    want = _dfx_config( args ).to_dict()
    have = compiled.dfx.to_dict()
    diff = [ f"{k}={have[ k ]}" for k in want if want[ k ] != have.get( k ) ]
    if diff:
      raise UsageError( f"--image {args.image} was compiled for {', '.join( diff )}; drop "
                        f"--cores/--set or compile again with --save-image" )
  limit = compiled.layout["max_tokens"]
  if n_tokens > limit:
    raise UsageError( f"--image {args.image} was compiled for at most {limit} tokens; "
                      f"this generation needs {n_tokens}" )
  return compiled


def _compile( args, cfg, dfx, n_tokens, progress ):
  from .compiler.build import compile_model, plan
  from .compiler.limits import CompileError
  max_tokens = n_tokens
  plan( cfg, dfx, dfx.cores, max_tokens )      # every compile-time limit (CompileError)
  _announce_generate( args, cfg, dfx, n_tokens )
  if args.save_image:
    # a kept image serves any later prompt: compile for the whole context if it fits
    try:
      plan( cfg, dfx, dfx.cores, cfg.n_positions )
      max_tokens = cfg.n_positions
    except CompileError:
      pass
  progress.status( f"loading {shown( args.model )} ...", force=True )
  weights = _load_weights( args.model, cfg, args.seed )
  progress.status( f"compiling {cfg.name} for {dfx.cores} core(s) ...", force=True )
  compiled = compile_model( weights.to_fp16(), dfx, dfx.cores, max_tokens=max_tokens )
  if args.save_image:
    progress.status( f"writing {shown( args.save_image )} ...", force=True )
    compiled.save( args.save_image )
  return compiled


def _announce_generate( args, cfg, dfx, n_tokens ):
  """The estimate of a generation, before any loading (`bounds.announce`:
  refused past its budget)."""
  from .bounds import CORE_CYCLES_PER_CPU_S, announce, level_seconds
  if args.level in CORE_CYCLES_PER_CPU_S or args.level == "func":
    steps = max( 1, n_tokens - 1 )
    announce( "dfx generate", level_seconds( cfg, dfx, dfx.cores, steps, args.level ),
              f"{steps} steps at {args.level} on {dfx.cores} core(s)", not args.json )


def cmd_generate( args ):
  import json
  from .appliance.host import Host
  from .gpt2.tokenizer import StreamDecoder, load_tokenizer

  host_kw = _host_kwargs( args )
  if args.image == "":
    raise UsageError( "--image: the path is empty" )
  # Every check that needs no weights runs before a (possibly 6 GB) load.
  cfg = _model_config( args.model )
  tok = load_tokenizer( model_dir( args.model ), cfg.vocab_size )
  ids = _prompt_ids( args, tok, cfg.vocab_size )
  check_context( len( ids ), args.new_tokens, cfg )     # --new-tokens, and a text or ids prompt
  _resolve_seed( args )
  choose, stop = _chooser( args, tok )
  n_tokens = len( ids ) + args.new_tokens
  progress = _Progress( "dfx generate", _stderr_is_tty() and not args.json )
  t0 = time.perf_counter()
  if args.image is not None:
    progress.status( f"reading {shown( args.image )} ...", force=True )
    compiled = _use_image( args, cfg, n_tokens )
    _announce_generate( args, cfg, compiled.dfx, n_tokens )
  else:
    compiled = _compile( args, cfg, _dfx_config( args ), n_tokens, progress )
  compile_s = time.perf_counter() - t0
  dfx = compiled.dfx
  if args.level != "func":
    progress.status( f"building the {args.level} appliance ...", force=True )
  host = Host( compiled, args.level, **host_kw )
  progress.clear()

  tokens = []
  stream = None if args.json else StreamDecoder( tok )
  quiet_stream = not _stdout_is_tty()
  t_gen = [ None ]

  def on_step( pos ):
    if pos < len( ids ):
      progress.status( f"prompt {pos}/{len( ids )}" )
    elif quiet_stream and t_gen[0] is not None:
      done = len( tokens )
      rate = done / max( 1e-9, time.perf_counter() - t_gen[0] )
      progress.status( f"token {done + 1}/{args.new_tokens}, {rate:.2f} tokens/s" )

  def on_token( t ):
    if t_gen[0] is None:
      t_gen[0] = time.perf_counter()
      progress.clear()
      if stream:
        print( stream_text( stream.feed( ids ) ), end="", flush=True )
    tokens.append( t )
    if stream and t != stop:
      print( stream_text( stream.feed( [ t ] ) ), end="", flush=True )

  def record( interrupted=False ):
    from .compiler import stats as S
    steps = host.step_seconds
    n_gen = max( 1, len( steps ) - len( ids ) )
    rec = {
      "model": args.model, "level": args.level, "unit_levels": args.unit_levels or {},
      "cores": compiled.cores, "seed": args.seed, "set": args.set,
      "image": args.image, "saved_image": args.save_image,
      "decoding": { "temperature": args.temperature, "top_k": args.top_k,
                    "stop_at_eos": args.stop_at_eos },
      "prompt_ids": ids, "tokens": tokens, "text": tok.decode( tokens ),
      "stopped_at_eos": stop is not None and stop in tokens,
      "steps": len( steps ), "sim_cycles": host.cycles,
      "seconds": { "compile": round( compile_s, 3 ), "total": round( sum( steps ), 3 ),
                   "per_generated_token": round( sum( steps[ len( ids ): ] ) / n_gen, 3 ) },
      "per_op_class": host.stats, "total": S.total( host.stats ),
      "padding": compiled.layout["padding"],
    }
    if interrupted:
      rec["interrupted"] = True
    rec.update( _timing( host, dfx ) )
    return rec

  try:
    host.generate( ids, args.new_tokens, on_token, choose=choose, stop_token=stop,
                   on_step=on_step )
  except KeyboardInterrupt:
    progress.clear()
    if args.json:
      # the partial result, then main's one line and exit 130
      print( json.dumps( record( interrupted=True ), indent=2 ), flush=True )
      args.json_reported = True
    raise
  if args.json:
    print( json.dumps( record(), indent=2 ) )
    return
  print( stream_text( stream.flush() ) )
  gen_s = time.perf_counter() - ( t_gen[0] or time.perf_counter() )
  progress.done( f"{len( tokens )} tokens in {gen_s:.1f} s "
                 f"({len( tokens ) / max( gen_s, 1e-9 ):.2f} tokens/s on the host)" )
  t = _timing( host, dfx )
  if t:
    c = t["cycles"]
    share = ", ".join( f"{k} {100 * v / max( 1, c['total'] ):.0f}%"
                       for k, v in sorted( c["per_op_class"].items(), key=lambda kv: -kv[1] )
                       if v )
    print( f"[{args.level}: {c['total']:,} cycles = {t['ms_at_clock']['total']:.3f} ms at "
           f"{dfx.clock_mhz} MHz over {len( c['per_step'] )} steps; {share}]", file=sys.stderr )


def _timing( host, dfx ):
  """The cycles of a timed level (CL, RTL, Verilator) and their time at the
  kernel clock; {} for the untimed levels (func, fl)."""
  from .appliance.host import TIMED_LEVELS
  if host.level not in TIMED_LEVELS:
    return {}
  r = host.results()
  ms = dfx.ms
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
  from .bounds import announce, verilog_cost
  dfx = _dfx_config( args )
  seconds, mb = verilog_cost( dfx )
  announce( "dfx verilog", seconds, f"translating an MFU of d x l = {dfx.d * dfx.l} MACs, ~{mb / 1024:.1f} GB "
            f"of memory{'; the lint comes on top' if args.lint else ''}", not args.json )
  t0 = time.perf_counter()
  if not args.json:
    print( f"translating the RTL core (d={dfx.d}, l={dfx.l}, {dfx.cores} core(s)) "
           f"{'and linting it ' if args.lint else ''}into {shown( args.out )} ...", flush=True )
  record = write_core_verilog( dfx, args.out, lint=args.lint )
  record["seconds"] = round( time.perf_counter() - t0, 1 )
  if args.json:
    print( json.dumps( { k: v for k, v in record.items() }, indent=2 ) )
    return
  lint = record.get( "lint" )
  print( f"{shown( args.out )}/{record['files'][0]}: top module {record['top']}, {record['lines']:,} lines; "
         + ( f"verilator --lint-only -Wall clean apart from waived classes "
             f"({', '.join( sorted( lint['waivers'] ) )}; reasons in config.json)"
             if lint else "not linted" )
         + f"; {record['seconds']} s" )


class _Formatter( argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter ):
  """Defaults shown (not for flags and unset options), descriptions and
  epilogs (the examples) kept as written.  A flag (nargs=0: store_true,
  store_false, ...) has no default worth showing: --no-lint's "default:
  True" would read as "skips the lint by default"."""

  def _get_help_string( s, action ):
    d = action.default
    if ( action.nargs == 0 or d is None or d is False or d is argparse.SUPPRESS
         or ( isinstance( d, list ) and not d ) ):
      return action.help
    return super()._get_help_string( action )


def _para( *paragraphs ):
  """Descriptions under RawDescriptionHelpFormatter: each paragraph wrapped."""
  import textwrap
  return "\n\n".join( textwrap.fill( t, 79 ) for t in paragraphs )


def _presets_text():
  from .config import GPT2_PRESETS
  return ", ".join( GPT2_PRESETS )


def _add_json( p ):
  p.add_argument( "--json", action="store_true",
                  help="print one JSON object on stdout (errors too: {\"error\": ...}); "
                       "no progress output" )


def _parser():
  from . import __version__
  from .appliance.host import LEVELS
  presets = _presets_text()
  common = argparse.ArgumentParser( add_help=False )
  common.add_argument( "--debug", action="store_true",
                       help="show the traceback of an error instead of one line" )
  ap = _Parser( prog="dfx", formatter_class=_Formatter,
                description=_para( "pymtl_dfx: a multi-level model of DFX, the multi-FPGA "
                                   "GPT-2 appliance.",
                                   f"GPT-2 presets (seeded random weights): {presets}; or a "
                                   f"Hugging Face GPT-2 folder." ),
                epilog="examples:\n"
                       "  dfx generate --model tiny --prompt Hello --new-tokens 16 --cores 4\n"
                       "  dfx perf --model gpt2-medium --cores 4 --in 64 --out 64\n"
                       "  dfx report --out build/report   (the paper's figures)\n"
                       "  dfx sweep --model gpt2 --set cores=2 --grid d=32,64 --grid l=8,16 --out build/sweep\n"
                       "  dfx verilog --out build/core --set d=32 --set l=8\n"
                       "  dfx <command> --help   (each command's options and defaults)\n\n"
                       "exit codes: 0 ok, 1 error, 2 usage error, 130 Ctrl-C, 141 closed pipe, "
                       "143 SIGTERM, 129 SIGHUP" )
  ap.add_argument( "--version", action="version", version=f"dfx (pymtl_dfx) {__version__}" )
  sub = ap.add_subparsers( dest="cmd", required=True, metavar="COMMAND", parser_class=_Parser )
  p = sub.add_parser( "generate", parents=[ common ], formatter_class=_Formatter,
                      help="GPT-2 text generation on the modelled appliance",
                      description=_para( "Generate text with GPT-2 on N modelled DFX cores: the "
                                         "compiler partitions the model, the host runs each "
                                         "token's programs and chooses the next token (greedy, "
                                         "or sampled with --temperature). Text streams to "
                                         "stdout; progress goes to stderr on a terminal.",
                                         f"GPT-2 presets (seeded random weights): {presets}." ),
                      epilog="examples:\n"
                             "  dfx generate --model tiny --prompt Hello --new-tokens 16 --cores 4\n"
                             "  dfx generate --model path/to/gpt2-medium --prompt 'The DFX' --cores 4\n"
                             "  dfx generate --model gpt2 --prompt-ids 464,3290 --level func --json\n"
                             "  dfx generate --model tiny --prompt-ids 1,2 --temperature 0.8 --top-k 40 --seed 7\n"
                             "  dfx generate --model gpt2 --prompt-ids 464 --save-image gpt2.dfx\n"
                             "  dfx generate --model gpt2 --prompt-ids 464 --image gpt2.dfx --level cl" )
  p.add_argument( "--model", default=TINY_ENGLISH,
                  help=f"a preset ({presets}) or a Hugging Face GPT-2 folder (config.json, "
                       f"model.safetensors, and tokenizer.json or vocab.json + merges.txt; a "
                       f"preset's name means the preset, ./NAME a folder of that name); "
                       f"the default is the shipped English GPT-2" )
  g = p.add_mutually_exclusive_group( required=True )
  g.add_argument( "--prompt", help="prompt text (needs the model's tokenizer; a preset "
                                   "reads it as UTF-8 bytes)" )
  g.add_argument( "--prompt-ids", help="prompt token ids, e.g. 1,2,3" )
  p.add_argument( "--new-tokens", type=positive, default=16, help="tokens to generate" )
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
  p.add_argument( "--seed", type=seed_type, default=None,
                  help=f"seed of a preset's random weights and of sampling (default: "
                       f"{DEFAULT_SEED})" )
  p.add_argument( "--temperature", type=_float_at_least_0, default=0.0,
                  help="sample from softmax(logits / T) on the host; 0 is greedy decoding" )
  p.add_argument( "--top-k", type=_int_at_least( 1 ), default=None,
                  help="sample among the k largest logits only (needs --temperature)" )
  p.add_argument( "--stop-at-eos", action="store_true",
                  help="stop after the tokenizer's end-of-text token" )
  im = p.add_mutually_exclusive_group()
  im.add_argument( "--save-image", metavar="FILE",
                   help="keep the compiled model in FILE (for the whole context when it fits)" )
  im.add_argument( "--image", metavar="FILE",
                   help="run a model compiled before with --save-image instead of "
                        "compiling: weights, cores and --set come from FILE (--model gives "
                        "the tokenizer and must match)" )
  _add_json( p )
  p.set_defaults( fn=cmd_generate )
  p = sub.add_parser( "demo", parents=[ common ], formatter_class=_Formatter,
                      help="generate text with the shipped GPT-2 on 4 modelled cards and time it",
                      description=_para( "The shipped GPT-2 (pymtl_dfx/models/tiny-english) "
                                         "writes text on the modelled DFX appliance, checked "
                                         "against the DFX-numerics reference; the performance "
                                         "model (CL's cycles exactly) then gives the time per "
                                         "token at the kernel clock and where it goes, and GPT-2 "
                                         "345M's tokens/s at 64:64 on 1, 2 and 4 cards beside "
                                         "the paper's." ),
                      epilog="example:\n  dfx demo --prompt 'He went up to' --new-tokens 16 --cores 2" )
  p.add_argument( "--prompt", default=DEMO.PROMPT, help="prompt text" )
  p.add_argument( "--new-tokens", type=positive, default=DEMO.NEW_TOKENS, help="tokens to generate" )
  p.add_argument( "--cores", type=positive, default=DEMO.CORES, help="modelled FPGA cards" )
  p.add_argument( "--paper", choices=( "compute", "cached", "skip" ), default="compute",
                  help="GPT-2 345M at 64:64 on 1, 2 and 4 cards beside the paper: time the "
                       "steps missing from the cache (18 steps, minutes of CPU the first "
                       "time), only read the cache, or leave it out (default: %(default)s)" )
  p.add_argument( "--out", metavar="DIR", default=None,
                  help="also draw the comparison (the report's figure b) into DIR" )
  from .perf.cli import add_step_options
  add_step_options( p, positive )
  _add_json( p )
  p.set_defaults( fn=cmd_demo )
  p = sub.add_parser( "verilog", parents=[ common ], formatter_class=_Formatter,
                      help="write the RTL core as Verilog for an FPGA build",
                      description=_para( "Translate the core (every unit at RTL, HBM/DDR "
                                         "channels as ports) to one Verilog file, lint it "
                                         "with verilator --lint-only -Wall, and write it with "
                                         "a file list and the config it was built for." ),
                      epilog="example:\n  dfx verilog --out build/core_d32 --set d=32 --set l=8 "
                             "--set hbm_channels=4" )
  p.add_argument( "--out", required=True, help="output directory (new or empty)" )
  p.add_argument( "--cores", type=positive, default=None,
                  help="cores of the appliance the core is built for (default 1)" )
  p.add_argument( "--set", action="append", default=[], metavar="KEY=VALUE",
                  help="a DFXConfig field, e.g. --set d=32 (repeatable)" )
  p.add_argument( "--no-lint", dest="lint", action="store_false", help="skip the Verilator lint" )
  _add_json( p )
  p.set_defaults( fn=cmd_verilog )
  from .perf.cli import add_parser as add_perf
  add_perf( sub, common, positive, _model_config, _dfx_config )
  perf = sub.choices["perf"]
  perf.formatter_class = _Formatter
  if perf.description is None:
    perf.description = _para( "Cycles, latency and tokens/s of a generation of --in "
                              "prompt and --out output tokens, CL-exact without data.",
                              f"GPT-2 presets: {presets}." )
  if perf.epilog and "\n" not in perf.epilog:
    perf.epilog = perf.epilog.replace( "example: ", "example:\n  " )
  from .report.cli import add_parser as add_report
  add_report( sub, common, positive )
  sub.choices["report"].formatter_class = _Formatter
  from .sweep.cli import add_parser as add_sweep
  add_sweep( sub, common, positive )
  sub.choices["sweep"].formatter_class = _Formatter
  p = sub.add_parser( "numerics", parents=[ common ], formatter_class=_Formatter,
                      help="measured error of exp/recip/rsqrt/gelu",
                      description="The special functions' error over every finite FP16 input, "
                                  "against float64.",
                      epilog="example:\n  dfx numerics --json" )
  _add_json( p )
  p.set_defaults( fn=cmd_numerics )
  return ap


def _one_line( e, prog=None ):
  """The error's message as one line: an OSError in words (`describe_os_error`),
  control characters escaped, and no second "dfx CMD: " in front."""
  if isinstance( e, OSError ) and e.errno is not None:
    text = describe_os_error( e )
  else:
    text = " ".join( str( e ).split( "\n" ) ) or type( e ).__name__
  if prog:
    while text.startswith( f"{prog}: " ):
      text = text[ len( prog ) + 2: ]
  return shown( text )


def _silence_stdout():
  """After a closed pipe, point stdout at /dev/null so that the interpreter's
  final flush does not raise (and print) a second BrokenPipeError."""
  try:
    devnull = os.open( os.devnull, os.O_WRONLY )
    os.dup2( devnull, sys.stdout.fileno() )
  except ( OSError, ValueError, AttributeError ):
    pass   # not a real file (e.g. captured by a test)


def _json_error( prog, kind, message, code ):
  """The error as one JSON object on stdout (with --json)."""
  import json
  print( json.dumps( { "error": { "command": prog, "kind": kind, "message": message,
                                  "exit_code": code } } ), flush=True )


def _wants_json( argv ):
  argv = sys.argv[ 1: ] if argv is None else argv
  return "--json" in argv[ : argv.index( "--" ) if "--" in argv else len( argv ) ]


def main( argv=None ):
  _Parser.json_errors = _wants_json( argv )
  try:
    ap = _parser()
    args = ap.parse_args( argv )
  finally:
    _Parser.json_errors = False
  prog = f"dfx {args.cmd}"
  json_out = getattr( args, "json", False )

  def fail( kind, message, code, line ):
    try:
      print( line, file=sys.stderr )
      if json_out and not getattr( args, "json_reported", False ):
        _json_error( prog, kind, message, code )
    except OSError:         # SIGHUP: the terminal may be gone
      pass
    return code

  try:
    with stop_signals_unwind():
      check_outputs( args )
      args.fn( args )
  except UsageError as e:
    if args.debug:
      raise
    return fail( "usage", _one_line( e, prog ), EXIT_USAGE, f"{prog}: error: {_one_line( e, prog )}" )
  except BrokenPipeError:
    # `dfx generate ... | head`: the reader has what it wanted
    _silence_stdout()
    return EXIT_PIPE
  except KeyboardInterrupt as e:
    if args.debug:
      raise
    if isinstance( e, Terminated ):
      return fail( "interrupted", e.word, 128 + e.signum, f"{prog}: {e.word}" )
    return fail( "interrupted", "interrupted", EXIT_INTERRUPTED, f"{prog}: interrupted" )
  except USER_ERRORS as e:
    if args.debug:
      raise
    return fail( "error", _one_line( e, prog ), EXIT_ERROR, f"{prog}: {_one_line( e, prog )}" )
  return 0


if __name__ == "__main__":
  # `python -m pymtl_dfx.cli`: run the module the commands import (`from
  # ..cli import UsageError`), not a second copy of it named __main__, whose
  # UsageError would be another class and escape main's handlers.
  from pymtl_dfx.cli import main as _main
  sys.exit( _main() )
