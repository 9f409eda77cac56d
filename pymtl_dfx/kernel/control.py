"""The host's side of `s_axi_control`: THE register protocol of dfx_kernel.

`KernelControl( io, cfg )` drives the registers of `interface.register_map(cfg)`
through any `io` with `read32( offset )` and `write32( offset, value )`: XRT's
register access on a card (the runtime) and `lite_master.LiteMasterSim` on a
simulated kernel (the co-simulation), so both run one protocol:

    ctl.set_args( inst_count=n, inst_addr=a, hbm00=..., ring_pos=0 )
    ctl.start()
    ctl.wait_done( timeout_polls, between=... )
    ctl.status()      # {"cycles": ..., "busy_dma": ..., "errors": ..., ...}

CTRL's ap_done and ap_ready clear when CTRL is read (ControlRegsRTL), so
every read of CTRL here goes through `read_ctrl`, which remembers a done it
saw until the next `start`; `poll_done` can then be asked again without
losing it.  64-bit registers are written lo word then hi word and read the
same way.  Bad names and values raise `KernelArgError` (a ValueError) naming
them; a run that does not finish raises `KernelTimeout` (an OSError).
"""

from .interface import register_map

AP_START, AP_DONE, AP_IDLE, AP_READY, AUTO_RESTART = 1, 2, 4, 8, 0x80
ISR_DONE, ISR_READY = 1, 2


class KernelArgError( ValueError ):
  """A kernel argument the register map does not have, is missing or out of range."""


class KernelTimeout( OSError ):
  """The kernel did not report ap_done within the polls allowed."""


class KernelControl:

  def __init__( s, io, cfg ):
    s.io = io
    s.regs = { r.name: r for r in register_map( cfg ) }
    s.args = [ r for r in s.regs.values() if r.kind == "arg" ]
    s.status_regs = [ r for r in s.regs.values() if r.kind == "status" ]
    s._done = False
    s.last_ctrl = None

  # registers by name --------------------------------------------------------

  def _write( s, reg, value ):
    s.io.write32( reg.offset, value & 0xFFFFFFFF )
    if reg.bits == 64:
      s.io.write32( reg.offset + 4, value >> 32 )

  def _read( s, reg ):
    value = s.io.read32( reg.offset )
    if reg.bits == 64:
      value |= s.io.read32( reg.offset + 4 ) << 32
    return value

  def set_args( s, **values ):
    """Write every argument register (all of them, by name, as ints)."""
    names = { r.name for r in s.args }
    unknown = sorted( set( values ) - names )
    if unknown:
      raise KernelArgError( f"unknown kernel argument {', '.join( unknown )}; "
                            f"the arguments are {', '.join( r.name for r in s.args )}" )
    missing = [ r.name for r in s.args if r.name not in values ]
    if missing:
      raise KernelArgError( f"missing kernel argument {', '.join( missing )}" )
    for r in s.args:
      v = values[ r.name ]
      if isinstance( v, bool ) or not isinstance( v, int ) or not 0 <= v < 1 << r.bits:
        raise KernelArgError( f"kernel argument {r.name} = {v!r} is not an integer "
                              f"in 0 .. 2**{r.bits} - 1" )
    for r in s.args:
      s._write( r, values[ r.name ] )

  def read_args( s ):
    """{name: value} of every argument register as the kernel holds it."""
    return { r.name: s._read( r ) for r in s.args }

  # ap_ctrl_hs -----------------------------------------------------------------

  def read_ctrl( s ):
    """CTRL, read once (which clears ap_done/ap_ready in the kernel); a done
    seen is remembered until the next start."""
    v = s.io.read32( s.regs[ "CTRL" ].offset )
    s.last_ctrl = v
    if v & AP_DONE:
      s._done = True
    return v

  def start( s, auto_restart=False ):
    """Set ap_start (and auto_restart, which any write of CTRL sets or clears)."""
    s._done = False
    s.io.write32( s.regs[ "CTRL" ].offset, AP_START | ( AUTO_RESTART if auto_restart else 0 ) )

  def poll_done( s ):
    """Read CTRL once; True if ap_done was seen since the last start."""
    s.read_ctrl()
    return s._done

  def idle( s ):
    return bool( s.read_ctrl() & AP_IDLE )

  def wait_done( s, timeout_polls, between=None ):
    """Poll CTRL until ap_done, calling `between()` after each poll that did
    not see it (a simulator's clock cycles, a sleep); KernelTimeout after
    `timeout_polls` polls.  Returns the polls taken."""
    for n in range( 1, timeout_polls + 1 ):
      if s.poll_done():
        return n
      if between is not None:
        between()
    raise KernelTimeout( f"kernel did not finish: no ap_done in {timeout_polls} polls of CTRL "
                         f"(last CTRL 0x{s.last_ctrl:x})" )

  # interrupts -----------------------------------------------------------------

  def enable_interrupts( s, done=True, ready=False ):
    """IER as given, and GIE on if either is enabled (off otherwise)."""
    ier = ( ISR_DONE if done else 0 ) | ( ISR_READY if ready else 0 )
    s.io.write32( s.regs[ "IER" ].offset, ier )
    s.io.write32( s.regs[ "GIE" ].offset, 1 if ier else 0 )

  def isr( s ):
    return s.io.read32( s.regs[ "ISR" ].offset )

  def clear_isr( s ):
    """Clear the ISR bits that are set (ISR toggles each bit written as 1);
    returns them."""
    v = s.isr()
    if v:
      s.io.write32( s.regs[ "ISR" ].offset, v )
    return v

  # status ---------------------------------------------------------------------

  def status( s ):
    """{name: value} of every status register."""
    return { r.name: s._read( r ) for r in s.status_regs }
