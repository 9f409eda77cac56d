"""The kernel co-simulation as a backend: `dfx generate --level kernel`.

`KernelBackend` runs a compiled model on `CardsRTL` (the kernels, their
memories behind AXI slaves, the ring's link models) as one Verilator
model.  The host does what the XRT runtime does on cards
(`xrt_runtime`), through the same register protocol
(`control.KernelControl`), over an AXI4-Lite master in the simulation
(`lite_master.LiteMasterSim`) instead of PCIe:

  load      the images into every card's HBM and DDR through the memories'
            host ports (XRT: buffer writes and syncs);
  per step  each card's program into its program memory, then per card
            the arguments (instruction count and address, every buffer's
            base, its ring position) and ap_start; wait for every card's
            interrupt (ap_done through GIE/IER/ISR), read CTRL (ap_done
            clears on read), clear ISR, read the status registers;
  read      the logits from DDR through the host port.

A step's cycles are the slowest card's `cycles` register (ap_start to
ap_done) and its busy cycles per unit come from the `busy_*` registers:
what a card reports, so the level has no per-instruction attribution.
A sticky error bit after a run is an error naming the bits.
"""

from pymtl3 import *

from ..appliance.attribution import step_record
from ..appliance.backend import StreamBackend, prepare_probed
from ..appliance.drivers import HostMemPort
from ..appliance.liveness import StepTimeout, cycle_limit
from ..isa import encode
from ..units.control.msgs import UNITS
from ..units.dma.msgs import mk_dma_types
from ..units.memory.msgs import all_elems
from ..units.memory.ports import mk_host_types
from .axi import AXI4_LITE, widths
from .CardsRTL import CardsRTL, buffer_bases, inst_spec
from .control import KernelControl
from .interface import CTRL_ADDR_BITS, ERROR_BITS
from .lite_master import LiteMasterSim

INST_WORDS = 4096          # instructions a card's program memory holds


class KernelRunError( RuntimeError ):
  pass


class KernelHostTop( Component ):
  """CardsRTL with the host's drivers: one per memory host port, and flat
  AXI4-Lite ports per card for `LiteMasterSim`."""

  def construct( s, cfg, hbm_depth, ddr_depth, inst_depth, link=None ):
    n = cfg.cores
    s.dut = CardsRTL( cfg, hbm_depth, ddr_depth, inst_depth, link )
    T = mk_dma_types( cfg )
    specs = { "hbm": T["hbm"], "ddr": T["ddr"], "inst": inst_spec( cfg, inst_depth ) }
    for m, spec in specs.items():
      ports = [ HostMemPort( mk_host_types( spec ) ) for _ in range( n ) ]
      setattr( s, m, ports )
      for i, p in enumerate( ports ):
        p.req //= getattr( s.dut, f"{m}_host_req" )[i]
        getattr( s.dut, f"{m}_host_resp" )[i] //= p.resp
    s.irq = [ OutPort() for _ in range( n ) ]
    s.fail = [ InPort() for _ in range( n ) ]
    lite = widths( AXI4_LITE, addr_bits=CTRL_ADDR_BITS, data_bits=32 )
    for i in range( n ):
      s.irq[i] //= s.dut.irq[i]
      s.fail[i] //= s.dut.fail[i]
      for sig, ( bits, by_master ) in lite.items():
        port = InPort( bits ) if by_master else OutPort( bits )
        setattr( s, f"ctl{i}_{sig}", port )
        connect( port, getattr( s.dut, f"ctl{i}_{sig}" ) )

  def line_trace( s ):
    return s.dut.line_trace()


class KernelBackend( StreamBackend ):
  """`cfg.cores` co-simulated cards (see the module's docstring)."""

  level = "kernel"

  def __init__( s, cfg, cores, hbm_depth, ddr_depth, line_trace=False, max_cycles=None,
                inst_words=INST_WORDS, link=None, probe=None ):
    import time
    s.cfg, s.cores, s.max_cycles, s.line_trace = cfg, cores, max_cycles, line_trace
    T = mk_dma_types( cfg )
    s.specs = { m: T[m] for m in ( "hbm", "ddr" ) }
    s.depth = { "hbm": hbm_depth, "ddr": ddr_depth }
    s.inst_words = inst_words
    s.inst_strb = all_elems( inst_spec( cfg, inst_words ).word_elems )
    t0 = time.perf_counter()
    s.probe = probe           # a wave is Verilator's, as at the verilog level
    s.top = prepare_probed( KernelHostTop( cfg, hbm_depth, ddr_depth, inst_words, link ), True,
                            line_trace, probe, "kernel" )
    s.build_seconds = time.perf_counter() - t0
    s.fast = None
    s.top.sim_reset()
    s.cycle = 0
    s.step_starts = []
    s.load_cycles = s.readback_cycles = s.program_cycles = s.control_cycles = 0
    s.bases = buffer_bases( cfg )
    s.ctl = [ KernelControl( LiteMasterSim( s.top, f"ctl{i}", s._tick, settle=lambda: None ), cfg )
              for i in range( cores ) ]
    for c in s.ctl:
      c.enable_interrupts( done=True )
    s.last_status = None

  def _tick( s ):
    s.tick()
    s.control_cycles += 1

  def _direct( s ):
    return False          # the memories are Verilog: always through the host ports

  def reset( s ):
    raise NotImplementedError( "a co-simulated card is reset by rebuilding the backend" )

  def args( s, i, n_inst ):
    """The arguments of card i's run (register names of interface.register_map)."""
    values = dict( inst_count=n_inst, inst_addr=s.bases["m_axi_inst"], ring_pos=i )
    for bus, base in s.bases.items():
      if bus != "m_axi_inst":
        values[ bus[ len( "m_axi_" ): ] ] = base
    return values

  def _write_programs( s, progs ):
    want = []
    for port, prog in zip( s.top.inst, progs ):
      if len( prog ) > s.inst_words:
        raise KernelRunError( f"a program of {len( prog )} instructions does not fit the "
                              f"{s.inst_words} of a card's program memory" )
      port.got.clear()
      port.q.extend( port.Req( 1, a, s.inst_strb, int( encode( inst ) ) )
                     for a, inst in enumerate( prog ) )
      want.append( ( port, len( prog ) ) )
    s.program_cycles += s.tick_until( lambda: all( len( p.got ) >= n for p, n in want ),
                                      100 * max( n for _, n in want ) + 1000,
                                      "writing the programs" )

  def run_programs( s, progs, classes, limit, what ):
    s._write_programs( progs )
    for i, ( c, prog ) in enumerate( zip( s.ctl, progs ) ):
      c.set_args( **s.args( i, len( prog ) ) )
    for c in s.ctl:
      c.start()
    n = 0
    while not all( int( s.top.irq[i] ) for i in range( s.cores ) ):
      if n >= limit:
        raise StepTimeout( f"{what}: no ap_done from card(s) "
                           f"{[ i for i in range( s.cores ) if not int( s.top.irq[i] ) ]} "
                           f"in {limit} cycles" )
      s._tick()
      n += 1
    status = []
    for i, c in enumerate( s.ctl ):
      if not c.poll_done():
        raise KernelRunError( f"{what}: card {i} interrupted without ap_done" )
      c.clear_isr()
      st = c.status()
      if st["errors"]:
        bits = [ name for name, b in ERROR_BITS.items() if st["errors"] >> b & 1 ]
        raise KernelRunError( f"{what}: card {i} raised error bit(s) {', '.join( bits )}" )
      status.append( st )
    s.last_status = status
    return max( st["cycles"] for st in status ), status

  def step( s, progs, classes, at ):
    s.step_starts.append( s.cycle )
    for i, prog in enumerate( progs ):
      s.check_program( i, prog )
    limit = s.max_cycles or 2 * cycle_limit( s.cfg, s.specs, progs )
    k, status = s.run_programs( progs, classes, limit, f"step at position {at[1]}" )
    rec = step_record( s.cfg, k, None )
    rec["busy"] = [ { u: st[ f"busy_{u}" ] for u in UNITS } for st in status ]
    return rec
