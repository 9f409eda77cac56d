"""Timing of the MPU engine per instruction kind, measured on its CL model
(which the tests hold cycle-equal to the RTL).

  python reports/mpu_latency.py

Prints a markdown table for (d, l) in {(4, 2), (8, 4), (64, 16)}: the
no-stall latency of a one-tile instruction (cycles from its weights being
taken to its output being taken), and for a matrix of 8 row chunks x 32
column tiles the cycles from the command to the last output and the tiles
per cycle that gives (peak 1), with the default 1,024-entry partial-sum
buffer and with a 16-entry one.  The gap to 1 tile per cycle is the
accumulator: a column's next chunk must wait for its previous sum, which
the zigzag order meets at every row-chunk turn, and a band narrower than
the adder's latency meets on every tile.  Then the same at d=64 with
`mpu_post_bypass=1`, where a tile passes only the post-op stages its
command uses.
"""

import numpy as np

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.testing.mpu import KINDS, random_matrix_inst, run_program
from pymtl_dfx.units.mpu.timing import post_latency

SHAPES = ( ( 4, 2 ), ( 8, 4 ), ( 64, 16 ) )
# the harness stamps the first cycle a source offers a message as 1, and
# the command takes the cycle before the first tile
HARNESS_CYCLES = 3


def timing( cfg, kind, rows, cols ):
  inst = random_matrix_inst( np.random.default_rng( 0 ), cfg, *kind, rows, cols )
  return run_program( "cl", {}, cfg, [ inst ] ).arrivals["out"]


def main():
  print( "| d, l | kind | one tile: latency | 8 x 32 tiles, psum 1024: cycles | tiles/cycle "
         "| 8 x 32 tiles, psum 16: cycles | tiles/cycle |" )
  print( "|---|---|---|---|---|---|---|" )
  for d, l in SHAPES:
    for kind in KINDS:
      one = timing( DFXConfig( d=d, l=l ), kind, d, l )[0] - HARNESS_CYCLES
      cells = [ str( one ) ]
      for psum in ( 1024, 16 ):
        last = timing( DFXConfig( d=d, l=l, psum_entries=psum ), kind, 8 * d, 32 * l )[-1]
        cells += [ str( last ), f"{8 * 32 / last:.2f}" ]
      print( f"| {d}, {l} | {kind[0].mnemonic}/{kind[1].mnemonic} | " + " | ".join( cells ) + " |",
             flush=True )
  cfg = DFXConfig()
  print( f"\nLatencies (DFXConfig): MFU lane {cfg.mfu_lane_latency} at d=64 "
         f"(fp_mul {cfg.fp_mul_latency} + tree_depth x fp_add {cfg.fp_add_latency}), "
         f"accumulator {cfg.fp_add_latency}, post-ops {cfg.mpu_post_latency} "
         f"(add + mul + GELU {cfg.fp_gelu_latency})." )
  bypass()


def bypass():
  """With `mpu_post_bypass` a tile passes only the post-op stages its
  command uses (`units.mpu.timing.post_latency`): the same measures at
  d=64 per kind, and the depth the config gives."""
  cfg = DFXConfig( mpu_post_bypass=1 )
  print( "\nWith mpu_post_bypass=1, at d=64, l=16:\n" )
  print( "| kind | post-op depth | one tile: latency | 8 x 32 tiles, psum 1024: cycles | tiles/cycle |" )
  print( "|---|---|---|---|---|" )
  for kind in KINDS:
    one = timing( cfg, kind, 64, 16 )[0] - HARNESS_CYCLES
    last = timing( cfg, kind, 8 * 64, 32 * 16 )[-1]
    print( f"| {kind[0].mnemonic}/{kind[1].mnemonic} | {post_latency( cfg, *kind )} | {one} "
           f"| {last} | {8 * 32 / last:.2f} |", flush=True )


if __name__ == "__main__":
  main()
