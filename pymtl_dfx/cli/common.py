"""What every `dfx` command shares: the errors and exit codes, the signals
that unwind as Ctrl-C, the argument types, the options several commands
take (--profile and --set, --json, the step options), the config and model
builders, the check of every output path, and the one progress display
(tqdm)."""

import argparse
import contextlib
import os
import re
import signal
import sys
import time

from ..files import describe_path
from ..printable import shown


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


class Signals:
  """The signals that landed while `stop_signals_unwind` ran: `landed`, the
  exception each raised (or will raise), in order."""

  def __init__( s ):
    s.landed, s.holding = [], False

  def land( s, e ):
    s.landed.append( e )
    if not s.holding:
      raise e

  @contextlib.contextmanager
  def held( s ):
    """While the block runs, a signal is only noted, and raised when the
    block ends: imports (the commands' modules, numpy, pymtl3) do not
    survive a KeyboardInterrupt raised inside them, which numpy's turns into
    an ImportError and a lock's callback drops with an "Exception ignored"
    traceback."""
    s.holding = True
    try:
      yield
    finally:
      s.holding = False
    if s.landed:
      raise s.landed[0]


@contextlib.contextmanager
def stop_signals_unwind():
  """While the block runs, SIGTERM and SIGHUP raise Terminated.  A signal
  that was ignored when the program started (nohup) stays ignored; a second
  one while the first unwinds is ignored, so that the clean-up finishes; a
  process forked meanwhile (perf's workers) still dies of it at once.
  Ctrl-C raises KeyboardInterrupt as Python's own handler does.  The block
  gets the `Signals`: a library may still turn a signal's exception into
  another error on its way out, and main then reports the signal."""
  pid = os.getpid()
  old, signals = {}, Signals()

  def stop( signum, frame ):
    if os.getpid() != pid:
      signal.signal( signum, signal.SIG_DFL )
      os.kill( os.getpid(), signum )
      return
    for n in old:
      if n != signal.SIGINT:
        signal.signal( n, signal.SIG_IGN )
    signals.land( Terminated( signum ) )

  def interrupt( signum, frame ):
    if os.getpid() != pid:
      signal.default_int_handler( signum, frame )
    signals.land( KeyboardInterrupt() )

  # each signal's handler, taken only from the default (not from nohup's SIG_IGN)
  takes = { getattr( signal, name ): ( stop, signal.SIG_DFL ) for name in STOP_SIGNALS }
  takes[ signal.SIGINT ] = ( interrupt, signal.default_int_handler )
  for n, ( handler, default ) in takes.items():
    try:
      if signal.getsignal( n ) is default:
        old[ n ] = signal.signal( n, handler )
    except ValueError:      # not the main thread: signals are not ours to take
      break
  try:
    yield signals
  finally:
    for n, h in old.items():
      signal.signal( n, h )


# -- the options every command takes ------------------------------------------------

def shared_options():
  """The parent parser of every subcommand: a flag every command takes is
  added here, once."""
  p = argparse.ArgumentParser( add_help=False )
  p.add_argument( "--debug", action="store_true",
                  help="show the traceback of an error instead of one line" )
  return p


class Parser( argparse.ArgumentParser ):
  """argparse that reports a usage error on one line (and exits 2); with
  --json on the command line, also as a JSON error object on stdout."""

  json_errors = False

  def __init__( self, *a, **k ):
    super().__init__( *a, **k )
    # A value that starts with "-" and a digit is an option's value, not an
    # unknown flag: `--wave-cycles -1:3` reaches the window's own check
    # (argparse alone takes only plain numbers such as -5 for values).
    # Set before any argument is added: groups copy it.
    self._negative_number_matcher = re.compile( r"-\.?\d" )

  def error( self, message ):
    message = shown( message )
    if Parser.json_errors:
      json_error( self.prog, "usage", message, EXIT_USAGE )
    self.exit( EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n" )


def int_at_least( lo ):
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


positive = int_at_least( 1 )
# numpy's seeded generators take no negative seed
seed_type = int_at_least( 0 )


def unit_levels( text ):
  """'mpu=rtl,vpu=cl' -> {'mpu': 'rtl', 'vpu': 'cl'}, names checked against
  the core's units and levels so that a typo is a usage error."""
  from ..core.Core import CORE_LEVELS, UNIT_NAMES
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


def float_at_least_0( text ):
  import math
  try:
    value = float( text )
  except ValueError:
    raise argparse.ArgumentTypeError( f"{text!r} is not a number" ) from None
  if not math.isfinite( value ) or value < 0:
    raise argparse.ArgumentTypeError( f"{text} must be a finite number >= 0" )
  return value


float_at_least_0.__name__ = "number >= 0"


class Formatter( argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter ):
  """Defaults shown (not for flags, unset options, and helps that say
  their default in words: --jobs' "the CPU count"), descriptions and
  epilogs (the examples) kept as written.  A flag (nargs=0: store_true,
  store_false, ...) has no default worth showing: --no-lint's "default:
  True" would read as "skips the lint by default"."""

  def _get_help_string( s, action ):
    d = action.default
    if ( action.nargs == 0 or d is None or d is False or d is argparse.SUPPRESS
         or ( isinstance( d, list ) and not d ) or "(default: " in ( action.help or "" ) ):
      return action.help
    return super()._get_help_string( action )


def para( *paragraphs ):
  """Descriptions under RawDescriptionHelpFormatter: each paragraph wrapped."""
  import textwrap
  return "\n\n".join( textwrap.fill( t, 79 ) for t in paragraphs )


def presets_text():
  from ..config import GPT2_PRESETS
  return ", ".join( GPT2_PRESETS )


JSON_HELP = "print one JSON object on stdout (errors too: {\"error\": ...}); no progress output"


def add_json( p, help=JSON_HELP ):
  p.add_argument( "--json", action="store_true", help=help )


def profile_name( text ):
  """--profile's type: a name of `profiles.PROFILES` (else a usage error
  listing them)."""
  from ..profiles import ProfileError, get
  try:
    get( text )
  except ProfileError as e:
    raise argparse.ArgumentTypeError( str( e ) ) from None
  return text


profile_name.__name__ = "profile"


class OneProfile( argparse.Action ):
  """--profile's action: one name.  A second, other one would silently
  replace the first, and profiles do not combine."""

  def __call__( s, parser, namespace, value, option_string=None ):
    first = getattr( namespace, s.dest, None )
    if first is not None and first != value:
      parser.error( f"--profile given twice ({first}, {value}); a profile is one named set: "
                    f"use --set on top of one" )
    setattr( namespace, s.dest, value )


def add_set( p, help, described_here=False ):
  """--profile NAME and --set KEY=VALUE (repeatable): a named set of
  DFXConfig values, then fields on top (`dfx_config`).  Every command that
  builds a DFXConfig declares them here, so each takes both.  The help
  names the profiles; one command's epilog (`described_here`: perf's)
  describes them (`profile_descriptions`), rather than every help."""
  from ..profiles import PROFILES
  where = "described below" if described_here else "`dfx perf --help` describes each"
  p.add_argument( "--profile", type=profile_name, action=OneProfile, default=None,
                  metavar="NAME",
                  help=f"a named set of DFXConfig values, applied before --set (default: none, "
                       f"the paper's design with sourced costs): {', '.join( PROFILES )}; "
                       f"{where}" )
  p.add_argument( "--set", action="append", default=[], metavar="KEY=VALUE", help=help )


def profile_descriptions():
  """The profiles and what each is, for the one help that lists them in
  full (`dfx perf --help`'s epilog)."""
  import textwrap
  from ..profiles import PROFILES
  return "profiles (--profile NAME):\n" + "\n".join(
    textwrap.fill( f"{n}: {p.description}", 79, initial_indent="  ", subsequent_indent="    " )
    for n, p in PROFILES.items() )


def base_config( args ):
  """DFXConfig() with --profile's values (a usage error if they are bad)."""
  from ..profiles import ProfileError, config
  try:
    return config( getattr( args, "profile", None ) )
  except ProfileError as e:
    raise UsageError( str( e ) ) from None


# -- timed steps: how they are computed and kept -------------------------------------

# Steps of each kind that --samples times exactly unless told otherwise.
SAMPLES = 4
def jobs_count( text ):
  """--jobs' type: a positive count of at most `bounds.max_jobs()`."""
  from ..bounds import MAX_JOBS_PER_CPU, cpu_count, max_jobs
  value = positive( text )
  if value > max_jobs():
    raise argparse.ArgumentTypeError(
      f"{value} is above its bound {max_jobs()} ({MAX_JOBS_PER_CPU} x this machine's "
      f"{cpu_count()} CPU(s): timing is CPU-bound, so more processes only take turns; "
      f"bounds.MAX_JOBS_PER_CPU)" )
  return value


jobs_count.__name__ = "process count"


def default_jobs():
  """Local processes timing steps unless --jobs says otherwise: one per CPU."""
  from ..bounds import cpu_count
  return cpu_count()


def add_step_options( p, default_set=True ):
  """--jobs, --cache, --no-cache: how timed steps are computed and kept
  (every command that times steps).  --cache and --no-cache exclude each
  other.  `default_set=False` leaves --jobs None when it is not given, so
  that a command tells an explicit --jobs from none (argparse's exclusive
  groups cannot: `--jobs 2` is the default on 2 CPUs); it then uses
  `default_jobs()` itself."""
  from ..bounds import MAX_JOBS_PER_CPU, max_jobs
  p.add_argument( "--jobs", type=jobs_count, default=default_jobs() if default_set else None,
                  metavar="N",
                  help=f"local processes timing steps (default: the CPU count, {default_jobs()} "
                       f"here; at most {MAX_JOBS_PER_CPU} x the CPU count, {max_jobs()} here)" )
  g = p.add_mutually_exclusive_group()
  g.add_argument( "--cache", default=None, metavar="DIR",
                  help="where timed steps are kept (default: $DFX_PERF_CACHE or "
                       "~/.cache/pymtl_dfx/perf)" )
  g.add_argument( "--no-cache", action="store_true", help="keep no timed steps" )


def cache_dir( args ):
  """The step cache's directory the step options ask for (None: no cache);
  an empty --cache is kept so that the output check refuses it."""
  from ..perf.sampled import default_cache_dir
  if args.no_cache:
    return None
  return args.cache if args.cache is not None else str( default_cache_dir() )


def step_cache( args ):
  """The StepCache the step options ask for."""
  from ..perf.sampled import StepCache
  return StepCache( cache_dir( args ) )


def announce_steps( prog, jobs, enabled ):
  """on_start(tasks) for `sampled.time_many`: the estimate of timing them
  (`compiler.run_estimate.perf_tasks`) on stderr when it is minutes or more."""
  from ..compiler.run_estimate import perf_tasks
  return lambda tasks: perf_tasks( prog, tasks, jobs, enabled )


# -- the config and the model ------------------------------------------------------

def dfx_config( args ):
  """DFXConfig from --profile, then --set, then --cores; bad settings, and
  sizes past their bound (`bounds`: the RTL core's too, for what
  translates it), are usage errors."""
  from ..config import ConfigError
  try:
    dfx = base_config( args ).with_overrides( args.set )
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
  rtl = args.cmd in ( "verilog", "fpga" ) or \
        getattr( args, "level", None ) in ( "rtl", "verilog", "kernel" )
  return checked_config( dfx, rtl )


def checked_config( dfx, rtl=False ):
  """`dfx`, if it is within its bounds (`bounds.check_dfx`) and within the
  compiler's limits of a config alone (`limits.config_errors`: l <= d, ...),
  which no model can meet either; else a usage error."""
  from ..bounds import check_dfx
  from ..compiler.limits import config_errors
  from ..config import ConfigError
  try:
    check_dfx( dfx, rtl=rtl )
  except ConfigError as e:
    raise UsageError( str( e ) ) from None
  errors = config_errors( dfx, dfx.cores )
  if errors:
    raise UsageError( "cannot compile for DFX: " + "; ".join( errors ) )
  return dfx


def model_dir( spec ):
  """The checkpoint directory --model names, or None for a preset.

  The one rule for a name that is both: a preset's bare name (`tiny`)
  means the preset, whatever the current directory holds; a folder of that
  name is spelled as a path (`./tiny`).  So a command means the same in
  every directory.
  """
  from ..config import GPT2_PRESETS
  if spec in GPT2_PRESETS:
    return None
  return spec if os.path.isdir( spec ) else None


def model_config( spec ):
  """The model's GPT2Config, without loading its weights; says on stderr
  when a folder in the current directory has a preset's name (not used)."""
  from ..config import GPT2_PRESETS, gpt2_preset
  from ..gpt2.checkpoint import read_config
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


def load_weights( spec, cfg, seed ):
  from ..gpt2 import load_checkpoint, random_weights
  if model_dir( spec ) is not None:
    w = load_checkpoint( spec )
    if w.config != cfg:    # the directory changed under us
      raise ValueError( f"{spec}: config.json changed while loading" )
    return w
  return random_weights( cfg, seed )


def utf8_prompt( text, option="--prompt" ):
  """`text` if it is a prompt: not empty, and UTF-8 text (a prompt typed in
  another encoding reaches Python as lone surrogates, which no tokenizer
  can encode)."""
  if text == "":
    raise UsageError( f"{option} is empty: the model needs at least one token to continue" )
  try:
    text.encode( "utf-8" )
  except UnicodeEncodeError as e:
    raise UsageError( f"{option} '{shown( text )}' is not UTF-8 text: byte "
                      f"{shown( text[ e.start ] )} at character {e.start}" ) from None
  return text


def check_context( n_prompt, n_new, cfg, new="--new-tokens", prompt=None ):
  """Refuse a generation longer than the model's position table up front:
  past n_positions, wpe has no row and the appliance would read whatever
  memory follows it (tokens that look right and are not).  The rule and
  its hint (`new` names n_new's option, `prompt` n_prompt's as a count,
  None for a prompt to be shortened): `gpt2.decoding.context_problem`."""
  from ..gpt2.decoding import context_problem
  problem = context_problem( n_prompt, n_new, cfg.n_positions,
                             f"model {cfg.name!r} has n_positions={cfg.n_positions}", new, prompt )
  if problem:
    raise UsageError( problem )


# -- output paths --------------------------------------------------------------------

def model_reads( spec ):
  """{path: what it is} of the files `--model spec` makes a run read: a
  checkpoint directory's config, weights and tokenizer files (a preset
  reads none)."""
  from ..gpt2.checkpoint import CONFIG_FILE, WEIGHTS_FILE
  from ..gpt2.tokenizer import MERGES_FILE, TOKENIZER_FILE, VOCAB_FILE
  if not spec or not os.path.isdir( spec ):
    return {}
  names = ( CONFIG_FILE, WEIGHTS_FILE, TOKENIZER_FILE, VOCAB_FILE, MERGES_FILE )
  return { os.path.join( spec, n ): f"the model's {n}" for n in names }


def check_outputs( args ):
  """Every path the command would write, checked before anything is loaded
  or compiled (`outputs`: OutputPathError, one line naming the path and the
  reason): --save-image, --wave and --trace FILE (files), --out of the
  commands that say it is a directory (`out_kind`: "dir", or "empty dir")
  and the step cache (directories), against the files the run reads."""
  from .. import outputs
  reads = model_reads( getattr( args, "model", None ) )
  if getattr( args, "image", None ):
    reads[ args.image ] = "--image"
  if getattr( args, "save_image", None ) is not None:
    outputs.check_file( args.save_image, "--save-image", reads )
  # generate's debugging files (--trace alone or "-": stderr)
  for opt in ( "wave", "trace" ):
    path = getattr( args, opt, None )
    if path is not None and path != "-":
      outputs.check_file( path, f"--{opt}", reads )
  kind = getattr( args, "out_kind", None )
  if kind is not None and args.out is not None:
    outputs.check_dir( args.out, "--out", reads, empty=kind == "empty dir" )
  if hasattr( args, "cache" ):
    where = cache_dir( args )
    if where is not None:
      outputs.check_dir( where, "--cache" if args.cache is not None else "the step cache at",
                         reads )


# -- progress on stderr ---------------------------------------------------------------

# Progress lines appear for anything slower than this, on a terminal only.
SLOW_SECONDS = 2.0


def _stderr_is_tty():
  try:
    return sys.stderr.isatty()
  except ( AttributeError, ValueError ):
    return False


def stdout_is_tty():
  try:
    return sys.stdout.isatty()
  except ( AttributeError, ValueError ):
    return False


class Progress:
  """The one progress display of the long commands: a tqdm line on stderr,
  only on a terminal and never with --json (`enabled`), and only once the
  run has taken SLOW_SECONDS (`force`: a phase worth naming at once, such
  as loading).  One line at a time: a new phase replaces the last one."""

  # "dfx perf: timed step 3/18, note [00:42<03:30]"
  COUNT = "{desc} {n_fmt}/{total_fmt}{postfix} [{elapsed}<{remaining}]"

  def __init__( s, prog, enabled=True ):
    s.prog, s.on = prog, enabled and _stderr_is_tty()
    s.t0 = time.perf_counter()
    s.bar = None

  def elapsed( s ):
    return time.perf_counter() - s.t0

  def _shows( s, force=False ):
    return s.on and ( force or s.elapsed() > SLOW_SECONDS )

  def _phase( s, text, total=None, leave=False ):
    desc = f"{s.prog}: {text}"
    if s.bar is None or ( s.bar.desc, s.bar.total ) != ( desc, total ):
      from tqdm import tqdm
      s.clear()
      # no monitor thread: perf forks workers while a bar is shown
      tqdm.monitor_interval = 0
      s.bar = tqdm( desc=desc, total=total, file=sys.stderr, leave=leave, disable=False,
                    dynamic_ncols=True, bar_format=s.COUNT if total else "{desc}" )
    return s.bar

  def status( s, text, force=False ):
    """A line saying what the run is doing now."""
    if s._shows( force ):
      s._phase( text ).refresh()

  def count( s, what, k, n, note=None, leave=False ):
    """`what k/n`, with its time so far and the time left; the last one
    (k == n) stays on the screen if `leave`, else is cleared."""
    if not s._shows():
      return
    bar = s._phase( what, n, leave )
    if note is not None:
      bar.set_postfix_str( note, refresh=False )
    bar.n = k
    bar.refresh()
    if k == n:
      s.clear()

  def counter( s, what, leave=True ):
    """on_done(k, n) for the library's loops (`count` of `what`)."""
    return lambda k, n: s.count( what, k, n, leave=leave )

  def clear( s ):
    if s.bar is not None:
      s.bar.close()
      s.bar = None

  def done( s, text ):
    """The closing line of a slow run."""
    s.clear()
    if s._shows():
      print( f"{s.prog}: {text}", file=sys.stderr, flush=True )


def json_error( prog, kind, message, code ):
  """The error as one JSON object on stdout (with --json)."""
  import json
  print( json.dumps( { "error": { "command": prog, "kind": kind, "message": message,
                                  "exit_code": code } } ), flush=True )
