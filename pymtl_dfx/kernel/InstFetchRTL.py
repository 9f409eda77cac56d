"""The program fetch: a read-only AXI4 master (`m_axi_inst`) that streams
`count` instructions from `addr` into the core's `inst` port.

Ports:
  start  a one-cycle pulse: fetch `count` instructions from `addr` (both
         sampled in that cycle).  A start while busy is ignored; a start
         with count 0 does nothing (busy stays 0).
  addr   the program's byte address (aligned to data_bits/8); instruction k
         is at addr + k * data_bits/8.
  count  instructions to fetch.
  inst   `InstMsg` (INST_BITS wide: the low INST_BITS of each beat), in order.
  axi    the AXI4 master; its write channels are driven idle (awvalid and
         wvalid 0, bready 1).
  busy   1 from the cycle after an accepted start until the cycle after the
         last instruction was taken by `inst`.
  error  1 for one cycle (the cycle after) when an R response is not OKAY;
         its data still goes to `inst` (the run ends, the host sees the
         kernel's sticky error bit).

Reads: single-beat INCR transactions (len 0, size log2(data_bits/8), id 0),
so none crosses a 4 KB page.  Up to `entries` reads are in flight or held:
each read reserves a slot of an `entries`-deep buffer when it is issued, so
rready is always 1 and back-pressure on `inst` never loses a word.  A slot
is free again latency + 5 cycles after its read was issued (behind an
AxiMemSlaveRTL), so the default 32 entries (32 x 128 bits, a LUTRAM) keep
the fetch at one instruction per cycle against DDR's 15-cycle latency.

`inst_memory_spec` describes the co-simulation's instruction memory (one
channel, one instruction per word) for a `MemoryRTL` behind an
`AxiMemSlaveRTL` on m_axi_inst.
"""

from fractions import Fraction

from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import SendIfcRTL

from ..config import FP16_BITS
from ..isa import INST_BITS
from ..lib.fifo import FifoRTL
from ..units.control.msgs import InstMsg
from ..units.memory.msgs import MemorySpec
from .axi import BURST_INCR, MEM_ADDR_BITS, RESP_OKAY, AxiMasterIfc
from .interface import inst_data_bits
from .MemAxiMasterRTL import AxiConfigError

COUNT_BITS = 32


def inst_memory_spec( words, latency, outstanding ):
  """A one-channel memory whose word is one instruction (INST_BITS // 16
  FP16 elements): the program memory behind m_axi_inst in co-simulation."""
  return MemorySpec( "INST", 1, Fraction( 1 ), latency, outstanding, words,
                     INST_BITS // FP16_BITS )


class InstFetchRTL( Component ):

  def construct( s, data_bits=inst_data_bits(), entries=32 ):
    nbytes = data_bits // 8
    if data_bits < INST_BITS or data_bits % 8 or nbytes & ( nbytes - 1 ):
      raise AxiConfigError( f"InstFetchRTL: data_bits={data_bits} (a power-of-two number "
                            f"of bytes holding an instruction of {INST_BITS} bits)" )
    if not isinstance( entries, int ) or entries < 1:
      raise AxiConfigError( f"InstFetchRTL: entries={entries!r} (a positive integer)" )
    SH = nbytes.bit_length() - 1
    A = MEM_ADDR_BITS
    Cnt = mk_bits( entries.bit_length() )
    full = Cnt( entries )
    step = mk_bits( A )( nbytes )

    s.start = InPort()
    s.addr  = InPort( A )
    s.count = InPort( COUNT_BITS )
    s.inst  = SendIfcRTL( InstMsg )
    s.axi   = AxiMasterIfc( A, data_bits )
    s.busy  = OutPort()
    s.error = OutPort()

    s.fifo = FifoRTL( InstMsg, entries )
    s.ar_v     = Wire()
    s.ar_addr  = Wire( A )
    s.next     = Wire( A )            # the next read's address
    s.to_issue = Wire( COUNT_BITS )   # reads still to send
    s.to_give  = Wire( COUNT_BITS )   # instructions still to deliver
    s.held     = Wire( Cnt )          # reads issued whose instruction is not delivered
    s.issue    = Wire()
    s.gave     = Wire()
    s.go       = Wire()               # an accepted start

    s.axi.arvalid //= s.ar_v
    s.axi.araddr  //= s.ar_addr
    s.axi.arlen   //= 0
    s.axi.arsize  //= SH
    s.axi.arburst //= BURST_INCR
    s.axi.arid    //= 0
    s.axi.rready  //= 1               # a buffer slot was reserved at issue
    s.axi.awvalid //= 0
    s.axi.awaddr  //= 0
    s.axi.awlen   //= 0
    s.axi.awsize  //= SH
    s.axi.awburst //= BURST_INCR
    s.axi.awid    //= 0
    s.axi.wvalid  //= 0
    s.axi.wdata   //= 0
    s.axi.wstrb   //= 0
    s.axi.wlast   //= 1
    s.axi.bready  //= 1
    s.fifo.enq.msg //= s.axi.rdata[ 0:INST_BITS ]
    s.fifo.enq.val //= s.axi.rvalid
    s.inst //= s.fifo.deq

    @update
    def up_fetch_comb():
      s.go @= s.start & ~s.busy & ( s.count != 0 )
      s.issue @= s.busy & ( s.to_issue != 0 ) & ( s.held < full ) & \
                 ( ~s.ar_v | s.axi.arready )
      s.gave @= s.fifo.deq.val & s.inst.rdy

    @update_ff
    def up_fetch_ff():
      if s.reset:
        s.busy <<= 0
        s.ar_v <<= 0
        s.held <<= 0
        s.to_issue <<= 0
        s.to_give <<= 0
        s.error <<= 0
      else:
        if s.go:
          s.busy <<= 1
          s.to_issue <<= s.count
          s.to_give <<= s.count
          s.next <<= s.addr
        else:
          if s.issue:
            s.to_issue <<= s.to_issue - 1
          if s.gave:
            s.to_give <<= s.to_give - 1
            if s.to_give == 1:
              s.busy <<= 0
        if s.issue:
          s.ar_v <<= 1
          s.ar_addr <<= s.next
          s.next <<= s.next + step
        elif s.axi.arready:
          s.ar_v <<= 0
        if s.issue & ~s.gave:
          s.held <<= s.held + 1
        elif s.gave & ~s.issue:
          s.held <<= s.held - 1
        s.error <<= s.axi.rvalid & ( s.axi.rresp != RESP_OKAY )

  def line_trace( s ):
    return f"{'B' if s.busy else ' '}{'ar' if s.ar_v else '  '}{int( s.to_give )}{s.inst}"
