"""Cycles one instruction adds when the register file manager feeds the CL
engines (RFMWithEngines at cl, cycle-exact with the RTL), paper sizes.

  python reports/regfile_cycles.py

Each row runs a program of the given instructions between the register
file's preload (rf_wr) and read-back (rf_rd), all sources and sinks without
delays, weights on mpu_w one tile per cycle; "cycles" is the program's
total minus that of the empty program, i.e. from the first instruction
offered to the last done.  "messages" is what the busiest manager port
carries (VPU: the a entries; MPU: the x chunks, one per weight tile).  Two
matrix instructions back to back show the double buffering: the second
one's x is collected while the first streams.
"""

import pathlib
import sys

sys.path.insert( 0, str( pathlib.Path( __file__ ).resolve().parent.parent ) )

from pymtl_dfx.lib.arith import ceil_div  # noqa: E402
from pymtl_dfx.config import DFXConfig  # noqa: E402
from pymtl_dfx.isa import ComputeOp as C, make  # noqa: E402
from pymtl_dfx.testing.regfile_harness import build_program, random_register_file, run_rfm  # noqa: E402
from pymtl_dfx.testing.rfm_with_engines import RFMWithEngines  # noqa: E402

CFG = DFXConfig( vreg_entries=256, mreg_entries=128 )


def cycles( vpu=(), mpu=() ):
  prog = build_program( CFG, random_register_file( CFG, 1 ), vpu, mpu ).with_engines()
  return run_rfm( RFMWithEngines( "cl", CFG ), prog, "cl" ).cycles


def table():
  d, l = CFG.d, CFG.l
  base = cycles()
  lines = [ f"d={d}, l={l}, psum_entries={CFG.psum_entries}; empty program: {base} cycles", "",
            "| instruction | messages | cycles | cycles - messages |",
            "|---|---:|---:|---:|" ]
  for op in ( C.ADD, C.EXP, C.ACCUM ):
    for n in ( 64, 768, 3072 ):
      extra = dict( src2=100 ) if op == C.ADD else {}
      inst = make( op, dst=150, src1=0, len=n, **extra )
      c = cycles( vpu=[ inst ] ) - base
      m = ceil_div( n, d )
      lines.append( f"| {op.mnemonic} len={n} | {m} | {c} | {c - m} |" )
  for rows, cols in ( ( 768, 64 ), ( 768, 768 ), ( 3072, 768 ) ):
    one = make( C.MM, dst=100, src1=0, rows=rows, cols=cols )
    two = make( C.MM, dst=150, src1=50, rows=rows, cols=cols )
    m = ceil_div( rows, d ) * ceil_div( cols, l )
    c1 = cycles( mpu=[ one ] ) - base
    c2 = cycles( mpu=[ one, two ] ) - base
    lines.append( f"| mm rows={rows} cols={cols} | {m} | {c1} | {c1 - m} |" )
    lines.append( f"| 2 x mm rows={rows} cols={cols} | {2 * m} | {c2} | {c2 - 2 * m} |" )
  return "\n".join( lines )


if __name__ == "__main__":
  print( table() )
