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
stderr for slow steps, only on a terminal and never with --json.

Every user mistake or bad file ends in one line on stderr: exit 1, or 2 for
a usage error (argparse's, a bad --profile, --set or --unit-levels, a
prompt longer than the model's positions); --debug shows the traceback
instead.  A file
problem says which it is (missing, a directory, a FIFO, a permission
problem, a symlink loop: `files.describe_os_error`), and user or model text
is printed with its control characters escaped (`printable`: ESC as
\\x1b; the streamed text keeps its newlines and tabs).  A closed
pipe (`| head`) exits 141 silently, Ctrl-C 130 with one line; SIGTERM (kill,
timeout, CI) and SIGHUP unwind as Ctrl-C does, removing every partial
output, and exit 128 + the signal (143, 129) with one line.  Every output

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

from .common import (EXIT_ERROR, EXIT_INTERRUPTED, EXIT_PIPE, EXIT_USAGE, USER_ERRORS,  # noqa: F401
                     Formatter, Parser, Terminated, UsageError, check_outputs, json_error,
                     para, presets_text, shared_options, stop_signals_unwind)
from ..files import describe_os_error
from ..printable import shown

# The subcommands, in the order `dfx --help` lists them.
COMMANDS = ( "generate", "demo", "verilog", "fpga", "perf", "report", "sweep", "numerics" )


def command( name ):
  """The module of subcommand `name` (looked up when the command runs)."""
  return importlib.import_module( f"{__name__}.{name}" )


def _parser():
  from .. import __version__
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


def _wants_json( argv ):
  argv = sys.argv[ 1: ] if argv is None else argv
  return "--json" in argv[ : argv.index( "--" ) if "--" in argv else len( argv ) ]


def main( argv=None ):
  Parser.json_errors = _wants_json( argv )
  try:
    ap = _parser()
    args = ap.parse_args( argv )
  finally:
    Parser.json_errors = False
  prog = f"dfx {args.cmd}"
  json_out = getattr( args, "json", False )

  def fail( kind, message, code, line ):
    try:
      print( line, file=sys.stderr )
      if json_out and not getattr( args, "json_reported", False ):
        json_error( prog, kind, message, code )
    except OSError:         # SIGHUP: the terminal may be gone
      pass
    return code

  try:
    with stop_signals_unwind():
      check_outputs( args )
      command( args.cmd ).run( args )
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
