"""FPGA resources of one DFX core (one card) from synthesised unit numbers.

`SYNTHESISED` is the one table of measured numbers the estimate uses.  Each
row is a Yosys cell count (Yosys, not Vivado: no cross-boundary optimisation,
no retiming, LUT counts an upper bound), measured by the command in its
`by` column; docs/resources.md reports the measurements and points here.
`estimate_resources(dfx)` is arithmetic over those rows:

- the MPU as l MFU lanes of d multipliers and a tree of d-1 adders, plus per
  output column the accumulator adder and the post-op adder, multiplier and
  GELU, plus an (l-1)-comparator max tree (as `reports/unit_resources.py`);
- the VPU as d lanes of add, mul, exp, recip, rsqrt and inv_pow2, a d-1
  adder tree and a d-1 comparator tree plus the accumulator's adder and
  comparator (d of each);
- the memories as RAMB36E2 blocks from their depth and width (the best of
  the block's simple-dual-port shapes); the vector register file as
  `vrf_banking.vrf_banks` maps it: one copy per (read port, write port)
  pair behind a live-value table, in URAM288 and lane-banked RAMB36E2
  (docs/resources.md, "The vector register file on the FPGA").

A row is "synthesised" when every unit in it was synthesised at exactly this
size (the row is the count times the measured unit), "extrapolated"
otherwise: an MFU lane at a d that was not synthesised (linear in d through
the two synthesised lanes, d=4 and d=64), and every memory (from its bits;
nothing of it was synthesised).  `LEFT_OUT` lists what is not estimated.
"""

import math

from ..config import DFXConfig
from .vrf_banking import vrf_banks

U280_SOURCE = "AMD DS963 / UG1314 Alveo U280 data sheet"
# The XCU280's programmable logic (AMD DS963 / UG1314 Alveo U280 data sheet).
U280 = dict( LUT=1_303_680, FF=2_607_360, DSP=9_024, BRAM36=2_016, URAM=960 )
RESOURCES = tuple( U280 )

_UNITS = "python reports/unit_resources.py"
# Measured by `python reports/unit_resources.py`: Yosys 0.23 `synth_xilinx
# -family xcup` module by module (no -flatten, totals from `stat -top`), cell
# classes DSP48E2, LUT1-6 and FD* flip-flops; no block RAM in any of them.
# The exp, recip, rsqrt and GELU rows predate the special-function tables'
# ROM form (docs/resources.md: the flattened re-measurement has 21-61 % fewer
# LUTs), so they are an upper bound for today's RTL.
SYNTHESISED = {
  # name:            ( DSP,    LUT,    FF, by )
  "MFU lane, d=4":   (   4,  2_407,   476, _UNITS ),
  "MFU lane, d=64":  (  64, 42_772, 1_224, _UNITS ),
  "FP16 add":        (   0,    420,   187, _UNITS ),
  "FP16 mul":        (   1,    255,   102, _UNITS ),
  "FP16 max":        (   0,     54,    17, _UNITS ),
  "FP16 exp":        (   1,  1_194,   136, _UNITS ),
  "FP16 recip":      (   0,    529,    68, _UNITS ),
  "FP16 rsqrt":      (   0,    974,    51, _UNITS ),
  "FP16 gelu":       (   1,  2_067,   510, _UNITS ),
  "FP16 invpow2":    (   0,     10,    17, _UNITS ),
}

_OPTIONS = "python reports/option_resources.py"
# What a design option (`config.DESIGN_FIELDS`) adds to one core when on:
# the modules it changes synthesised off and on (Yosys 0.23 as above),
# the difference times their instances at the paper's d=64, l=16, by
# `reports/option_resources.py`; "counted" where pymtl3's Yosys backend
# cannot take the modules (the stall pipes' bitstruct messages).  An
# option that changes the compiler only adds nothing and has no row.
DESIGN_SYNTHESISED = {
  # field: ( {resource: difference}, source, how )
  "mpu_raster_walk": ( dict( LUT=-232, FF=80 ), "synthesised",
                       "4 tile walkers (MPU, DMA x 2, register file manager) raster - zigzag" ),
  "mpu_post_bypass": ( dict( FF=276 ), "counted",
                       "one more post-op register stage (48 instead of 47) of 276 bits; the "
                       "stage-entry multiplexers not counted" ),
  "reduce_partials": ( dict( LUT=389, FF=141 ), "synthesised",
                       "the VPU's accumulator with 8 interleaved partials - with one running "
                       "value (measured at reduce_partials=8, the profile streaming's)" ),
  "vpu_max_tree": ( dict( LUT=73, FF=156 ), "synthesised",
                    "the VPU's comparator accumulator (VPUMaxAccumRTL) and its control with "
                    "the kind register - the control without; the max reductions' own tree "
                    "pipe counted (6 stages of 20 bits at d=64)" ),
  "vpu_gelu": ( dict( LUT=112264, FF=30755, DSP=64 ), "synthesised",
                "the VPU's 64 GELU lanes (FP16GeluComb) and its control with the GELU "
                "counter - the control without; the GELU pipe counted (30 stages of 1,025 "
                "bits at d=64)" ),
  "dma_inst_queue": ( dict( LUT=406, FF=1034 ), "synthesised",
                      "the DMA's instruction queue (lib.fifo.FifoRTL of 8 instructions of 128 "
                      "bits, the profile streaming-wide's) - none" ),
}

# the design options that change the compiler only (no module, no row;
# proj_row_split, ln_fold and ln2_fold also the numbers, through the
# compiled weights and program)
COMPILER_ONLY_OPTIONS = ( "attn_head_pipeline", "proj_row_split", "ln_fold", "ln2_fold",
                          "weight_read_ahead" )

# RAMB36E2 simple-dual-port shapes (depth, width in bits), UG573.
RAMB36_SHAPES = ( ( 32768, 1 ), ( 16384, 2 ), ( 8192, 4 ), ( 4096, 9 ), ( 2048, 18 ),
                  ( 1024, 36 ), ( 512, 72 ) )
FP16_BITS = 16

LEFT_OUT = (
  "the control unit, the register file manager's control and the live-value table's read "
  "multiplexers (its flip-flops are counted), the DMA, the router, and every pipeline "
  "register between units",
  "the HBM and DDR controllers, the AXI switch, the 100G MACs and network stack, and the "
  "Alveo shell (PCIe, XDMA, card management), which takes its own share of the U280",
  "the instruction buffer and scoreboard (a few entries of registers)",
  "URAM: only the vector register file's copies; every other memory is in block RAM",
  "the clock: Yosys does not time paths, so nothing says whether a point closes timing at its "
  "clock_mhz",
  "the number of cards: every figure is per card (one core per U280)",
)


def unit( name ):
  """A synthesised row as {DSP, LUT, FF}."""
  dsp, lut, ff, _ = SYNTHESISED[ name ]
  return dict( DSP=dsp, LUT=lut, FF=ff )


def mfu_lane( d ):
  """(resources of one MFU lane of d, synthesised?): a synthesised lane, or
  linear in d through the lanes synthesised at d=4 and d=64."""
  name = f"MFU lane, d={d}"
  if name in SYNTHESISED:
    return unit( name ), True
  lo, hi = unit( "MFU lane, d=4" ), unit( "MFU lane, d=64" )
  return { k: lo[k] + ( hi[k] - lo[k] ) * ( d - 4 ) / 60 for k in lo }, False


def bram36( depth, width ):
  """RAMB36E2 blocks for one depth x width memory: the best shape."""
  return min( math.ceil( width / w ) * math.ceil( depth / n ) for n, w in RAMB36_SHAPES )


def _row( name, count, per, source, how, adders=0 ):
  """`adders`: FP16 adders in one of the `count` (Yosys puts them in
  fabric; Xilinx's floating-point IP on two DSPs each)."""
  r = dict( name=name, count=count, source=source, how=how, fp16_adders=count * adders )
  for k in RESOURCES:
    r[ k ] = round( count * per.get( k, 0 ) )
  return r


def estimate_resources( dfx ):
  """{rows, totals, budget, percent, within_budget, over, left_out} of one
  core at `dfx` (per card)."""
  d, l = dfx.d, dfx.l
  lane, lane_synth = mfu_lane( d )
  ops = lambda *names: { k: sum( unit( f"FP16 {n}" )[k] for n in names )   # noqa: E731
                         for k in ( "DSP", "LUT", "FF" ) }
  syn = "synthesised"
  rows = [
    _row( "MPU: MFU lanes", l, lane, syn if lane_synth else "extrapolated",
          f"{l} x MFU lane of d={d}" + ( "" if lane_synth else
                                         " (linear in d through the lanes synthesised at d=4, 64)" ),
          adders=d - 1 ),
    _row( "MPU: accumulator and post-op adders", 2 * l, ops( "add" ), syn, f"{2 * l} x FP16 add",
          adders=1 ),
    _row( "MPU: post-op multipliers", l, ops( "mul" ), syn, f"{l} x FP16 mul" ),
    _row( "MPU: GELU", l, ops( "gelu" ), syn, f"{l} x FP16 gelu" ),
    _row( "MPU: max tree", l - 1, ops( "max" ), syn, f"{l - 1} x FP16 max" ),
    _row( "VPU: lanes", d, ops( "add", "mul", "exp", "recip", "rsqrt", "invpow2" ), syn,
          f"{d} x (FP16 add, mul, exp, recip, rsqrt, invpow2)", adders=1 ),
    _row( "VPU: adder tree and accumulator", d, ops( "add" ), syn, f"{d} x FP16 add", adders=1 ),
    _row( "VPU: max tree and accumulator", d, ops( "max" ), syn, f"{d} x FP16 max" ),
  ]
  vrf = vrf_banks( dfx )
  rows.append( _row( "vector register file", 1, { k: vrf[k] for k in ( "BRAM36", "URAM", "FF" ) },
                     "extrapolated", vrf["how"] + " (not synthesised)" ) )
  mems = [
    ( "matrix-input buffer", 2, dfx.mreg_entries // 2, d * FP16_BITS,
      f"2 slots of {dfx.mreg_entries // 2} x {d * FP16_BITS} bits" ),
    ( "partial-sum buffer", 1, dfx.psum_entries, l * FP16_BITS,
      f"{dfx.psum_entries} x {l * FP16_BITS} bits" ),
    ( "weight FIFO", 1, dfx.weight_fifo_entries, d * l * FP16_BITS,
      f"{dfx.weight_fifo_entries} x {d * l * FP16_BITS} bits (one d x l tile a cycle)" ),
  ]
  for name, n, depth, width, how in mems:
    rows.append( _row( name, n, dict( BRAM36=bram36( max( depth, 1 ), width ) ), "extrapolated",
                       how + ", in RAMB36E2 from its bits (not synthesised)" ) )
  for field, ( diff, source, how ) in DESIGN_SYNTHESISED.items():
    if getattr( dfx, field ) != DFXConfig.__dataclass_fields__[ field ].default:
      rows.append( _row( f"design option: {field}", 1, diff, source,
                         how + f" ({_OPTIONS}, at d=64, l=16)" ) )
  totals = { k: sum( r[k] for r in rows ) for k in RESOURCES }
  percent = { k: 100 * totals[k] / U280[k] for k in RESOURCES }
  over = [ k for k in RESOURCES if totals[k] > U280[k] ]
  return dict( rows=rows, totals=totals, budget=dict( U280 ), budget_source=U280_SOURCE,
               percent=percent, within_budget=not over, over=over, left_out=list( LEFT_OUT ) )
