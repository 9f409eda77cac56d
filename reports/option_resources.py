"""What each design option past DFX (`config.DESIGN_FIELDS`) costs in FPGA
resources: the modules it changes, synthesised with the option off and on
(Yosys `synth_xilinx -family xcup`, no -flatten, `stat -top`), times their
instances in one core, at the paper's d=64, l=16.

  python reports/option_resources.py [--out build/option_resources] [--timeout S] [--field F]

Prints a markdown table per option (module, instances, off, on, the
difference times the instances) and the totals; the differences are what
`resources.estimate.DESIGN_SYNTHESISED` records (a test checks that every
option has a row there).  Options that are compiler-only change no module.
"""

import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname( os.path.dirname( os.path.abspath( __file__ ) ) )
sys.path.insert( 0, ROOT )
sys.path.insert( 0, os.path.dirname( os.path.abspath( __file__ ) ) )

from pymtl_dfx.config import DESIGN_FIELDS, DFXConfig  # noqa: E402
from pymtl_dfx.kernel.resources import cells_to_resources  # noqa: E402
from pymtl_dfx.resources.estimate import RESOURCES  # noqa: E402

from resources import synthesise  # noqa: E402


def _walkers( cfg, raster ):
  from pymtl_dfx.isa.fields import ELEMS_BITS, VECS_BITS
  from pymtl_dfx.lib.tile_walker import tile_walker_rtl
  from pymtl_dfx.units.regfile.RFStorageRTL import storage_types
  flat = storage_types( cfg )[1].nbits
  widths = [ ( "MPU sequencer's walker", ELEMS_BITS, 1 ), ( "DMA's walkers", VECS_BITS, 2 ),
             ( "register file manager's walker", max( ELEMS_BITS + 2, flat ), 1 ) ]
  return [ ( f"{what} ({n} bits)", k, lambda n=n: tile_walker_rtl( n, cfg.psum_entries, raster ) )
           for what, n, k in widths ]


def post_registers( cfg ):
  """{FF} the post-op bypass adds, counted, not synthesised: pymtl3 3.1's
  YosysTranslationPass leaves a stall pipe's bitstruct-list message tied
  to x (docstring of reports/unit_resources.py), so neither side of this
  option goes through Yosys.  The operators are the same on both sides
  (the adder, multiplier and GELU per lane); the stages are one register
  deeper (the `hold` stage: 48 instead of 47 at the paper's latencies) of
  the post-op message (l x 16 bits and the tile index) and its valid bit.
  The stage-entry multiplexers are not counted."""
  from pymtl_dfx.isa import ComputeOp as C, PostOp
  from pymtl_dfx.units.mpu.msgs import mk_mpu_types
  from pymtl_dfx.units.mpu.timing import post_latency
  on = cfg.replace( mpu_post_bypass=1 )
  stages = sum( post_latency( on, op, post ) for op, post in
                ( ( C.CONV1D, PostOp.NONE ), ( C.MASKEDMM, PostOp.NONE ), ( C.MM, PostOp.GELU ),
                  ( C.MM, PostOp.NONE ) ) )
  width = mk_mpu_types( cfg.d, cfg.l, cfg.psum_entries )["Post"].nbits + 1
  return dict( FF=( stages - cfg.mpu_post_latency ) * width,
               how=f"{stages} register stages instead of {cfg.mpu_post_latency}, "
                   f"{width} bits each (counted: not synthesisable by pymtl3's Yosys backend)" )


def _dma_queue( cfg ):
  """The FIFO of DMA instructions in front of the DMA's control (none when
  off: the control unit's issue port meets the DMA's)."""
  from pymtl_dfx.lib.fifo import FifoRTL
  from pymtl_dfx.units.control.msgs import InstMsg
  return [ ( f"DMA instruction queue ({cfg.dma_inst_queue} x {InstMsg.nbits} bits)", 1,
             lambda: FifoRTL( InstMsg, cfg.dma_inst_queue ) ) ]


def _accumulator( cfg, partials ):
  if partials:
    from pymtl_dfx.units.vpu.VPUAccumPartialsRTL import VPUAccumPartialsRTL
    return [ ( f"VPU accumulator, {cfg.reduce_partials} partials (VPUAccumPartialsRTL)", 1,
               lambda: VPUAccumPartialsRTL( cfg.vpu_accum_latency, cfg.reduce_partials ) ) ]
  from pymtl_dfx.units.vpu.VPUAccumRTL import VPUAccumRTL
  return [ ( "VPU accumulator (VPUAccumRTL)", 1, lambda: VPUAccumRTL( cfg.vpu_accum_latency ) ) ]


def _max_tree( cfg, on ):
  """The VPU's control (the kind register and its issue rule) on both
  sides; with the option on also the comparator accumulator, and the max
  reductions' own tree pipe counted, not synthesised: as a top (or behind
  plain ports) pymtl3 3.1's Yosys backend drives its bitstruct stages
  twice, one of them with x, and Yosys keeps a fraction of them; it is
  its stages of the tree message and a valid bit, flip-flops with a clock
  enable.  The datapath's routing and output multiplexers are not
  synthesised (its stall pipes carry bitstruct-list messages); the
  comparator tree itself is the same on both sides."""
  from pymtl_dfx.units.vpu.msgs import VPUTreeMsg
  from pymtl_dfx.units.vpu.VPUCtrlRTL import VPUCtrlRTL
  from pymtl_dfx.units.vpu.VPUMaxAccumRTL import VPUMaxAccumRTL
  mods = [ ( "VPU control (VPUCtrlRTL)", 1, lambda: VPUCtrlRTL( cfg.d, cfg ) ) ]
  if on:
    n = cfg.vpu_max_tree_latency
    mods += [ ( f"VPU max tree pipe, {n} stages of {VPUTreeMsg.nbits} + 1 bits (StallPipeRTL)",
                1, dict( FF=n * ( VPUTreeMsg.nbits + 1 ) ) ),
              ( "VPU max accumulator (VPUMaxAccumRTL)", 1,
                lambda: VPUMaxAccumRTL( cfg.vpu_max_accum_latency ) ) ]
  return mods


def _gelu( cfg, on ):
  """The VPU's control (its issue rule; with the option the GELU in-flight
  counter) on both sides; with the option on also the d GELU lanes
  (`FP16GeluComb`, the MPU post-op's table: synthesised once, times d) and
  their pipe counted, not synthesised, as `_max_tree`'s (pymtl3's Yosys
  backend and a bitstruct-list message): `vpu_gelu_latency` stages of the
  d-element vector and a valid bit, flip-flops with a clock enable.  The
  lanes' +0 masks and the output multiplexer's third input are not
  counted."""
  from pymtl_dfx.units.fpu.FP16GeluComb import FP16GeluComb
  from pymtl_dfx.units.fpu.msgs import FP16
  from pymtl_dfx.units.vpu.VPUCtrlRTL import VPUCtrlRTL
  mods = [ ( "VPU control (VPUCtrlRTL)", 1, lambda: VPUCtrlRTL( cfg.d, cfg ) ) ]
  if on:
    n, width = cfg.vpu_gelu_latency, cfg.d * FP16.nbits + 1
    mods += [ ( "VPU GELU lane (FP16GeluComb)", cfg.d, FP16GeluComb ),
              ( f"VPU GELU pipe, {n} stages of {width} bits (StallPipeRTL)", 1,
                dict( FF=n * width ) ) ]
  return mods


# option -> ( value on, modules(cfg, on?) -> [(label, instances, constructor or
# counted {resource: n})] ), or None
# for an option that changes the compiler only
CHANGED = {
  "mpu_raster_walk": ( 1, _walkers ),
  "reduce_partials": ( 8, _accumulator ),
  "vpu_max_tree": ( 1, _max_tree ),
  "vpu_gelu": ( 1, _gelu ),
  "dma_inst_queue": ( 8, lambda cfg, on: _dma_queue( cfg ) if on else [] ),
}
# option -> counted resources (`post_registers`), for an option whose modules
# Yosys cannot take
COUNTED = {
  "mpu_post_bypass": post_registers,
}


def synth( build, out, timeout ):
  t0 = time.time()
  try:
    _, cells = synthesise( build, out, flatten=False, timeout=timeout, cells=True )
  except subprocess.TimeoutExpired:
    return None, f"Yosys did not finish in {timeout} s"
  except subprocess.CalledProcessError as e:
    return None, f"Yosys failed: {( e.stderr or e.stdout or '' ).strip()[ -200: ]}"
  except Exception as e:     # the translation itself (pymtl3's Yosys backend)
    return None, f"not translated: {type( e ).__name__}: {str( e ).splitlines()[0][ :200 ]}"
  return cells_to_resources( cells ), f"{time.time() - t0:.0f} s"


def main( argv=None ):
  ap = argparse.ArgumentParser( description=__doc__.splitlines()[0] )
  ap.add_argument( "--out", default="build/option_resources" )
  ap.add_argument( "--timeout", type=float, default=900 )
  ap.add_argument( "--field", action="append", choices=DESIGN_FIELDS,
                   help="only this option (repeatable; default: every one)" )
  args = ap.parse_args( argv )
  cfg = DFXConfig()
  cols = " | ".join( RESOURCES )
  for field in args.field or DESIGN_FIELDS:
    if field in COUNTED:
      got = COUNTED[ field ]( cfg )
      print( f"\n## {field}\n\n" + ", ".join( f"{k} {v:+,}" for k, v in got.items() if k != "how" )
             + f": {got['how']}\n" )
      continue
    if field not in CHANGED:
      print( f"\n## {field}\n\nchanges the compiler only: no module\n" )
      continue
    value, modules = CHANGED[ field ]
    total = dict.fromkeys( RESOURCES, 0 )
    lines = [ f"\n## {field}={value}\n", f"| module | instances | side | {cols} | Yosys |",
              "|---|---|---|" + "---|" * len( RESOURCES ) + "---|" ]
    ok = True
    for side, on in ( ( "off", False ), ( "on", True ) ):
      for label, k, build in modules( cfg.replace( **{ field: value } ) if on else cfg, on ):
        out = os.path.join( args.out, field, side, label.split( " (" )[0].replace( " ", "_" ) )
        os.makedirs( out, exist_ok=True )
        # a module given as its resources is counted, not synthesised
        got, note = ( build, "counted" ) if isinstance( build, dict ) else \
                    synth( build, out, args.timeout )
        if got is None:
          ok = False
          lines.append( f"| {label} | {k} | {side} | " + " | ".join( "-" for _ in RESOURCES )
                        + f" | {note} |" )
          continue
        for r in RESOURCES:
          total[ r ] += ( k if on else -k ) * got.get( r, 0 )
        lines.append( f"| {label} | {k} | {side} | "
                      + " | ".join( f"{got.get( r, 0 ):,}" for r in RESOURCES ) + f" | {note} |" )
    lines.append( f"| **on - off, x instances** | | | "
                  + " | ".join( f"{total[ r ]:+,}" for r in RESOURCES )
                  + ( " | |" if ok else " | incomplete: a module was not synthesised |" ) )
    print( "\n".join( lines ), flush=True )


if __name__ == "__main__":
  main()
