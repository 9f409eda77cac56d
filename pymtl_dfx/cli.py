"""The `dfx` command line.

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
  from .testing.fp16_ops import random_pairs, run_fp16_op
  a, b = random_pairs( n, seed=11 )
  for op in ( "add", "mul" ):
    t0 = time.perf_counter()
    r = run_fp16_op( op, "rtl", {}, a, b )
    dt = time.perf_counter() - t0
    print( f"  FP16 {op:3s} RTL (PyMTL3 sim): {n} random pairs bit-exact with numerics, "
           f"{r.cycles} cycles, {r.cycles / dt:,.0f} cycles/s" )


def _demo_gpt2( seed, n_new ):
  from .config import gpt2_preset
  from .gpt2 import DFXForward, ReferenceModel, generate, random_weights
  cfg = gpt2_preset( "tiny" )
  w = random_weights( cfg, seed )
  prompt = [ 1, 5, 9, 17, 3 ]
  ref = generate( ReferenceModel( w ), prompt, n_new )
  dfx = generate( DFXForward( w.to_fp16() ), prompt, n_new )
  same = sum( 1 for x, y in zip( ref, dfx ) if x == y )
  print( f"  GPT-2 '{cfg.name}' ({cfg.n_layer} layers, {cfg.n_embd} wide, random weights, seed {seed})" )
  print( f"    prompt ids        {prompt}" )
  print( f"    FP32 reference    {ref}" )
  print( f"    DFX FP16 numerics {dfx}" )
  print( f"    {same}/{n_new} generated tokens agree" )


def cmd_demo( args ):
  print( "pymtl_dfx demo. End-to-end generation on the modelled appliance is not built yet"
         " (issue #3);\nthis runs what exists: the golden numerics, the FP16 operator RTL,"
         " and GPT-2 in DFX numerics.\n" )
  print( "1. Special functions, error over every finite FP16 input (vs float64):" )
  cmd_numerics( args )
  print( "\n2. FP16 operators as PyMTL3 RTL:" )
  old = os.getcwd()
  os.chdir( tempfile.mkdtemp( prefix="dfx-demo-" ) )
  try:
    _demo_fpu( args.pairs )
  finally:
    os.chdir( old )
  print( "\n3. GPT-2, FP32 reference vs DFX numerics (greedy):" )
  _demo_gpt2( args.seed, args.new_tokens )


def main( argv=None ):
  ap = argparse.ArgumentParser( prog="dfx", description="pymtl_dfx: a multi-level model of DFX" )
  sub = ap.add_subparsers( dest="cmd", required=True )
  p = sub.add_parser( "demo", help="run what the model can do today" )
  p.add_argument( "--pairs", type=int, default=5000, help="random FP16 pairs per operator" )
  p.add_argument( "--seed", type=int, default=0 )
  p.add_argument( "--new-tokens", type=int, default=16 )
  p.set_defaults( fn=cmd_demo )
  p = sub.add_parser( "numerics", help="measured error of exp/recip/rsqrt/gelu" )
  p.set_defaults( fn=cmd_numerics )
  args = ap.parse_args( argv )
  args.fn( args )
  return 0


if __name__ == "__main__":
  sys.exit( main() )
