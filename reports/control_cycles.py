"""Issue and done cycles of the control unit's isolated scoreboard cases.

  python reports/control_cycles.py            # FL and CL (fast)
  python reports/control_cycles.py --rtl      # also RTL, checked equal to CL

Runs tests/units/control's cases (every unit a fixed latency of
CASE_LATENCY cycles, always ready) and prints a markdown table for
docs/control.md: per case, the cycle each instruction issued and answered
done, at FL (one at a time) and at CL/RTL (scheduler and scoreboard).
"""

import argparse
import os
import pathlib
import sys

REPO = pathlib.Path( __file__ ).resolve().parent.parent
sys.path.insert( 0, str( REPO / "tests" / "units" / "control" ) )

from control_harness import CASE_LATENCY, CASES, run_case  # noqa: E402


def stamps( w ):
  return ", ".join( f"{i}/{d}" for i, d in zip( w.issue_cycle, w.done_cycle ) )


def main():
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--rtl", action="store_true", help="also simulate the RTL" )
  args = ap.parse_args()
  build = REPO / "build" / "reports"
  build.mkdir( parents=True, exist_ok=True )
  os.chdir( build )
  print( f"Unit latency {CASE_LATENCY} cycles; each cell lists issue/done cycles per "
         "instruction; the last column is the cycle of the last done token.\n" )
  print( "| case | program | FL issue/done | CL = RTL issue/done | FL end | CL end |" )
  print( "|---|---|---|---|---|---|" )
  for name, what, text in CASES:
    fl, cl = run_case( name, "fl" ), run_case( name, "cl" )
    if args.rtl:
      rtl = run_case( name, "rtl" )
      assert ( rtl.issue_cycle, rtl.done_cycle ) == ( cl.issue_cycle, cl.done_cycle ), name
    prog = "; ".join( text.splitlines() )
    print( f"| {name}: {what} | `{prog}` | {stamps( fl )} | {stamps( cl )} | "
           f"{max( fl.done_cycle )} | {max( cl.done_cycle )} |" )


if __name__ == "__main__":
  main()
