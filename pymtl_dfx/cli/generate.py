"""`dfx generate`: GPT-2 text generation on the modelled appliance."""

import os
import sys
import time

from . import common
from .common import (UsageError, check_context, dfx_config, model_config, model_dir, para,
                     positive, utf8_prompt)
from ..models import TINY_ENGLISH
from ..printable import shown, stream_text


def add_parser( add ):
  from ..levels import LEVELS
  presets = common.presets_text()
  p = add( "generate",
           help="GPT-2 text generation on the modelled appliance",
           description=para( "Generate text with GPT-2 on N modelled DFX cores: the "
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
                  "  dfx generate --model gpt2 --prompt-ids 464 --image gpt2.dfx --level cl\n"
                  "  dfx generate --model tiny --prompt-ids 1 --new-tokens 1 --level cl "
                  "--wave run.vcd --wave-cycles 4000:5000 --trace trace.txt" )
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
  common.add_set( p, "a DFXConfig field, e.g. --set d=32 --set hbm_channels=16 (repeatable)" )
  p.add_argument( "--level", choices=LEVELS, default="func",
                  help="func: instruction-level functional appliance (fast); fl/cl/rtl: "
                       "cores of stream units at that level; verilog: the whole "
                       "appliance in Verilator; kernel: the U280 kernel's RTL (each card's "
                       "core behind its AXI adapters, with HBM and DDR models and the ring's "
                       "link models) co-simulated in Verilator, driven through its control "
                       "registers as XRT drives a card; fpga: U280 cards through XRT "
                       "(--xclbin)" )
  p.add_argument( "--xclbin", metavar="FILE", default=None,
                  help="with --level fpga: the kernel's xclbin (`dfx fpga`'s build), "
                       "loaded on cards 0 .. cores-1" )
  p.add_argument( "--unit-levels", type=common.unit_levels, default=None, metavar="UNIT=LEVEL,...",
                  help="per-unit levels at a stream level, e.g. mpu=rtl,vpu=cl" )
  p.add_argument( "--seed", type=common.seed_type, default=None,
                  help=f"seed of a preset's random weights and of sampling (default: "
                       f"{DEFAULT_SEED})" )
  p.add_argument( "--temperature", type=common.float_at_least_0, default=0.0,
                  help="sample from softmax(logits / T) on the host; 0 is greedy decoding" )
  p.add_argument( "--top-k", type=common.int_at_least( 1 ), default=None,
                  help="sample among the k largest logits only (needs --temperature)" )
  p.add_argument( "--stop-at-eos", action="store_true",
                  help="stop after the tokenizer's end-of-text token" )
  im = p.add_mutually_exclusive_group()
  im.add_argument( "--save-image", metavar="FILE",
                   help="keep the compiled model in FILE (for the whole context when it fits)" )
  im.add_argument( "--image", metavar="FILE",
                   help="run a model compiled before with --save-image instead of "
                        "compiling: weights, cores, --profile and --set come from FILE "
                        "(--model gives the tokenizer and must match; a --profile, --set or "
                        "--cores given too must agree with FILE)" )
  _add_debug_options( p )
  common.add_json( p )


def _window_type( text ):
  import argparse
  from ..appliance.waves import WaveError, parse_window
  try:
    return parse_window( text )
  except WaveError as e:
    raise argparse.ArgumentTypeError( str( e ) ) from None


_window_type.__name__ = "cycle window A:B"


def _add_debug_options( p ):
  from ..appliance.waves import DEFAULT_WINDOW
  lo, hi = DEFAULT_WINDOW
  g = p.add_argument_group( "debugging (the simulated levels: fl, cl, rtl, verilog, kernel; "
                            "docs/debugging.md)" )
  g.add_argument( "--wave", metavar="FILE",
                  help="write a VCD wave of the run: every pymtl3 signal at fl, cl and rtl; "
                       "Verilator's trace of every internal signal at verilog and kernel (a "
                       "separate traced build); 1 cycle = 1 ns; open it with `gtkwave FILE` or "
                       "`surfer FILE`" )
  g.add_argument( "--wave-cycles", metavar="A:B", type=_window_type, default=None,
                  help=f"the cycles --wave and --trace write: A to B-1, counted from reset "
                       f"over the whole run (memory loads, token steps, logit read-backs); "
                       f"A: runs to the end (default: {lo}:{hi}, the first {hi:,} cycles, so "
                       f"that a full run does not write gigabytes)" )
  g.add_argument( "--trace", nargs="?", const="-", metavar="FILE",
                  help="the top's line trace (`cycle: per-core control unit and router`), "
                       "one line a cycle of the window, to FILE, or to stderr without FILE "
                       "(at verilog: the Verilated top's ports, and pymtl3's slower tick)" )


def _probe( args ):
  """The waves.Probe of --wave, --wave-cycles and --trace (None: none
  asked), checked before anything is loaded."""
  from ..appliance.waves import DEFAULT_WINDOW, Probe, WaveError
  if args.wave is None and args.trace is None:
    if args.wave_cycles is not None:
      raise UsageError( "--wave-cycles bounds --wave and --trace; give one of them" )
    return None
  opts = [ o for o, v in ( ( "--wave", args.wave ), ( "--trace", args.trace ) ) if v is not None ]
  if args.level in ( "func", "fpga" ):
    need = "needs" if len( opts ) == 1 else "need"
    why = "func runs whole instructions, no clock" if args.level == "func" else \
          "fpga runs on cards (use the kernel's co-simulation, --level kernel)"
    raise UsageError( f"{' and '.join( opts )} {need} a simulated level (--level fl, cl, rtl, "
                      f"verilog or kernel): {why}" )
  if args.wave is not None and args.trace not in ( None, "-" ) and \
     os.path.abspath( args.wave ) == os.path.abspath( args.trace ):
    raise UsageError( f"--wave and --trace name the same file {shown( args.wave )}" )
  probe = Probe( wave=args.wave, window=args.wave_cycles or DEFAULT_WINDOW )
  try:
    # the kernel's wave is Verilator's, as the verilog level's
    probe.check_level( "verilog" if args.level == "kernel" else args.level )
  except WaveError as e:
    raise UsageError( str( e ) ) from None
  return probe


def _report_probe( probe, host, args ):
  """One line per file on stderr: what the window held of the run."""
  from ..appliance.waves import window_text
  if probe is None or args.json:
    return
  run, starts = host.backend.cycle, host.backend.step_starts
  where = lambda what, name, n: print(
    f"dfx generate: {what} {name}: {window_text( probe.window )} of the run's {run:,}; "
    f"{n} written", file=sys.stderr )
  shown_starts = ", ".join( f"{k:,}" for k in starts[:8] ) + ( ", ..." if starts[8:] else "" )
  print( f"dfx generate: the token steps began at cycles {shown_starts}", file=sys.stderr )
  if probe.wave is not None:
    n = probe.vcd.cycles if probe.vcd is not None else 0
    where( "wave", shown( probe.wave ), f"{n:,} cycles" )
  if probe.trace is not None and args.trace != "-":
    where( "trace", shown( args.trace ), f"{probe.lines:,} lines" )


def _probe_record( probe, host, args ):
  if probe is None:
    return None
  lo, hi = probe.window
  return { "window": [ lo, hi ], "run_cycles": host.backend.cycle,
           "step_start_cycles": host.backend.step_starts,
           "wave": probe.wave, "wave_cycles": probe.vcd.cycles if probe.vcd is not None else 0,
           "trace": None if args.trace == "-" else args.trace, "trace_lines": probe.lines }


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
  from ..gpt2.decoding import Sampler, greedy_token
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


# -- compiled images ---------------------------------------------------------------------

def _use_image( args, cfg, n_tokens ):
  """The compiled model of --image, checked against --model, --cores/--set
  and the generation's length."""
  from ..compiler.build import load_compiled
  compiled = load_compiled( args.image )
  have, want = compiled.gpt.to_hf_dict(), cfg.to_hf_dict()
  if have != want:
    # the sizes, and any other field that differs (e.g. only tie_word_embeddings)
    shown = [ "n_layer", "n_embd", "vocab_size" ]
    shown += [ k for k in ( "head_dim", "layer_norm_epsilon", "tie_word_embeddings" )
               if have.get( k ) != want.get( k ) ]     # head_dim: only a DFX variant's
    raise UsageError( f"--image {args.image} holds model {compiled.gpt.name!r} ("
                      + ", ".join( f"{k}={have.get( k )!r}" for k in shown )
                      + f"), not --model {args.model}" )
  # The image holds its DFXConfig; --profile, --set and --cores may restate
  # it (checked: every field must agree), never change it, as its program
  # and layout were planned for that config and its cycles come from it.
  if args.profile or args.set or args.cores is not None:
    want = dfx_config( args ).to_dict()
    have = compiled.dfx.to_dict()
    diff = [ f"{k}={have[ k ]}" for k in want if want[ k ] != have.get( k ) ]
    if diff:
      raise UsageError( f"--image {args.image} was compiled for {', '.join( diff )}; drop "
                        f"--profile/--cores/--set or compile again with --save-image" )
  limit = compiled.layout["max_tokens"]
  if n_tokens > limit:
    raise UsageError( f"--image {args.image} was compiled for at most {limit} tokens; "
                      f"this generation needs {n_tokens}" )
  return compiled


def _compile( args, cfg, dfx, n_tokens, progress ):
  from ..compiler.build import compile_model, plan
  from ..compiler.limits import CompileError
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
  weights = common.load_weights( args.model, cfg, args.seed )
  progress.status( f"compiling {cfg.name} for {dfx.cores} core(s) ...", force=True )
  compiled = compile_model( weights.to_fp16(), dfx, dfx.cores, max_tokens=max_tokens )
  if args.save_image:
    progress.status( f"writing {shown( args.save_image )} ...", force=True )
    compiled.save( args.save_image )
  return compiled


def _announce_generate( args, cfg, dfx, n_tokens ):
  """The estimate of a generation, before any loading (`bounds.announce`:
  refused past its budget)."""
  from ..bounds import announce
  from ..compiler.run_estimate import CORE_CYCLES_PER_CPU_S, level_seconds
  if args.level in CORE_CYCLES_PER_CPU_S or args.level == "func":
    steps = max( 1, n_tokens - 1 )
    announce( "dfx generate", level_seconds( cfg, dfx, dfx.cores, steps, args.level ),
              f"{steps} steps at {args.level} on {dfx.cores} core(s)", not args.json )


def _announce_verilator( args, dfx ):
  """One line on stderr (not with --json) before a Verilator build: the
  minutes it may take, on a terminal or not (a notice, as `bounds.announce`'s
  estimate, not progress).  Whether the model is in the cache is known only
  once it is translated, so the line says both cases."""
  from ..bounds import duration, verilog_cost
  from ..hdl.verilated_cache import cache_dir
  whole = args.level in ( "verilog", "kernel" )
  if args.json or not ( whole or "verilog" in ( args.unit_levels or {} ).values() ):
    return
  where = cache_dir()
  skipped = f"skipped when the model is already in {shown( str( where ) )}" if where is not None \
    else "every run: DFX_VL_CACHE=0 turns the model cache off"
  print( f"dfx generate: building the {args.level} appliance as a Verilator model first: pymtl3 "
         f"translates {'the core' if whole else 'its verilog units'} "
         f"(~{duration( verilog_cost( dfx )[0] )} for the "
         f"whole core at d={dfx.d}, l={dfx.l}), then Verilator and the C++ compiler build it "
         f"(minutes; {skipped})", file=sys.stderr, flush=True )


def run( args ):
  from ..levels import host_for
  from ..gpt2.tokenizer import load_tokenizer

  if args.unit_levels and args.level == "func":
    raise UsageError( "--unit-levels needs a stream level (--level fl, cl, rtl or verilog), "
                      "not func" )
  if args.image == "":
    raise UsageError( "--image: the path is empty" )
  if args.xclbin is not None and args.level != "fpga":
    raise UsageError( "--xclbin needs --level fpga" )
  if args.level == "fpga":
    from ..kernel.xrt_runtime import require_xrt
    if args.unit_levels:
      raise UsageError( "--unit-levels needs a simulated stream level, not fpga" )
    # the command line first: it is wrong on any machine, XRT or not
    if args.xclbin is None:
      raise UsageError( "--level fpga needs --xclbin FILE (the kernel `dfx fpga` builds)" )
    require_xrt()                       # before any loading: one line without XRT
    with open( args.xclbin, "rb" ):     # a missing or unreadable xclbin: one line now
      pass
  # Every check that needs no weights runs before a (possibly 6 GB) load.
  cfg = model_config( args.model )
  tok = load_tokenizer( model_dir( args.model ), cfg.vocab_size )
  ids = _prompt_ids( args, tok, cfg.vocab_size )
  check_context( len( ids ), args.new_tokens, cfg )     # --new-tokens, and a text or ids prompt
  _resolve_seed( args )
  choose, stop = _chooser( args, tok )
  probe = _probe( args )
  n_tokens = len( ids ) + args.new_tokens
  progress = common.Progress( "dfx generate", not args.json )
  t0 = time.perf_counter()
  if args.image is not None:
    progress.status( f"reading {shown( args.image )} ...", force=True )
    compiled = _use_image( args, cfg, n_tokens )
    _announce_generate( args, cfg, compiled.dfx, n_tokens )
  else:
    compiled = _compile( args, cfg, dfx_config( args ), n_tokens, progress )
  compile_s = time.perf_counter() - t0
  dfx = compiled.dfx
  if args.level == "fpga":
    progress.status( f"loading {compiled.cores} U280 card(s) ...", force=True )
  elif args.level != "func":
    _announce_verilator( args, dfx )
    progress.status( f"building the {args.level} appliance ...", force=True )
  cards = dict( xclbin=args.xclbin ) if args.level == "fpga" else {}
  trace_file = None
  if probe is not None and args.trace is not None:
    trace_file = sys.stderr if args.trace == "-" else open( args.trace, "w" )
    probe.trace = trace_file
  try:
    host = host_for( compiled, args.level, levels=args.unit_levels, **cards,
                     **( { "probe": probe } if probe is not None else {} ) )
  except BaseException:
    if trace_file not in ( None, sys.stderr ):
      trace_file.close()
    raise
  progress.clear()
  try:
    _generate( args, host, compiled, ids, tok, choose, stop, progress, compile_s )
  finally:
    # a wave of a run that failed or was stopped is kept: it shows how
    host.close()
    if trace_file not in ( None, sys.stderr ):
      trace_file.close()
  _report_probe( probe, host, args )


def _generate( args, host, compiled, ids, tok, choose, stop, progress, compile_s ):
  import json
  from ..gpt2.tokenizer import StreamDecoder
  dfx = compiled.dfx
  probe = getattr( host.backend, "probe", None )

  tokens = []
  stream = None if args.json else StreamDecoder( tok )
  quiet_stream = not common.stdout_is_tty()
  t_gen = [ None ]

  def on_step( pos ):
    if pos < len( ids ):
      progress.count( "prompt", pos, len( ids ) )
    elif quiet_stream and t_gen[0] is not None:
      done = len( tokens )
      rate = done / max( 1e-9, time.perf_counter() - t_gen[0] )
      progress.count( "token", done + 1, args.new_tokens, note=f"{rate:.2f} tokens/s" )

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
    from ..compiler import stats as S
    steps = host.step_seconds
    n_gen = max( 1, len( steps ) - len( ids ) )
    rec = {
      "model": args.model, "level": args.level, "unit_levels": args.unit_levels or {},
      "cores": compiled.cores, "seed": args.seed, "profile": args.profile, "set": args.set,
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
    if probe is not None:
      rec["debug"] = _probe_record( probe, host, args )
    rec.update( timing( host, dfx ) )
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
  t = timing( host, dfx )
  if t:
    c = t["cycles"]
    share = ", ".join( f"{k} {100 * v / max( 1, c['total'] ):.0f}%"
                       for k, v in sorted( ( c["per_op_class"] or {} ).items(),
                                           key=lambda kv: -kv[1] )
                       if v )
    # the kernel's registers count a step's cycles, not what each instruction took
    share = share or "no per-op-class attribution at this level"
    print( f"[{args.level}: {c['total']:,} cycles = {t['ms_at_clock']['total']:.3f} ms at "
           f"{dfx.clock_mhz} MHz over {len( c['per_step'] )} steps; {share}]", file=sys.stderr )


def timing( host, dfx ):
  """The cycles of a timed level (CL, RTL, Verilator) and their time at the
  kernel clock; {} for the untimed levels (func, fl)."""
  from ..levels import TIMED_LEVELS
  if host.level not in TIMED_LEVELS:
    return {}
  r = host.results()
  ms = dfx.ms
  cycles = dict( total=r["cycles"], per_step=r["step_cycles"], per_stage=r["stage_cycles"],
                 # None where no class has a cycle: the kernel's cards count cycles only
                 per_op_class=r["class_cycles"] if any( r["class_cycles"].values() ) else None,
                 unit_busy=r["unit_busy"] )
  return dict( cycles=cycles,
               ms_at_clock=dict( total=ms( r["cycles"] ),
                                 per_step=[ ms( c ) for c in r["step_cycles"] ],
                                 per_stage={ k: ms( v ) for k, v in r["stage_cycles"].items() } ) )
