"""`dfx demo`: the shipped GPT-2 writes text on 4 modelled cards, timed
(`pymtl_dfx.demo`); GPT-2 345M beside the paper."""

from . import common
from .common import UsageError, check_context, para, positive, utf8_prompt
from .. import demo as DEMO
from ..models import TINY_ENGLISH
from ..printable import stream_text


def add_parser( add ):
  p = add( "demo",
           help="generate text with the shipped GPT-2 on 4 modelled cards and time it",
           description=para( "The shipped GPT-2 (pymtl_dfx/models/tiny-english) "
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
  common.add_step_options( p )
  common.add_json( p )
  # the files the run reads (`check_outputs`), and --out is a directory
  p.set_defaults( model=TINY_ENGLISH, out_kind="dir" )


def run( args ):
  import json
  if args.out is not None and args.paper == "skip":
    raise UsageError( f"--out {args.out} draws the comparison with the paper, which "
                      f"--paper skip leaves out; drop one of them" )
  from ..gpt2.checkpoint import read_config
  from ..gpt2.tokenizer import load_tokenizer
  from ..bounds import check_dfx
  from ..config import ConfigError, DFXConfig
  try:
    check_dfx( DFXConfig( cores=args.cores ) )
  except ConfigError as e:
    raise UsageError( str( e ) ) from None
  gpt = read_config( TINY_ENGLISH )
  n_prompt = len( load_tokenizer( TINY_ENGLISH, gpt.vocab_size ).encode( utf8_prompt( args.prompt ) ) )
  check_context( n_prompt, args.new_tokens, gpt )     # before the slow parts
  paper = dict( paper=args.paper, jobs=args.jobs, cache=common.step_cache( args ),
                out_dir=args.out )
  if args.json:
    quiet = lambda *a, **k: None    # noqa: E731
    print( json.dumps( DEMO.run_demo( args.prompt, args.new_tokens, args.cores, quiet, **paper ),
                       indent=2 ) )
    return
  progress = common.Progress( "dfx demo" )

  def write( text ):
    print( stream_text( text ), end="", flush=True )

  DEMO.run_demo( args.prompt, args.new_tokens, args.cores, write=write,
                 on_step=progress.counter( "timing step", leave=False ),
                 on_paper_step=progress.counter( "timing GPT-2 345M: step", leave=False ), **paper )
  print( "\nMore: dfx generate --help (any level down to Verilator), dfx perf --help "
         "(any model size), dfx verilog --help." )
