"""The kernel's FPGA resources: the core's estimate plus the kernel's shims,
per U280 and per SLR (`kernel_resources(cfg)`; `dfx fpga` writes it into
its folder, docs/resources.md shows it at the paper's d=64, l=16).

- The core: `resources.estimate.estimate_resources` (the SYNTHESISED unit
  rows times their instance counts; the vector register file as
  `resources.vrf_banking` maps it, the other buffers in RAMB36E2).
- The shims: one Yosys 0.23 `synth_xilinx -family xcup` run per module
  (`python reports/kernel_resources.py`, cached in build/), times its
  instances: an AXI master adapter per HBM pseudo-channel and per DDR port,
  the program fetch, the control registers, the status counters and the
  two ring framers.  `SHIMS_SYNTHESISED` holds the measured numbers; a
  module not measured yet is a "pending" row, counted in no total.
- The floorplan (3 SLRs, each a third of the device): SLR0 holds the HBM
  side (the HBM adapters, the DDR bank 0 adapters, the program fetch, the
  weight FIFO and the matrix-input buffer, so the MPU's weights stay near
  the HBM as in the paper), SLR1 the register file, the partial-sum
  buffer, the MPU's per-column post-ops, the DDR bank 1 adapters and the
  control registers, SLR2 the VPU and the ring framers (the QSFP GTs sit
  next to SLR2).  The MFU lanes are split across the SLRs, as the paper
  split its MPU, one lane at a time into the SLR with the most LUTs left:
  no SLR holds the whole MPU.
"""

from ..resources.estimate import RESOURCES, U280, U280_SOURCE, estimate_resources, unit
from .interface import DDR_BANKS

SLRS = 3
SLR_CAPACITY = { k: v // SLRS for k, v in U280.items() }     # DSP: 3,008 each
PAPER_DSP_PERCENT = 39.15        # the paper's U280 build (figures.md: V)
DSP_PER_FP16_ADDER = 2           # Xilinx's floating-point IP (the paper's MFU: 3,072 DSPs)

_BY = "python reports/kernel_resources.py"
# module: measured ( LUT, FF, DSP, BRAM36, URAM, at ) by Yosys 0.23
# `synth_xilinx -family xcup` (no -flatten, `stat -top`), or None while
# the module is not on this branch / not measured.  `at` names the
# parameters it was synthesised with.
SHIMS_SYNTHESISED = {
  # no response buffer (R and B go straight to the core, which
  # back-pressures the memory controller): the W data/strobe register,
  # the address, the in-flight count and a 512-bit data gate; the DDR
  # ports' adapters are counted as this one (the same 512-bit data and 64
  # outstanding; a request address 5 bits wider)
  "MemAxiMasterRTL": ( 562, 620, 0, 0, 0, "d=64: 512-bit words, 64 outstanding" ),
  "InstFetchRTL": ( 564, 1_233, 0, 0, 0, "128-bit beats, 8 entries" ),
  # the 32 HBM and 4 DDR base arguments are 64-bit registers, read back
  # through one multiplexer with the status registers
  "ControlRegsRTL": ( 3_774, 4_956, 0, 0, 0, "the paper's register map (32 HBM, 4 DDR bases)" ),
  "KernelStatusRTL": ( 40, 441, 0, 0, 0, "the paper's register map" ),
  # Tx slices the packet onto the beats combinationally; Rx keeps the
  # packet's beats but its last in registers (two 512-bit beats)
  "RingTxRTL": ( 6, 3, 0, 0, 0, "router_words=64, 512-bit beats" ),
  "RingRxRTL": ( 8, 1_028, 0, 0, 0, "router_words=64, 512-bit beats" ),
}


# LUTs per distributed-RAM primitive (UG574), for `cells_to_resources`
LUTRAM_LUTS = { "RAM32M16": 8, "RAM64M8": 8, "RAM32M": 4, "RAM64M": 4, "RAM32X1D": 2,
                "RAM64X1D": 2, "RAM128X1D": 4, "RAM256X1D": 8, "RAM32X1S": 1, "RAM64X1S": 1,
                "RAM128X1S": 2, "RAM256X1S": 4, "RAM512X1S": 8 }


def cells_to_resources( cells ):
  """{LUT, FF, DSP, BRAM36, URAM} of a Yosys `stat` cell list: LUT counts
  LUT1-6, shift-register LUTs and distributed RAM by its LUTs; BRAM36
  counts a RAMB18E2 as half."""
  import re
  out = dict.fromkeys( RESOURCES, 0 )
  for cell, n in cells.items():
    if re.fullmatch( r"LUT\d|SRL\w+", cell ):
      out["LUT"] += n
    elif cell in LUTRAM_LUTS:
      out["LUT"] += n * LUTRAM_LUTS[ cell ]
    elif re.fullmatch( r"FD[A-Z]+", cell ):
      out["FF"] += n
    elif cell == "DSP48E2":
      out["DSP"] += n
    elif cell == "RAMB36E2":
      out["BRAM36"] += n
    elif cell == "RAMB18E2":
      out["BRAM36"] += n / 2
    elif cell == "URAM288":
      out["URAM"] += n
  return out


def shims( cfg ):
  """(row name, module, instances, SLR) of the kernel's shims at cfg."""
  ddr0 = sum( 1 for c in range( cfg.ddr_channels ) if c % DDR_BANKS == 0 )
  return [
    ( "HBM AXI master adapters", "MemAxiMasterRTL", cfg.hbm_channels, 0 ),
    ( "DDR AXI master adapters, bank 0", "MemAxiMasterRTL", ddr0, 0 ),
    ( "DDR AXI master adapters, bank 1", "MemAxiMasterRTL", cfg.ddr_channels - ddr0, 1 ),
    ( "program fetch master", "InstFetchRTL", 1, 0 ),
    ( "control registers (s_axi_control)", "ControlRegsRTL", 1, 1 ),
    ( "status counters", "KernelStatusRTL", 1, 1 ),
    ( "ring transmit framer", "RingTxRTL", 1, 2 ),
    ( "ring receive framer", "RingRxRTL", 1, 2 ),
  ]


# the core's rows by SLR (the MFU lanes are split, see above)
CORE_SLR = {
  "weight FIFO": 0, "matrix-input buffer": 0,
  "vector register file": 1, "partial-sum buffer": 1,
  "MPU: accumulator and post-op adders": 1, "MPU: post-op multipliers": 1, "MPU: GELU": 1,
  "MPU: max tree": 1,
  "VPU: lanes": 2, "VPU: adder tree and accumulator": 2, "VPU: max tree and accumulator": 2,
  # the design options' additions sit with the unit they change
  "design option: mpu_raster_walk": 0, "design option: mpu_post_bypass": 1,
  "design option: reduce_partials": 2,
  "design option: vpu_max_tree": 2,
  "design option: vpu_gelu": 2,
  "design option: dma_inst_queue": 0,     # the DMA, by the HBM
}
LANES = "MPU: MFU lanes"


def _sum( rows ):
  return { k: sum( r[k] for r in rows if r["source"] != "pending" ) for k in RESOURCES }


def kernel_resources( cfg ):
  """{rows, totals, percent, slrs, pending, dsp_fp_ip, paper_dsp_percent,
  budget, slr_capacity, left_out}: every row has name, count, LUT, FF, DSP,
  BRAM36, URAM, source (synthesised / extrapolated / pending), how, slr."""
  core = estimate_resources( cfg )
  rows = []
  for r in core["rows"]:
    if r["name"] == LANES:
      continue
    rows.append( dict( r, name=f"core: {r['name']}", slr=CORE_SLR[ r["name"] ] ) )
  for name, module, n, slr in shims( cfg ):
    if n == 0:
      continue
    got = SHIMS_SYNTHESISED[ module ]
    row = dict( name=f"kernel: {name}", count=n, slr=slr, fp16_adders=0 )
    if got is None:
      row.update( { k: 0 for k in RESOURCES }, source="pending",
                  how=f"{n} x {module}: not synthesised yet ({_BY})" )
    else:
      *counts, at = got
      row.update( { k: n * v for k, v in zip( RESOURCES, counts ) }, source="synthesised",
                  how=f"{n} x {module} (Yosys synth_xilinx -family xcup at {at})" )
    rows.append( row )
  # the MFU lanes, one at a time into the SLR with the largest LUT share left
  lanes = next( r for r in core["rows"] if r["name"] == LANES )
  per = { k: lanes[k] / lanes["count"] for k in RESOURCES }
  used = [ _sum( [ r for r in rows if r["slr"] == s ] ) for s in range( SLRS ) ]
  count = [ 0 ] * SLRS
  for _ in range( lanes["count"] ):
    s = min( range( SLRS ), key=lambda s: ( used[s]["LUT"] + per["LUT"] ) / SLR_CAPACITY["LUT"] )
    count[s] += 1
    used[s] = { k: used[s][k] + per[k] for k in RESOURCES }
  for s in range( SLRS ):
    if count[s]:
      rows.append( dict( lanes, name=f"core: {LANES} (SLR{s})", count=count[s], slr=s,
                         fp16_adders=lanes["fp16_adders"] * count[s] // lanes["count"],
                         how=f"{count[s]} of {lanes['how']}",
                         **{ k: round( count[s] * per[k] ) for k in RESOURCES } ) )
  rows.sort( key=lambda r: ( r["slr"], r["name"] ) )
  totals = _sum( rows )
  add = unit( "FP16 add" )           # what an adder moved onto DSPs takes out of the fabric
  slrs = []
  for s in range( SLRS ):
    mine = [ r for r in rows if r["slr"] == s ]
    t = _sum( mine )
    n_add = sum( r["fp16_adders"] for r in mine )
    slrs.append( dict( slr=s, totals=t, mfu_lanes=count[s],
                       dsp_fp_ip=t["DSP"] + DSP_PER_FP16_ADDER * n_add,
                       lut_fp_ip=t["LUT"] - n_add * add["LUT"],
                       percent={ k: 100 * t[k] / SLR_CAPACITY[k] for k in RESOURCES },
                       over=[ k for k in RESOURCES if t[k] > SLR_CAPACITY[k] ] ) )
  adders = sum( r["fp16_adders"] for r in rows )
  dsp_ip = totals["DSP"] + DSP_PER_FP16_ADDER * adders
  return dict(
    config=cfg.to_dict(), rows=rows, totals=totals,
    percent={ k: 100 * totals[k] / U280[k] for k in RESOURCES },
    slrs=slrs, pending=[ r["name"] for r in rows if r["source"] == "pending" ],
    fp16_adders=adders,
    dsp_fp_ip=dict( DSP=dsp_ip, percent=100 * dsp_ip / U280["DSP"],
                    LUT=totals["LUT"] - adders * add["LUT"],
                    LUT_percent=100 * ( totals["LUT"] - adders * add["LUT"] ) / U280["LUT"] ),
    paper_dsp_percent=PAPER_DSP_PERCENT,
    budget=dict( U280 ), budget_source=U280_SOURCE, slr_capacity=dict( SLR_CAPACITY ),
    left_out=core["left_out"],
  )


def markdown( table ):
  """The table as docs/resources.md and `dfx fpga`'s folder show it."""
  cols = RESOURCES
  out = [ "| row | SLR | " + " | ".join( cols ) + " | source | how |",
          "|---|---|" + "---:|" * len( cols ) + "---|---|" ]
  for r in table["rows"]:
    cells = [ "-" if r["source"] == "pending" else f"{r[k]:,}" for k in cols ]
    out.append( f"| {r['name']} | {r['slr']} | " + " | ".join( cells ) +
                f" | {r['source']} | {r['how']} |" )
  t, p = table["totals"], table["percent"]
  out.append( "| **total** | | " + " | ".join( f"**{t[k]:,}**" for k in cols ) + " | | |" )
  out.append( "| % of the U280 | | " + " | ".join( f"{p[k]:.1f} %" for k in cols ) + " | | |" )
  cap = table["slr_capacity"]
  out += [ "", "| SLR | MFU lanes | " + " | ".join( cols ) +
           " | DSP, adders on DSPs | LUT, adders on DSPs |",
           "|---|---:|" + "---:|" * ( len( cols ) + 2 ) ]
  for s in table["slrs"]:
    out.append( f"| SLR{s['slr']} | {s['mfu_lanes']} | " + " | ".join(
      f"{s['totals'][k]:,} ({s['percent'][k]:.1f} %)" for k in cols ) +
      f" | {s['dsp_fp_ip']:,} ({100 * s['dsp_fp_ip'] / cap['DSP']:.1f} %)"
      f" | {s['lut_fp_ip']:,} ({100 * s['lut_fp_ip'] / cap['LUT']:.1f} %) |" )
  out.append( "| capacity of one | | " + " | ".join( f"{cap[k]:,}" for k in cols ) +
              f" | {cap['DSP']:,} | {cap['LUT']:,} |" )
  ip = table["dsp_fp_ip"]
  out += [ "", f"DSP: {t['DSP']:,} ({p['DSP']:.2f} %) with Yosys's mapping (FP16 adders in "
           f"fabric); with each of the {table['fp16_adders']:,} FP16 adders on "
           f"{DSP_PER_FP16_ADDER} DSPs as Xilinx's floating-point IP maps them: {ip['DSP']:,} "
           f"({ip['percent']:.2f} %); the paper: {table['paper_dsp_percent']} %. The LUTs "
           f"less those adders' ({unit( 'FP16 add' )['LUT']:,} each, the synthesised FP16 add): "
           f"{ip['LUT']:,} ({ip['LUT_percent']:.1f} %)." ]
  if table["pending"]:
    out += [ "", "Pending (not synthesised yet, in no total): " + "; ".join( table["pending"] ) + "." ]
  return "\n".join( out ) + "\n"
