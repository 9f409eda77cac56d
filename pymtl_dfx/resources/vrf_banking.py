"""The vector register file as the FPGA holds it: block RAM and UltraRAM
copies behind a live-value table (docs/resources.md, "The vector register
file on the FPGA").

`RFStorageRTL` is one flat array of flip-flops with six read and four write
ports, every one usable in every cycle (so no side ever waits for another).
At d=64 and 2,048 entries that is 2,097,152 flip-flops (80 % of the U280's)
and six 2,048:1 read multiplexers 1,024 bits wide; nothing in it infers a
RAM, whose primitives have two ports.  The mapping that keeps every port
and today's cycle timing:

- one copy of the file per (read port, write port) pair, each a
  simple-dual-port memory (its writer's port in, its reader's port out),
  and a live-value table (LVT): per element, which writer wrote it last,
  so a reader takes the element from that writer's copy;
- a copy whose reader or writer addresses elements at any offset (the
  router's `r_rd` and `r_w`: W elements from a flat address, over two
  entries) is banked by lane, one 16-bit RAMB36E2 column per lane, so each
  lane takes its own entry address; with W <= d a window touches a lane
  once (W > d: ceil(W/d) entry-interleaved banks per lane);
- every other copy (whole entries, the MPU's l-aligned slices and bias
  reads) is four lanes per URAM288 (each lane two of its nine-bit byte
  enables), `vreg_entries` deep in 4,096-deep blocks.

What it relies on, in the RFM's code: every read address is a function of
registers only (`RFMDmaRTL.addr`, `RFMVectorRTL` src + count,
`RFMMatrixRTL` src1/bias + counters, `RFMRouterRTL` base/segment/k, the
segment registered with the instruction), so a
copy is read with the address's next value and its output register takes
the place of the address register (the message appears in the same cycle
as today); no element is read in the cycle after it is written (the
scoreboard issues a reader after its producer's done, which follows the
last write; the MPU side waits for a chain producer's done), so a copy
needs no write-to-read bypass; no two writers write one element in the
same cycle (the scoreboard), so the LVT has one writer per element.
"""

import math

from ..config import FP16_BITS

# RFStorageRTL's ports (a test counts them on the component)
READ_PORTS = ( "DMA rf_rd", "VPU a", "VPU b", "MPU x collect", "MPU bias", "router rd" )
WRITE_PORTS = ( "DMA rf_wr", "VPU out", "MPU out", "router wr" )
# ports that address single elements at any offset (RFStorageRTL's r_rd, r_w)
ELEMENT_PORTS = ( "router rd", "router wr" )

BRAM36_DEPTH_AT_18 = 2048         # RAMB36E2 as 2K x 18: one FP16 lane
URAM_DEPTH, URAM_LANES = 4096, 4  # URAM288: 4K x 72, four FP16 lanes by byte enables


def vrf_banks( cfg ):
  """The vector register file's copies at cfg: {copies, lane_copies,
  uram_copies, BRAM36, URAM, FF (the LVT), per_lane_banks, how}."""
  d, entries = cfg.d, cfg.vreg_entries
  pairs = [ ( r, w ) for r in READ_PORTS for w in WRITE_PORTS ]
  lane = [ p for p in pairs if p[0] in ELEMENT_PORTS or p[1] in ELEMENT_PORTS ]
  # a window of W elements at any offset touches a lane in at most
  # ceil(W/d) consecutive entries: that many entry-interleaved banks
  k = math.ceil( cfg.router_words / d )
  bram_per_lane = k * math.ceil( math.ceil( entries / k ) / BRAM36_DEPTH_AT_18 )
  lane_bram = d * bram_per_lane
  uram = math.ceil( d / URAM_LANES ) * math.ceil( entries / URAM_DEPTH )
  lvt_bits = max( 1, ( len( WRITE_PORTS ) - 1 ).bit_length() )
  n_lane, n_uram = len( lane ), len( pairs ) - len( lane )
  return dict(
    copies=len( pairs ), lane_copies=n_lane, uram_copies=n_uram, per_lane_banks=k,
    BRAM36=n_lane * lane_bram, URAM=n_uram * uram,
    FF=entries * d * lvt_bits,
    flip_flops_as_written=entries * d * FP16_BITS,
    how=( f"{len( pairs )} copies ({len( READ_PORTS )} read x {len( WRITE_PORTS )} write ports) "
          f"of {entries} x {d} FP16: {n_lane} serving the router's element windows banked by "
          f"lane ({lane_bram} RAMB36E2 each), {n_uram} in URAM288 ({uram} each, "
          f"{URAM_LANES} lanes a block); a {lvt_bits}-bit live-value table per element "
          f"in flip-flops" ),
  )
