"""One DFX compute core built from the stream units, any unit at any level.

    inst -> ctrl.issue[DMA]    -> dma.inst      dma.done    -> ctrl.done[DMA]
            ctrl.issue[MPU]    -> rfm.mpu_inst  rfm.mpu_done -> ctrl.done[MPU]
            ctrl.issue[VPU]    -> rfm.vpu_inst  rfm.vpu_done -> ctrl.done[VPU]
            ctrl.issue[ROUTER] -> rfm.router_inst          router.done -> ctrl.done[ROUTER]
    dma <-> rfm (rf_wr, rf_rd, rf_rd_resp);  dma.w -> weight FIFO -> mpu.w
    rfm <-> mpu (cmd, x, bias, out), rfm <-> vpu (cmd, a, b, out)
    rfm.router_cmd / router_rd -> router -> rfm.router_wr
    dma.hbm_* / ddr_* <-> the core's HBM and DDR memories
    ring_send / ring_recv: the router's ring ports

These channels are declared once, in `netlist.py` (`NETLIST`); `Core`
joins them from there, and perf's core takes their handshakes from there.

`levels` maps a unit (`UNIT_NAMES`) to "fl", "cl", "rtl" or "verilog"
(the RTL unit translated and imported on its own as a Verilator model when
the simulation is prepared with `prepare_sim`).  Units not named take
`level` (default "cl").  The weight FIFO ("wfifo") is a unit too: by
default RTL when both its neighbours (DMA and MPU) are RTL, unbounded (FL)
under an FL control unit (which issues a matrix instruction only after its
weight read has completed), else CL.

The core's own ports: `inst` (programs enter the control unit's buffer
here), `ring_send` / `ring_recv`, `{hbm,ddr}_host_req` / `_resp` (the
memories' host ports: images are loaded and logits read back through them;
with `memories=False`, the FPGA build's core, the DMA's channel ports
`{hbm,ddr}_req[c]` / `_resp[c]` instead, for the AXI masters to the U280's
memory IP),
`idle` (the control unit has nothing buffered or in flight), and two
4-bit status ports, `issued` and `retired`: bit u is unit u's issue / done
handshake in this cycle (units as `control.msgs.UNITS`), so the host can
attribute cycles to instructions from the core's boundary at every level,
a Verilated core included.

The ring position: the router and the register file manager read it from
their `core_id` input (`units/router/ports.py`) and are built without it,
so their modules are the same for every core.  By default the core ties
those inputs to its constant `core_id`; with `runtime_id=True` the core
has an 8-bit input `core_id` instead (the FPGA kernel's, one image for
every card of a ring: the `core_id` argument is then not used and may be
None, which makes one Core module for every core; `cores` stays an
elaboration parameter).
"""

from pymtl3 import *
from pymtl3.passes.backends.verilog import VerilogPlaceholderPass, VerilogTranslationImportPass
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from ..lib.fifo import FifoCL, FifoRTL
from ..hdl import verilator5
from ..hdl.wide_ports import FieldRecvIfcRTL, FieldSendIfcRTL, WidePortsRTL, fields_of
from .netlist import EACH, MEMORIES, NETLIST, ends
from ..units.control.models import MODELS as CONTROL_MODELS
from ..units.control.msgs import UNITS
from ..units.control.msgs import InstMsg
from ..units.dma.models import MODELS as DMA_MODELS
from ..units.dma.msgs import mk_dma_types
from ..units.memory.models import MODELS as MEMORY_MODELS
from ..units.memory.msgs import memory_spec
from ..units.memory.ports import mk_host_types
from ..units.mpu.models import MODELS as MPU_MODELS
from ..units.regfile.models import MODELS as REGFILE_MODELS
from ..units.router.models import MODELS as ROUTER_MODELS
from ..units.router.msgs import mk_ring_packet
from ..units.router.ports import CoreIdT
from ..units.vpu.models import MODELS as VPU_MODELS

CORE_LEVELS = ( "fl", "cl", "rtl", "verilog" )
UNIT_NAMES = ( "ctrl", "dma", "rfm", "mpu", "vpu", "router", "wfifo", "hbm", "ddr" )


class CoreConfigError( ValueError ):
  pass


def _clone( msg ):
  return msg.clone()   # the net's value object is reused next cycle


class WeightFifoCL( Component ):
  """FifoRTL's rule (enq.rdy while not full, deq.val while not empty, one
  cycle from enq to deq) on Python values, as a component; entries=None is
  unbounded (FL)."""

  def construct( s, Type, entries ):
    s.enq = RecvIfcRTL( Type )
    s.deq = SendIfcRTL( Type )
    s.q = FifoCL( float( "inf" ) if entries is None else entries )

    @update_once
    def up_wfifo_cl_ports():
      s.enq.rdy @= s.q.enq_rdy()
      s.deq.val @= s.q.deq_val()
      if s.q.deq_val():
        s.deq.msg @= s.q.head()

    @update_ff
    def up_wfifo_cl_state():
      if s.reset:
        s.q.q.clear()
        return
      s.q.tick( _clone( s.enq.msg ) if s.enq.val & s.enq.rdy else None,
                s.deq.val & s.deq.rdy )

  def line_trace( s ):
    return f"{len( s.q )}"


def _by_level( models, make ):
  """A unit's builder: its class at a level from the unit's `MODELS`."""
  return lambda level, cfg, **kw: make( models[ level ], cfg, **kw )


BUILDERS = {
  "ctrl":   _by_level( CONTROL_MODELS, lambda M, cfg, **_: M( cfg ) ),
  "dma":    _by_level( DMA_MODELS, lambda M, cfg, **_: M( cfg ) ),
  # built without the position (None): they read it from their core_id port
  "rfm":    _by_level( REGFILE_MODELS, lambda M, cfg, cores, **_: M( cfg, None, cores ) ),
  "mpu":    _by_level( MPU_MODELS, lambda M, cfg, **_: M( cfg ) ),
  "vpu":    _by_level( VPU_MODELS, lambda M, cfg, **_: M( cfg.d, cfg ) ),
  "router": _by_level( ROUTER_MODELS, lambda M, cfg, cores, **_: M( cfg, None, cores ) ),
  # FL: unbounded, as the FL control unit's sequential meaning needs (an
  # `hbm_read mpu` completes before its matrix instruction issues, so the
  # whole matrix waits in the FIFO); CL and RTL: cfg.weight_fifo_entries
  "wfifo":  lambda level, cfg, W, **_: WeightFifoCL( W, None ) if level == "fl" else
            ( WeightFifoCL if level == "cl" else FifoRTL )( W, weight_fifo_entries( cfg ) ),
  "hbm":    _by_level( MEMORY_MODELS,
                       lambda M, cfg, hbm_depth, **_: M( memory_spec( cfg, "hbm" ), hbm_depth ) ),
  "ddr":    _by_level( MEMORY_MODELS,
                       lambda M, cfg, ddr_depth, **_: M( memory_spec( cfg, "ddr" ), ddr_depth ) ),
}


def weight_fifo_entries( cfg ):
  return cfg.weight_fifo_entries


def resolve_levels( levels=None, level=None ):
  """unit -> level for every unit of a core; raises CoreConfigError naming
  an unknown unit or level."""
  base = "cl" if level is None else level
  if base not in CORE_LEVELS:
    raise CoreConfigError( f"core: unknown level {base!r} (levels: {', '.join( CORE_LEVELS )})" )
  levels = dict( levels or {} )
  bad = [ f"{u!r}" for u in levels if u not in UNIT_NAMES ]
  bad += [ f"{u}={v!r}" for u, v in levels.items() if u in UNIT_NAMES and v not in CORE_LEVELS ]
  if bad:
    raise CoreConfigError( f"core: bad unit level(s) {', '.join( bad )} (units: "
                           f"{', '.join( UNIT_NAMES )}; levels: {', '.join( CORE_LEVELS )})" )
  out = { u: levels.get( u, base ) for u in UNIT_NAMES }
  if "wfifo" not in levels and level is None:
    hw = ( "rtl", "verilog" )
    out["wfifo"] = "rtl" if out["dma"] in hw and out["mpu"] in hw else \
                   "fl" if out["ctrl"] == "fl" else "cl"
  return out


def _is_field( ifc ):
  return isinstance( ifc, ( FieldRecvIfcRTL, FieldSendIfcRTL ) )


def join( a, b ):
  """Connect two stream interfaces; either may be a field group (a port of
  a unit wrapped for Verilog import, `WidePortsRTL`)."""
  if not _is_field( a ) and not _is_field( b ):
    connect( a, b )
    return
  group = a if _is_field( a ) else b
  for name, _, n in fields_of( group.Type ):
    x = getattr( a, name ) if _is_field( a ) else getattr( a.msg, name )
    y = getattr( b, name ) if _is_field( b ) else getattr( b.msg, name )
    for i in range( n or 1 ):
      connect( x[i] if n else x, y[i] if n else y )
  connect( a.val, b.val )
  connect( a.rdy, b.rdy )


class Core( Component ):

  def construct( s, cfg, core_id, cores, levels=None, hbm_depth=1024, ddr_depth=256,
                 level=None, memories=True, runtime_id=False ):
    if cfg.cores != cores:
      raise CoreConfigError( f"core: cfg.cores={cfg.cores} but the appliance has {cores} "
                             f"cores (the scoreboard's sync footprint uses cfg.cores)" )
    if not runtime_id and not 0 <= core_id < cores:
      raise CoreConfigError( f"core: core {core_id} of {cores} (0..{cores - 1})" )
    s.levels = resolve_levels( levels, level )
    s.runtime_id = runtime_id
    T = mk_dma_types( cfg )
    Packet = mk_ring_packet( cfg )
    s.imported = []            # units to translate and import on their own
    kw = dict( cores=cores, hbm_depth=hbm_depth, ddr_depth=ddr_depth, W=T["W"] )
    # memories=False: the FPGA build's core, whose HBM/DDR channels are ports
    # (AXI masters to the memory IP on the U280); the tests' memories inside
    # the core are simulation models
    units = UNIT_NAMES if memories else tuple( u for u in UNIT_NAMES if u not in MEMORIES )
    for u in units:
      lv = s.levels[ u ]
      unit = BUILDERS[ u ]( "rtl" if lv == "verilog" else lv, cfg, **kw )
      if lv == "verilog":
        unit = WidePortsRTL( unit )
        s.imported.append( unit )
      setattr( s, u, unit )

    # the core's boundary
    s.inst = RecvIfcRTL( InstMsg )
    s.ring_send = SendIfcRTL( Packet )
    s.ring_recv = RecvIfcRTL( Packet )
    for m in MEMORIES:
      if memories:
        H = mk_host_types( T[m] )
        setattr( s, f"{m}_host_req", RecvIfcRTL( H["Req"] ) )
        setattr( s, f"{m}_host_resp", SendIfcRTL( H["Resp"] ) )
      else:
        setattr( s, f"{m}_req", [ SendIfcRTL( T[m].types["Req"] ) for _ in range( T[m].channels ) ] )
        setattr( s, f"{m}_resp", [ RecvIfcRTL( T[m].types["Resp"] ) for _ in range( T[m].channels ) ] )
    s.idle = OutPort()
    s.issued = OutPort( len( UNITS ) )
    s.retired = OutPort( len( UNITS ) )
    # the ring position the netlist hands to the router and the manager
    if runtime_id:
      s.core_id = InPort( CoreIdT )
    else:
      s.core_id = Wire( CoreIdT )
      s.core_id //= CoreIdT( core_id )

    # every unit-to-unit channel and the boundary's, from the one declaration
    for ch in NETLIST:
      at = ends( ch, memories )
      if at is None:
        continue
      src, dst = at
      mem = next( ( e[0] for e in ( ch.src, ch.dst ) if e[0] in MEMORIES ), None )
      for c in range( T[mem].channels if EACH in src + dst else 1 ):
        join( s._port( src, c ), s._port( dst, c ) )

    NU = len( UNITS )

    @update
    def up_core_status():
      for u in range( NU ):
        s.issued[u] @= s.ctrl.issue[u].val & s.ctrl.issue[u].rdy
        s.retired[u] @= s.ctrl.done[u].val & s.ctrl.done[u].rdy

  def _port( s, end, c ):
    """The port at a netlist channel's end; `c`: the memory channel (EACH)."""
    unit, name, *index = end
    port = getattr( s if unit == "core" else getattr( s, unit ), name )
    for i in index:
      port = port[ c if i == EACH else i ]
    return port

  def line_trace( s ):
    return f"{s.ctrl.line_trace()} {s.router.line_trace()}"


def imported_units( top ):
  """Every unit wrapped for Verilog import below `top`."""
  out = list( getattr( top, "imported", [] ) )
  for child in top.get_child_components():
    out += imported_units( child )
  return out


def prepare_sim( top, translate=(), linetrace=False, wave=None ):
  """Elaborate `top`, translate and import every unit at level "verilog"
  and the children of `top` named in `translate` (e.g. "dut": a whole RTL
  core or appliance) as Verilator models, apply the simulation passes;
  returns the top to run.  `wave` (`appliance.waves.VerilatorVcd`): the
  `translate` models are built with Verilator's VCD, under their own
  module names (`_vcd`), so a traced build leaves the untraced one cached."""
  verilator5.apply()
  top.elaborate()
  translate = [ getattr( top, name ) for name in translate ]
  chosen = translate + [ u for u in imported_units( top )
                                 if not any( _inside( u, t ) for t in translate ) ]
  names = []
  for comp in chosen:
    traced = wave is not None and comp in translate
    names.append( verilator5.name_without_double_underscores( comp, "_vcd" if traced else "" ) )
    verilator5.record_waivers( comp, names[-1] )
    comp.set_metadata( VerilogTranslationImportPass.enable, True )
    if traced:
      for key, value in wave.import_options().items():
        comp.set_metadata( key, value )
  if chosen:
    # one build per model for all pytest-xdist workers, and none in the
    # user's current directory (verilator5.shared_build)
    with verilator5.shared_build( names ):
      top.apply( VerilogPlaceholderPass() )
      top = VerilogTranslationImportPass()( top )
  top.apply( DefaultPassGroup( linetrace=linetrace ) )
  return top


def _inside( comp, outer ):
  p = comp
  while p is not None:
    if p is outer:
      return True
    p = p.get_parent_object() if hasattr( p, "get_parent_object" ) else None
  return False
