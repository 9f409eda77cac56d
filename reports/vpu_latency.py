"""Per-opcode timing of the VPU engine, measured on its CL model.

Prints a markdown table: for d = 4, 8, 64, each VPU opcode's no-stall
latency (cycles from the command being taken to the first out message being
taken, for a one-chunk instruction) and its steady-state throughput in
chunks per cycle (from the last-message times of a 4- and a 12-chunk
instruction).  Run: python reports/vpu_latency.py
"""

import numpy as np

from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import ComputeOp as C, make
from pymtl_dfx.testing import run_stream_test
from pymtl_dfx.units.regfile.state import VectorRegisterFile
from pymtl_dfx.units.vpu.msgs import BINARY, VPUCmd, mk_fp16_vec
from pymtl_dfx.units.vpu.streams import out_messages, request_streams
from pymtl_dfx.units.vpu.VPUCL import VPUCL

DS = ( 4, 8, 64 )
# the sources' first valid cycle is stamped 2 by the sink's cycle counter
FIRST_CYCLE = 2


def last_and_first( d, op, chunks ):
  rf = VectorRegisterFile( 2 * chunks + 2, d )
  rf.mem[:] = np.float16( 1.5 )
  n = chunks * d
  inst = make( op, dst=0, src1=0, src2=chunks, len=n, bcast=0 ) if op in BINARY \
         else make( op, dst=0, src1=0, len=n )
  cmd, a, b = request_streams( inst, rf )
  Vec = mk_fp16_vec( d )
  r = run_stream_test( VPUCL( d ), level="cl",
                       sources={ "cmd": ( VPUCmd, cmd ), "a": ( Vec, a ), "b": ( Vec, b ) },
                       sinks={ "out": ( Vec, out_messages( inst, rf ) ) } )
  return r.arrivals["out"][0], r.arrivals["out"][-1]


def main():
  ops = C.group( "on_vpu", DFXConfig() )     # the default VPU's (gelu needs vpu_gelu)
  head = "| opcode | " + " | ".join( f"d={d} latency | d={d} chunks/cycle" for d in DS ) + " |"
  print( head )
  print( "|" + "---|" * ( 1 + 2 * len( DS ) ) )
  for op in ops:
    cells = []
    for d in DS:
      first, _ = last_and_first( d, op, 1 )
      _, t4 = last_and_first( d, op, 4 )
      _, t12 = last_and_first( d, op, 12 )
      cells += [ str( first - FIRST_CYCLE ), f"{8 / ( t12 - t4 ):.3g}" ]
    print( f"| {op.mnemonic} | " + " | ".join( cells ) + " |" )
  cfg = DFXConfig()
  print()
  print( f"Config: fp_add {cfg.fp_add_latency}, fp_mul {cfg.fp_mul_latency}, fp_max "
         f"{cfg.fp_max_latency}, recip {cfg.fp_recip_latency}, rsqrt {cfg.fp_rsqrt_latency}, "
         f"exp {cfg.fp_exp_latency}, inv_pow2 {cfg.fp_invpow2_latency}; element-wise pipe "
         f"{cfg.vpu_elementwise_latency}, tree tree_depth x {cfg.vpu_reduce_step_latency}, "
         f"accumulator {cfg.vpu_accum_latency} (+1 cycle for the command register)." )


if __name__ == "__main__":
  main()
