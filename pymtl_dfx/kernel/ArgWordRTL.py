"""One 32-bit argument word of `s_axi_control`: the value the host wrote
(`store`, read back by the bus) and the value latched when a run begins
(`latch`, what the kernel sees during the run).

One instance per word, not a loop over an array inside `ControlRegsRTL`: a
register array written with delayed assignments inside a `for` loop is
refused by Verilator 5.006 (BLKLOOPINIT) once the loop is longer than its
unroll limit, which the paper's 32 HBM channels reach (101 words).
"""

from pymtl3 import *


class ArgWordRTL( Component ):

  def construct( s ):
    s.we = InPort()           # the held bus write is to this word
    s.wdata = InPort( 32 )
    s.wmask = InPort( 32 )    # the write's byte strobes, one bit per data bit
    s.go = InPort()           # a run begins at this edge
    s.store = OutPort( 32 )
    s.latch = OutPort( 32 )

    @update_ff
    def up_store():
      if s.reset:
        s.store <<= 0
      elif s.we:
        s.store <<= ( s.store & ~s.wmask ) | ( s.wdata & s.wmask )

    @update_ff
    def up_latch():
      if s.go:
        s.latch <<= s.store

  def line_trace( s ):
    return f"{int( s.store ):08x}/{int( s.latch ):08x}"
