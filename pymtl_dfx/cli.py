"""The `dfx` command line.

  dfx generate     GPT-2 text generation on the modelled appliance
  dfx demo         what the model can do today, in about a minute
  dfx numerics     the special functions' measured error table
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


def _demo_gpt2( seed, n_new ):
  from .appliance.host import Host
  from .compiler import stats as S
  from .compiler.build import compile_model
  from .config import DFXConfig, gpt2_preset
  from .gpt2 import DFXForward, ReferenceModel, generate, random_weights
  cfg = gpt2_preset( "tiny" )
  w = random_weights( cfg, seed )
  prompt = [ 1, 5, 9, 17, 3 ]
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
    print( f"    FL appliance, {cores} core(s)  {got}  "
           f"{'same tokens as DFX numerics' if got == ref16 else 'TOKENS DIFFER'}; {tot['instructions']} instructions, "
           f"{tot['ring_bytes']} ring bytes, {dt:.1f} s" )


def cmd_demo( args ):
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
  print( "\n3. GPT-2 generation: FP32, DFX numerics, and the FL appliance:" )
  _demo_gpt2( args.seed, args.new_tokens )


def _load_model( spec, seed ):
  """(weights, tokenizer) from a checkpoint directory or a preset name."""
  from .config import GPT2_PRESETS, gpt2_preset
  from .gpt2 import load_checkpoint, random_weights
  from .gpt2.tokenizer import load_tokenizer
  if os.path.isdir( spec ):
    w = load_checkpoint( spec )
    return w, load_tokenizer( spec, w.config.vocab_size )
  if spec in GPT2_PRESETS:
    w = random_weights( gpt2_preset( spec ), seed )
    return w, load_tokenizer( None, w.config.vocab_size )
  raise SystemExit( f"dfx generate: --model {spec!r} is neither a checkpoint directory nor a "
                    f"preset ({', '.join( GPT2_PRESETS )})" )


def _prompt_ids( args, tok, vocab ):
  if args.prompt_ids is not None:
    try:
      ids = [ int( x ) for x in args.prompt_ids.split( "," ) if x.strip() ]
    except ValueError:
      raise SystemExit( f"dfx generate: --prompt-ids {args.prompt_ids!r} must be "
                        f"comma-separated integers" ) from None
  else:
    try:
      ids = tok.encode( args.prompt )
    except ValueError as e:
      raise SystemExit( f"dfx generate: {e}" ) from None
  bad = [ i for i in ids if not 0 <= i < vocab ]
  if not ids or bad:
    raise SystemExit( f"dfx generate: prompt ids must be 1 or more ids in [0, {vocab})"
                      + ( f"; out of range: {bad[:8]}" if bad else "" ) )
  return ids


def cmd_generate( args ):
  import json
  from .appliance.host import Host
  from .compiler import stats as S
  from .compiler.build import compile_model
  from .config import ConfigError, DFXConfig

  if args.cores < 1:
    raise SystemExit( f"dfx generate: --cores {args.cores} must be at least 1" )
  if args.new_tokens < 1:
    raise SystemExit( f"dfx generate: --new-tokens {args.new_tokens} must be at least 1" )
  weights, tok = _load_model( args.model, args.seed )
  ids = _prompt_ids( args, tok, weights.config.vocab_size )
  try:
    dfx = DFXConfig( cores=args.cores )
    t0 = time.perf_counter()
    compiled = compile_model( weights.to_fp16(), dfx, args.cores,
                              max_tokens=len( ids ) + args.new_tokens )
    compile_s = time.perf_counter() - t0
  except ( ConfigError, ValueError ) as e:
    raise SystemExit( f"dfx generate: {e}" ) from None
  host = Host( compiled, args.level )
  on_token = None
  if not args.json:
    print( tok.decode( ids ), end="", flush=True )
    on_token = lambda t: print( tok.decode( [ t ] ), end="", flush=True )   # noqa: E731
  tokens = host.generate( ids, args.new_tokens, on_token )
  if args.json:
    steps = host.step_seconds
    print( json.dumps( {
      "model": args.model, "level": args.level, "cores": args.cores, "seed": args.seed,
      "prompt_ids": ids, "tokens": tokens, "text": tok.decode( tokens ),
      "steps": len( steps ), "sim_cycles": host.cycles,
      "seconds": { "compile": round( compile_s, 3 ), "total": round( sum( steps ), 3 ),
                   "per_generated_token": round( sum( steps[ len( ids ): ] ) /
                                                 max( 1, len( steps ) - len( ids ) ), 3 ) },
      "per_op_class": host.stats, "total": S.total( host.stats ),
      "padding": compiled.layout["padding"],
    }, indent=2 ) )
  else:
    print()


def main( argv=None ):
  ap = argparse.ArgumentParser( prog="dfx", description="pymtl_dfx: a multi-level model of DFX" )
  sub = ap.add_subparsers( dest="cmd", required=True )
  p = sub.add_parser( "generate", help="GPT-2 text generation on the modelled appliance" )
  p.add_argument( "--model", required=True, help="preset name or Hugging Face checkpoint directory" )
  g = p.add_mutually_exclusive_group( required=True )
  g.add_argument( "--prompt", help="prompt text" )
  g.add_argument( "--prompt-ids", help="prompt token ids, e.g. 1,2,3" )
  p.add_argument( "--new-tokens", type=int, default=16 )
  p.add_argument( "--cores", type=int, default=1, help="FPGAs on the ring (1, 2, 4 in DFX)" )
  p.add_argument( "--level", choices=( "func", "fl", "cl", "rtl", "verilog" ), default="func",
                  help="func: instruction-level functional appliance (fast); fl/cl/rtl: cores "
                       "built from the stream units at that level; verilog: one Verilator model "
                       "(docs/core.md)" )
  p.add_argument( "--seed", type=int, default=0, help="seed of a preset's random weights" )
  p.add_argument( "--json", action="store_true", help="print one JSON object" )
  p.set_defaults( fn=cmd_generate )
  p = sub.add_parser( "demo", help="run what the model can do today" )
  p.add_argument( "--pairs", type=int, default=2000, help="random operands per FP16 operator" )
  p.add_argument( "--seed", type=int, default=2 )
  p.add_argument( "--new-tokens", type=int, default=12 )
  p.set_defaults( fn=cmd_demo )
  p = sub.add_parser( "numerics", help="measured error of exp/recip/rsqrt/gelu" )
  p.set_defaults( fn=cmd_numerics )
  args = ap.parse_args( argv )
  args.fn( args )
  return 0


if __name__ == "__main__":
  sys.exit( main() )
