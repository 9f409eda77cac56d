"""One full-size token step at CL against `pymtl_dfx.perf` (issue #12).

  python sim/check_perf_full_size.py [--model gpt2-medium] [--cores 4] [--pos 79]
                                     [--prompt-step] [--set key=value ...]

Builds the CL appliance of the model planned for the paper's core (or the
`--set` config) with its memories zeroed (a step's cycles do not depend on
the values; loading 345M weights word by word through the host ports would
take hours), runs the one step at position `--pos` (with the logits unless
`--prompt-step`), times the same step in perf, and compares the step's
cycles, its cycles per op class and every unit's busy cycles.  Prints both
results, the wall time of each and CL's cycles per second; exits 1 if they
differ.  Too slow for CI (a 345M step on 4 cores is ~20-30 min at CL); the
test suite asserts perf == CL on the small models.
"""

import argparse
import sys
import time

from pymtl_dfx import perf
from pymtl_dfx.appliance.host import Host
from pymtl_dfx.config import DFXConfig, gpt2_preset
from pymtl_dfx.perf.appliance import ApplianceTiming
from pymtl_dfx.perf.steps import time_step
from pymtl_dfx.testing.perf_check import step_rows


def main():
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--model", default="gpt2-medium" )
  ap.add_argument( "--cores", type=int, default=4 )
  ap.add_argument( "--pos", type=int, default=79 )
  ap.add_argument( "--prompt-step", action="store_true", help="a step without the logits" )
  ap.add_argument( "--set", action="append", default=[], metavar="KEY=VALUE" )
  args = ap.parse_args()
  gpt = gpt2_preset( args.model )
  dfx = DFXConfig().with_overrides( args.set + [ f"cores={args.cores}" ] )
  model = perf.planned( gpt, dfx, args.cores )
  token, want = args.pos % gpt.vocab_size, not args.prompt_step
  what = f"{gpt.name} on {args.cores} core(s), position {args.pos}, {'logits' if want else 'prompt'} step"

  t0 = time.perf_counter()
  p = time_step( model, ApplianceTiming( dfx, args.cores ), model.emitter(), token, args.pos, want )
  t_perf = time.perf_counter() - t0
  print( f"{what}\nperf: {p['cycles']:,} cycles in {t_perf:.1f} s ({p['folded']} layer bodies "
         f"folded, {p['skipped']:,} cycles not simulated)", flush=True )

  t0 = time.perf_counter()
  host = Host( model, "cl" )
  host.seek( args.pos )
  t_build = time.perf_counter() - t0
  t0 = time.perf_counter()
  host.step( token, want )
  t_cl = time.perf_counter() - t0
  cl = host.results()
  sim_cycles = cl["cycles"] - dfx.host_step_cycles
  print( f"CL:   {cl['cycles']:,} cycles in {t_cl:.0f} s (build {t_build:.1f} s; "
         f"{sim_cycles / t_cl:.0f} simulated cycles/s)" )

  same = True
  for name, a, b in step_rows( p, cl ):
    same &= a == b
    print( f"  {name:<22} perf {a:>10,}  CL {b:>10,}  {'' if a == b else 'DIFFERENT'}" )
  print( "perf == CL" if same else "perf != CL" )
  sys.exit( 0 if same else 1 )


if __name__ == "__main__":
  main()
