"""An AXI4-Lite master over a simulated component's flat ports.

`LiteMasterSim( model, prefix, tick )` gives `read32( offset )` and
`write32( offset, value, strb=0xF )` (the `io` of `control.KernelControl`)
on a component whose AXI4-Lite slave is on flat ports `PREFIX_awvalid`,
`PREFIX_awready`, ... (the names `axi.flat_ports` declares, which are also
the names on a model pymtl3 imported from Verilator, so one driver serves
both).  It holds the master's signals itself: each cycle it sets them,
evaluates the combinational logic (`model.sim_eval_combinational`, so the
slave's readies answer this cycle's valids), samples the handshakes and
calls `tick()` (one clock edge of the simulator).

A write drives AW and W in the same cycle, or, with `w_first=True`, W one
cycle before AW (a slave must take both orders); BREADY and RREADY are held
high.  A transaction that does not complete in `max_cycles` cycles raises
`LiteTimeout` naming the channel it waits on; a response other than OKAY
raises `LiteResponseError`.  Both are OSErrors: the bus, not the caller's
input, failed.
"""

from .axi import AXI4_LITE, LITE_DATA_BITS, RESP_OKAY, M, widths

RESP_NAMES = { 0: "OKAY", 1: "EXOKAY", 2: "SLVERR", 3: "DECERR" }


class LiteTimeout( OSError ):
  """An AXI4-Lite handshake did not complete in the cycles allowed."""


class LiteResponseError( OSError ):
  """The slave answered with SLVERR or DECERR."""


class LiteMasterSim:

  def __init__( s, model, prefix, tick, w_first=False, max_cycles=64, settle=None ):
    s.model = model
    s.prefix = prefix
    s.tick = tick
    s.w_first = w_first
    s.max_cycles = max_cycles
    s.cycles = 0                 # clock cycles this master has spent
    s.last_write = None          # (AW, W, B) handshake cycles of the last write, from its first
    # settle: re-evaluates the model's combinational logic after an input
    # changed (default: pymtl3's sim_eval_combinational).  A top with Python
    # drivers (the co-simulation's) has none; without it the master reads
    # the slave's outputs as of the last tick, exact for a slave whose
    # ready and valid come from registers, as ControlRegsRTL's do
    s._eval = settle or getattr( model, "sim_eval_combinational", lambda: None )
    table = widths( AXI4_LITE, addr_bits=1, data_bits=LITE_DATA_BITS )
    missing = [ n for n in table if not hasattr( model, f"{prefix}_{n}" ) ]
    if missing:
      raise ValueError( f"{type( model ).__name__} has no AXI4-Lite port "
                        f"{prefix}_{missing[ 0 ]} (a flat `{prefix}` slave)" )
    for name, ( bits, by_master ) in table.items():
      if by_master == M:
        s._set( name, 0 )
    s._set( "bready", 1 )
    s._set( "rready", 1 )

  def _port( s, name ):
    return getattr( s.model, f"{s.prefix}_{name}" )

  def _set( s, name, value ):
    port = s._port( name )
    port @= value

  def _get( s, name ):
    return int( s._port( name ) )

  def _cycle( s ):
    s.tick()
    s.cycles += 1

  def _check( s, what, offset, resp ):
    if resp != RESP_OKAY:
      raise LiteResponseError( f"AXI4-Lite {what} of 0x{offset:x} on {s.prefix}: "
                               f"{RESP_NAMES[ resp ]} response" )

  def write32( s, offset, value, strb=0xF ):
    s._set( "awaddr", offset )
    s._set( "wdata", value & 0xFFFFFFFF )
    s._set( "wstrb", strb )
    aw_done = w_done = False
    at = [ None, None, None ]
    s._set( "wvalid", 1 )
    s._set( "awvalid", 0 if s.w_first else 1 )
    for n in range( s.max_cycles ):
      if n == 1:
        s._set( "awvalid", 0 if aw_done else 1 )
      s._eval()
      aw_hs = s._get( "awvalid" ) and s._get( "awready" )
      w_hs = s._get( "wvalid" ) and s._get( "wready" )
      b_hs = aw_done and w_done and s._get( "bvalid" )
      resp = s._get( "bresp" )
      s._cycle()
      if aw_hs:
        aw_done, at[ 0 ] = True, n
        s._set( "awvalid", 0 )
      if w_hs:
        w_done, at[ 1 ] = True, n
        s._set( "wvalid", 0 )
      if b_hs:
        at[ 2 ] = n
        s.last_write = tuple( at )
        s._eval()
        s._check( "write", offset, resp )
        return
    s._set( "awvalid", 0 )
    s._set( "wvalid", 0 )
    wait = "AWREADY" if not aw_done else "WREADY" if not w_done else "BVALID"
    raise LiteTimeout( f"AXI4-Lite write of 0x{offset:x} on {s.prefix}: no {wait} "
                       f"in {s.max_cycles} cycles" )

  def read32( s, offset ):
    s._set( "araddr", offset )
    s._set( "arvalid", 1 )
    ar_done = False
    for _ in range( s.max_cycles ):
      s._eval()
      ar_hs = s._get( "arvalid" ) and s._get( "arready" )
      r_hs = ar_done and s._get( "rvalid" )
      data, resp = s._get( "rdata" ), s._get( "rresp" )
      s._cycle()
      if ar_hs:
        ar_done = True
        s._set( "arvalid", 0 )
      if r_hs:
        s._eval()
        s._check( "read", offset, resp )
        return data
    s._set( "arvalid", 0 )
    wait = "RVALID" if ar_done else "ARREADY"
    raise LiteTimeout( f"AXI4-Lite read of 0x{offset:x} on {s.prefix}: no {wait} "
                       f"in {s.max_cycles} cycles" )
