"""The core's channels, declared once: `Core` joins them (as PyMTL3
connections) and perf's core (`perf/core.py`) takes their handshakes.

A channel is a producer end and a consumer end, each (unit, port) or
(unit, port, index): a unit of `Core.UNIT_NAMES`, or "core" for the core's
own boundary port; an index is a unit number of the control unit (`DMA`,
`MPU`, `VPU`, `ROUTER`) or `EACH`, one channel per channel of the memory
named by the unit (hbm or ddr).  `perf` says what perf's core keeps of the
channel each cycle under its name, in the handshake record its `comb`
writes and its `tick` (or the appliance's cycle) reads:

  "fire"  val and rdy (the handshake happens), a bool
  "rdy"   the consumer's rdy (the producer's timing decides the rest)
  "val"   the producer's val
  "rdys" / "fires"   per memory channel, a list
  None    not timed: the memories' host ports (images are loaded and
          results read outside the timed steps), the idle wire (the
          appliance asks `CoreTiming.idle()`) and the ring position (a
          constant in a run)

`where` says who reads it: "core" (perf's `CoreTiming.tick`) or
"appliance" (the ring, `perf/appliance.py`).  The order is Core's
connection order.
"""

from collections import namedtuple

from ..units.control.msgs import UNITS

DMA, MPU, VPU, ROUTER = ( UNITS.index( u ) for u in ( "dma", "mpu", "vpu", "router" ) )
EACH = "each"             # one channel per memory channel
MEMORIES = ( "hbm", "ddr" )

Channel = namedtuple( "Channel", "name src dst perf where", defaults=( "core", ) )

NETLIST = (
  # control unit <-> execution units
  Channel( "inst",        ( "core", "inst" ),            ( "ctrl", "inst" ),          "fire" ),
  Channel( "idle",        ( "ctrl", "idle" ),            ( "core", "idle" ),          None, None ),
  # the ring position (`Core`: its core_id input, or a wire tied to its constant)
  Channel( "rfm_core_id",    ( "core", "core_id" ),      ( "rfm", "core_id" ),        None, None ),
  Channel( "router_core_id", ( "core", "core_id" ),      ( "router", "core_id" ),     None, None ),
  Channel( "dma_inst",    ( "ctrl", "issue", DMA ),      ( "dma", "inst" ),           "fire" ),
  Channel( "dma_done",    ( "dma", "done" ),             ( "ctrl", "done", DMA ),     "fire" ),
  Channel( "mpu_inst",    ( "ctrl", "issue", MPU ),      ( "rfm", "mpu_inst" ),       "fire" ),
  Channel( "mpu_done",    ( "rfm", "mpu_done" ),         ( "ctrl", "done", MPU ),     "fire" ),
  Channel( "vpu_inst",    ( "ctrl", "issue", VPU ),      ( "rfm", "vpu_inst" ),       "fire" ),
  Channel( "vpu_done",    ( "rfm", "vpu_done" ),         ( "ctrl", "done", VPU ),     "fire" ),
  Channel( "router_inst", ( "ctrl", "issue", ROUTER ),   ( "rfm", "router_inst" ),    "fire" ),
  Channel( "router_done", ( "router", "done" ),          ( "ctrl", "done", ROUTER ),  "fire" ),
  # DMA <-> register file manager, DMA -> weight FIFO -> MPU
  Channel( "rf_wr",       ( "dma", "rf_wr" ),            ( "rfm", "rf_wr" ),          "rdy" ),
  Channel( "rf_rd",       ( "dma", "rf_rd" ),            ( "rfm", "rf_rd" ),          "fire" ),
  Channel( "rf_rd_resp",  ( "rfm", "rf_rd_resp" ),       ( "dma", "rf_rd_resp" ),     "rdy" ),
  Channel( "w",           ( "dma", "w" ),                ( "wfifo", "enq" ),          "fire" ),
  Channel( "wfifo_deq",   ( "wfifo", "deq" ),            ( "mpu", "w" ),              "fire" ),
  # register file manager <-> engines and router
  Channel( "mpu_cmd",     ( "rfm", "mpu_cmd" ),          ( "mpu", "cmd" ),            "fire" ),
  Channel( "mpu_x",       ( "rfm", "mpu_x" ),            ( "mpu", "x" ),              "fire" ),
  Channel( "mpu_bias",    ( "rfm", "mpu_bias" ),         ( "mpu", "bias" ),           "fire" ),
  Channel( "mpu_out",     ( "mpu", "out" ),              ( "rfm", "mpu_out" ),        "fire" ),
  Channel( "vpu_cmd",     ( "rfm", "vpu_cmd" ),          ( "vpu", "cmd" ),            "fire" ),
  Channel( "vpu_a",       ( "rfm", "vpu_a" ),            ( "vpu", "a" ),              "fire" ),
  Channel( "vpu_b",       ( "rfm", "vpu_b" ),            ( "vpu", "b" ),              "fire" ),
  Channel( "vpu_out",     ( "vpu", "out" ),              ( "rfm", "vpu_out" ),        "fire" ),
  Channel( "router_cmd",  ( "rfm", "router_cmd" ),       ( "router", "cmd" ),         "fire" ),
  Channel( "router_rd",   ( "rfm", "router_rd" ),        ( "router", "rf_rd" ),       "fire" ),
  Channel( "router_wr",   ( "router", "rf_wr" ),         ( "rfm", "router_wr" ),      "rdy" ),
  Channel( "ring_send",   ( "router", "ring_send" ),     ( "core", "ring_send" ),     "val", "appliance" ),
  Channel( "ring_recv",   ( "core", "ring_recv" ),       ( "router", "ring_recv" ),   "fire", "appliance" ),
  # DMA <-> memories, the memories' host ports out
  Channel( "hbm_host_req",  ( "core", "hbm_host_req" ),  ( "hbm", "host_req" ),       None, None ),
  Channel( "hbm_host_resp", ( "hbm", "host_resp" ),      ( "core", "hbm_host_resp" ), None, None ),
  Channel( "hbm_req",     ( "dma", "hbm_req", EACH ),    ( "hbm", "req", EACH ),      "rdys" ),
  Channel( "hbm_resp",    ( "hbm", "resp", EACH ),       ( "dma", "hbm_resp", EACH ), "rdys" ),
  Channel( "ddr_host_req",  ( "core", "ddr_host_req" ),  ( "ddr", "host_req" ),       None, None ),
  Channel( "ddr_host_resp", ( "ddr", "host_resp" ),      ( "core", "ddr_host_resp" ), None, None ),
  Channel( "ddr_req",     ( "dma", "ddr_req", EACH ),    ( "ddr", "req", EACH ),      "rdys" ),
  Channel( "ddr_resp",    ( "ddr", "resp", EACH ),       ( "dma", "ddr_resp", EACH ), "rdys" ),
)

# the channels whose handshakes perf's core computes in `comb` (and its
# tick or the appliance's cycle reads)
PERF_CHANNELS = tuple( ch.name for ch in NETLIST if ch.perf is not None )


def ends( ch, memories=True ):
  """The channel's two ends as Core places them: with `memories=False`
  (the FPGA build's core) a memory's end is the core's boundary port
  `{memory}_{port}`, and the host-port channels are not there (None)."""
  if memories:
    return ch.src, ch.dst
  out = []
  for end in ( ch.src, ch.dst ):
    if end[0] in MEMORIES:
      end = ( "core", f"{end[0]}_{end[1]}", *end[ 2: ] )
    out.append( end )
  if out[0][0] == "core" and out[1][0] == "core":
    return None
  return tuple( out )
