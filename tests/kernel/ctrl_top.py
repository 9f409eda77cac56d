"""A test top for the control registers: ControlRegsRTL + KernelStatusRTL +
a fake kernel, with `s_axi_control` on flat ports (`axi.flat_ports`), so
`LiteMasterSim` drives it exactly as it drives dfx_kernel.

The fake kernel counts k = 1, 2, ... from the cycle after `start` and
pulses `done` at k = arg `inst_count` (the latched value), so `cycles` must
read inst_count.  Each unit u issues and retires at the fixed k of
`PATTERN[u]` (the expected busy counts follow from `busy_reference`).  The
test drives the error and ring lines directly (`inject_err`, bit b = error
bit b, and `inject_tx_fire`, ...).  `irq` is the interrupt output, `runs` counts start pulses, `run_len`
and `arg_<name>` show the arguments as the kernel received them.
"""

from pymtl3 import *
from pymtl3.stdlib.test_utils import config_model_with_cmdline_opts

from pymtl_dfx.kernel.axi import AXI4_LITE, LITE_DATA_BITS, flat_ports
from pymtl_dfx.kernel.ControlRegsRTL import ControlRegsRTL
from pymtl_dfx.kernel.interface import CTRL_ADDR_BITS, ERROR_BITS, register_map
from pymtl_dfx.kernel.KernelStatusRTL import KernelStatusRTL
from pymtl_dfx.hdl import verilator5
from pymtl_dfx.testing.harness import _finalize, _plain_opts, translating
from pymtl_dfx.units.control.msgs import UNITS

PREFIX = "s_axi_control"
KB = 16                                   # the fake kernel's k
# (issue k, retire k) of two instructions per unit, in UNITS order: overlap
# (dma), a gap (mpu), an issue and a retire in one cycle (vpu), none (router)
PATTERN = ( ( ( 1, 4 ), ( 2, 6 ) ), ( ( 3, 5 ), ( 7, 9 ) ), ( ( 2, 3 ), ( 3, 8 ) ), () )
assert len( PATTERN ) == len( UNITS )


def busy_reference( pattern, n ):
  """Cycles k in 1..n in which the unit had an instruction in flight: issued
  at a k' < k and not retired at a k' < k (KernelStatusRTL's rule)."""
  return sum( 1 for k in range( 1, n + 1 )
              if sum( i < k for i, _ in pattern ) - sum( r < k for _, r in pattern ) > 0 )


class FakeUnitRTL( Component ):
  """Issue / retire pulses at fixed k (0 = never: k starts at 1)."""

  def construct( s, i0=0, r0=0, i1=0, r1=0 ):
    s.k = InPort( KB )
    s.running = InPort()
    s.issued = OutPort()
    s.retired = OutPort()

    @update
    def up_unit():
      s.issued @= s.running & ( ( s.k == i0 ) | ( s.k == i1 ) )
      s.retired @= s.running & ( ( s.k == r0 ) | ( s.k == r1 ) )


class FakeKernelRTL( Component ):

  def construct( s ):
    s.start = InPort()
    s.n = InPort( 32 )
    s.done = OutPort()
    s.issued = OutPort( len( UNITS ) )
    s.retired = OutPort( len( UNITS ) )
    s.runs = OutPort( 8 )
    s.k = Wire( KB )
    s.running = Wire()
    s.units = [ FakeUnitRTL( *[ k for pair in p for k in pair ] ) for p in PATTERN ]
    for u, unit in enumerate( s.units ):
      unit.k //= s.k
      unit.running //= s.running
      s.issued[ u ] //= unit.issued
      s.retired[ u ] //= unit.retired

    @update
    def up_done():
      s.done @= s.running & ( zext( s.k, 32 ) == s.n )

    @update_ff
    def up_count():
      if s.reset:
        s.k <<= 0
        s.running <<= 0
        s.runs <<= 0
      elif s.start:
        s.k <<= 1
        s.running <<= 1
        s.runs <<= s.runs + 1
      elif s.done:
        s.running <<= 0
      elif s.running:
        s.k <<= s.k + 1


class CtrlTestTop( Component ):

  def construct( s, cfg ):
    regs = register_map( cfg )
    s.regs = ControlRegsRTL( cfg )
    s.status = KernelStatusRTL( cfg )
    s.kernel = FakeKernelRTL()
    flat_ports( s, PREFIX, AXI4_LITE, False, s.regs.s_axi,
                addr_bits=CTRL_ADDR_BITS, data_bits=LITE_DATA_BITS )
    # ControlRegsRTL's `interrupt` (Vitis's name for the kernel's output) is
    # `irq` here: `interrupt` is a C++ keyword Verilator renames in the C++
    # of a top port, which pymtl3's import then cannot find
    s.irq = OutPort()
    s.busy = OutPort()
    s.runs = OutPort( 8 )
    s.run_len = OutPort( 32 )
    s.inject_err = InPort( max( ERROR_BITS.values() ) + 1 )
    s.inject_tx_fire = InPort()
    s.inject_rx_fire = InPort()
    s.inject_tx_stall = InPort()

    s.irq //= s.regs.interrupt
    s.busy //= s.regs.busy
    s.runs //= s.kernel.runs
    s.run_len //= s.regs.arg_inst_count
    for r in regs:
      if r.kind == "arg":
        port = OutPort( r.bits )
        setattr( s, f"arg_{r.name}", port )
        port //= getattr( s.regs, f"arg_{r.name}" )
      elif r.kind == "status":
        connect( getattr( s.regs, f"st_{r.name}" ), getattr( s.status, f"st_{r.name}" ) )

    s.kernel.start //= s.regs.start
    s.kernel.n //= s.regs.arg_inst_count
    s.regs.done //= s.kernel.done
    s.status.start //= s.regs.start
    s.status.done //= s.kernel.done
    s.status.issued //= s.kernel.issued
    s.status.retired //= s.kernel.retired
    for name, b in ERROR_BITS.items():
      connect( getattr( s.status, f"err_{name}" ), s.inject_err[ b ] )
    s.status.ring_tx_fire //= s.inject_tx_fire
    s.status.ring_rx_fire //= s.inject_rx_fire
    s.status.ring_tx_stall //= s.inject_tx_stall

  def line_trace( s ):
    return f"{s.regs.line_trace()} {s.status.line_trace()}"


def build( cfg, cmdline_opts ):
  """The top at rtl, in pymtl3's simulation or (with --test-verilog) in
  Verilator, reset; call `finish` when done."""
  opts = _plain_opts( cmdline_opts )
  top = CtrlTestTop( cfg )
  top.elaborate()
  if translating( "rtl", opts ):
    verilator5.name_without_double_underscores( top )
  top = config_model_with_cmdline_opts( top, opts, duts=[] )
  top.apply( DefaultPassGroup( linetrace=False ) )
  top.sim_reset()
  return top


def finish( top ):
  _finalize( top )
