"""The `dfx` command line.

  dfx generate     GPT-2 text generation on the modelled appliance
  dfx demo         text on 4 modelled cards, timed; GPT-2 345M beside the paper (~2 min)
  dfx verilog      the RTL core as Verilog for an FPGA build (linted)
  dfx fpga         the U280 kernel's folder for a Vitis build
  dfx perf         cycles and latency of a generation, CL-exact without data
  dfx report       the paper's figures and comparison table from the performance model
  dfx sweep        a design-space sweep: latency and U280 resources over a grid of configs
  dfx numerics     the special functions' measured error table

`dfx --version`; `dfx COMMAND --help` shows each option's default and an
example.  Every subcommand takes --json (one JSON object on stdout; an error
is {"error": {...}} there too, with the same exit code).  Progress lines go to
stderr for slow steps, only on a terminal and never with --json.  Two notices
are not progress and go to stderr wherever it points (a file, a CI log), but
never with --json: a run estimated at a minute or more says so first, in one
line (`dfx perf: estimate: ~4 min (...)`, `bounds.announce`; past a day it is
refused), and a Verilator build says it may take minutes.

Every user mistake or bad file ends in one line on stderr: exit 1, or 2 for
a usage error (argparse's, a bad --profile, --set or --unit-levels, a
config that no model compiles for (l > d), a prompt longer than the
model's positions); --debug shows the traceback
instead.  A file
problem says which it is (missing, a directory, a FIFO, a permission
problem, a symlink loop: `files.describe_os_error`), and user or model text
is printed with its control characters escaped (`printable`: ESC as
\\x1b; in messages the format characters too, U+202E as \\u202e; the
streamed text keeps its newlines and tabs).  A closed
pipe (`| head`) exits 141 silently, Ctrl-C 130 with one line; SIGTERM (kill,
timeout, CI) and SIGHUP unwind as Ctrl-C does, removing every partial
output, and exit 128 + the signal (143, 129) with one line.  That holds
from main's first line, the commands' imports included (a signal while the
parser is built is raised once it is: `common.Signals.held`), and the
package itself imports nothing when it is imported (common's names are
looked up on first use, `__getattr__`), so only a signal in the
interpreter's own start-up, before main (some 50 ms), meets Python's
default: a KeyboardInterrupt traceback, or death by SIGTERM before
anything is written.  A stdout closed at the start (`>&-`) is an error
(exit 1), not output silently lost, and an unknown flag after the command
points at that command's --help.  Every
output path is checked before anything is loaded (`outputs`,
docs/outputs.md).

The package: `common` holds what the commands share (errors and exit codes,
argument types, the --profile and --set, --json and step options, the
config and model builders, the output-path check, the progress display);
each command is a module (`generate`, `demo`, `verilog`, `fpga`, `perf`,
`report`, `sweep`, `numerics`) with `add_parser(add)`, which declares its
options, and
`run(args)`, which calls the library and prints.  The work itself lives in
the library (`perf.summary`, `report.build`, `sweep.build`, `demo`, ...).

Adding a command: write `cli/NAME.py` with `add_parser` and `run` and name
it in COMMANDS below (the order of `dfx --help`).  Adding a flag every
command takes: one `add_argument` in `common.shared_options`.
"""

import importlib
import os
import sys

# The subcommands, in the order `dfx --help` lists them.
COMMANDS = ( "generate", "demo", "verilog", "fpga", "perf", "report", "sweep", "numerics" )

# The names of `common` the package offers (`cli.EXIT_PIPE`, `cli.common`),
# imported on first use so that importing the package runs nothing that
# main's handlers do not cover.
_FROM_COMMON = ( "EXIT_ERROR", "EXIT_INTERRUPTED", "EXIT_PIPE", "EXIT_USAGE", "USER_ERRORS",
                 "UsageError" )


def __getattr__( name ):
  if name not in _FROM_COMMON + ( "common", ):
    raise AttributeError( f"module {__name__!r} has no attribute {name!r}" )
  common = importlib.import_module( f"{__name__}.common" )
  return common if name == "common" else getattr( common, name )


def command( name ):
  """The module of subcommand `name` (looked up when the command runs)."""
  return importlib.import_module( f"{__name__}.{name}" )


def _parser():
  from .. import __version__
  from .common import Formatter, Parser, para, presets_text, shared_options
  presets = presets_text()
  shared = shared_options()
  ap = Parser( prog="dfx", formatter_class=Formatter,
               description=para( "pymtl_dfx: a multi-level model of DFX, the multi-FPGA "
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
  sub = ap.add_subparsers( dest="cmd", required=True, metavar="COMMAND", parser_class=Parser )

  def add( name, **kw ):
    return sub.add_parser( name, parents=[ shared ], formatter_class=Formatter, **kw )
  for name in COMMANDS:
    command( name ).add_parser( add )
  ap.commands = sub.choices       # for the flags only a command's parser knows (`_parse`)
  return ap


def _parse( argv ):
  """The parsed arguments; a usage error exits 2 (argparse), and an
  unknown flag after the command points at that command's --help."""
  from .common import Parser
  Parser.json_errors = _given( argv, "--json" )
  try:
    ap = _parser()
    args, extra = ap.parse_known_args( argv )
    if extra:
      before = argv[ :argv.index( args.cmd ) ]
      p = ap if any( x in before for x in extra ) else ap.commands[ args.cmd ]
      p.error( f"unrecognized arguments: {' '.join( extra )}" )
  finally:
    Parser.json_errors = False
  return args


def _one_line( e, prog=None ):
  """The error's message as one line: an OSError in words (`describe_os_error`),
  control characters escaped, and no second "dfx CMD: " in front."""
  from ..files import describe_os_error
  from ..printable import shown
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


def _given( argv, flag ):
  """Whether `flag` is on the command line (before a "--")."""
  return flag in argv[ : argv.index( "--" ) if "--" in argv else len( argv ) ]


def main( argv=None ):
  argv = sys.argv[ 1: ] if argv is None else list( argv )
  args = None
  # Until the arguments are parsed (the commands' imports make that most of
  # a second), the one line's command, --json and --debug are read off argv.
  prog = f"dfx {argv[0]}" if argv and argv[0] in COMMANDS else "dfx"

  def flag( name ):
    return getattr( args, name, False ) if args is not None else _given( argv, f"--{name}" )

  def fail( kind, message, code, line ):
    try:
      print( line, file=sys.stderr )
      if flag( "json" ) and not getattr( args, "json_reported", False ):
        from .common import json_error
        json_error( prog, kind, message, code )
    except OSError:         # SIGHUP: the terminal may be gone
      pass
    return code

  try:
    # common's import is covered too: a Ctrl-C may land in it
    from .common import ( EXIT_ERROR, EXIT_PIPE, EXIT_USAGE, USER_ERRORS, UsageError,
                          check_outputs, stop_signals_unwind )
    with stop_signals_unwind() as signals:
      try:
        with signals.held():
          args = _parse( argv )
        prog = f"dfx {args.cmd}"
        if sys.stdout is None:
          # Python's stdout when fd 1 is closed: print() would drop the output
          raise OSError( "stdout is closed (>&-): the output would be lost; send it to a "
                         "file, or to /dev/null to discard it" )
        check_outputs( args )
        command( args.cmd ).run( args )
      except Exception as e:
        if signals.landed and not flag( "debug" ):
          # the signal's KeyboardInterrupt became another error on its way
          # out (an import during the run turns one into an ImportError):
          # still the signal
          raise signals.landed[0] from None
        if isinstance( e, BrokenPipeError ):
          # `dfx generate ... | head`: the reader has what it wanted
          _silence_stdout()
          return EXIT_PIPE
        if flag( "debug" ) or not isinstance( e, ( UsageError, ) + USER_ERRORS ):
          raise
        line = _one_line( e, prog )
        if isinstance( e, UsageError ):
          return fail( "usage", line, EXIT_USAGE, f"{prog}: error: {line}" )
        return fail( "error", line, EXIT_ERROR, f"{prog}: {line}" )
  except KeyboardInterrupt as e:
    if flag( "debug" ):
      raise
    from .common import EXIT_INTERRUPTED
    signum = getattr( e, "signum", None )      # a common.Terminated: SIGTERM or SIGHUP
    if signum is not None:
      return fail( "interrupted", e.word, 128 + signum, f"{prog}: {e.word}" )
    return fail( "interrupted", "interrupted", EXIT_INTERRUPTED, f"{prog}: interrupted" )
  return 0
