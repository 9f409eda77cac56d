"""Per-layer instruction mix of the compiled program, and syncs per layer.

  python reports/instruction_mix.py --model gpt2-medium --cores 4

Prints, for one generation step at a given position, a markdown table of
instructions per decoder layer by unit and by op class, and the ring
synchronisations per layer (the paper's four).
"""

import argparse
from collections import Counter

from pymtl_dfx.compiler.layout import plan_layout
from pymtl_dfx.compiler.emit import StepEmitter
from pymtl_dfx.config import DFXConfig, gpt2_preset
from pymtl_dfx.isa import Kind, op_of


def main():
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--model", default="gpt2-medium" )
  ap.add_argument( "--cores", type=int, default=4 )
  ap.add_argument( "--pos", type=int, default=63, help="token position (attention length - 1)" )
  args = ap.parse_args()
  gpt = gpt2_preset( args.model )
  lay = plan_layout( gpt, DFXConfig( cores=args.cores ), args.cores )
  prog, classes = StepEmitter( lay, gpt ).step( 0, 0, args.pos, want_logits=True )
  by_op, by_class = Counter(), Counter()
  for inst, cls in zip( prog, classes ):
    by_op[ op_of( inst ).mnemonic ] += 1
    by_class[ cls ] += 1
  n = gpt.n_layer
  print( f"## {args.model} on {args.cores} cores, position {args.pos}: "
         f"{len( prog )} instructions per step, core 0\n" )
  print( "| opcode | per step | per layer |\n|---|---|---|" )
  for op, k in sorted( by_op.items(), key=lambda kv: -kv[1] ):
    print( f"| {op} | {k} | {k / n:.2f} |" )
  print( "\n| op class | per step | per layer |\n|---|---|---|" )
  for cls, k in sorted( by_class.items(), key=lambda kv: -kv[1] ):
    print( f"| {cls} | {k} | {k / n:.2f} |" )
  syncs = sum( 1 for i in prog if int( i.hdr.kind ) == Kind.ROUTER )
  print( f"\nring synchronisations per decoder layer: {syncs / n:g}" )


if __name__ == "__main__":
  main()
