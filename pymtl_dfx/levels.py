"""Every level a compiled model runs at, by name, and the backend of each.

The appliance builds its own levels (`appliance.backend.APPLIANCE_LEVELS`:
func, fl, cl, rtl, verilog); the data-free timing model (perf) and the
wrapped U280 kernel (kernel: co-simulated; fpga: cards through XRT) are
built above it, so the one place that knows all of them sits above all
three.  `host_for` is `appliance.host.Host` over the backend of a level.
"""

from .appliance.backend import APPLIANCE_LEVELS, appliance_backend, loaded, memory_depths
from .appliance.host import Host

# kernel: the wrapped U280 kernel co-simulated (`kernel.cosim`); fpga: U280
# cards through XRT (`kernel.xrt_runtime`, needs the kernel's xclbin)
LEVELS = APPLIANCE_LEVELS + ( "kernel", "fpga" )
# the levels whose cycles are the hardware's (func and fl count cycles of
# untimed models)
TIMED_LEVELS = ( "cl", "rtl", "verilog", "kernel" )


def backend_for( compiled, level, levels=None, max_cycles=None, hbm_depth=None, ddr_depth=None,
                 line_trace=False, fold=True, runtime_id=False, xclbin=None, probe=None ):
  """The backend of `level` (LEVELS, or "perf") for a compiled model (or a
  `perf.Planned` one: no memory images, so not func), memory depths by
  default the smallest that hold the images or the layout, the images
  loaded; `probe` (`waves.Probe`, a stream level or the kernel): its wave
  and line trace."""
  if level not in LEVELS + ( "perf", ):
    raise ValueError( f"level {level!r} is not a level (have: {', '.join( LEVELS )}, perf)" )
  if probe is not None and level in ( "perf", "fpga" ):
    raise ValueError( f"a wave or line trace needs a simulated level (fl, cl, rtl, verilog, "
                      f"kernel), not {level}" )
  if level == "perf":
    from .perf.backend import PerfBackend
    return PerfBackend( compiled.dfx, compiled.cores, compiled, fold )
  if level == "fpga":
    if getattr( compiled, "images", None ) is None or levels:
      raise ValueError( "the fpga level runs a compiled model's images on U280 cards, every "
                        "unit the kernel's RTL" )
    if xclbin is None:
      raise ValueError( "the fpga level needs the kernel's xclbin (`dfx fpga`'s build)" )
    from .kernel.xrt_runtime import XrtBackend
    return XrtBackend( compiled, xclbin, max_cycles )
  if level == "kernel":
    if levels:
      raise ValueError( "per-unit levels need a stream level (fl, cl, rtl, verilog): the "
                        "kernel is RTL throughout" )
    depth = memory_depths( compiled, hbm_depth, ddr_depth )
    from .kernel.cosim import KernelBackend
    return loaded( KernelBackend( compiled.dfx, compiled.cores, depth["hbm"], depth["ddr"],
                                  line_trace, max_cycles, probe=probe ), compiled )
  return appliance_backend( compiled, level, levels, max_cycles, hbm_depth, ddr_depth, line_trace,
                            runtime_id, probe )


def host_for( compiled, level="func", levels=None, max_cycles_per_step=None, hbm_depth=None,
              ddr_depth=None, line_trace=False, xclbin=None, probe=None ):
  """`Host` (the generation loop) over the backend of `level` (LEVELS)."""
  if level not in LEVELS:     # perf has no host level of its own: `perf.run`
    raise ValueError( f"level {level!r} is not a host level (have: {', '.join( LEVELS )})" )
  return Host( compiled, backend=backend_for( compiled, level, levels, max_cycles_per_step,
                                              hbm_depth, ddr_depth, line_trace, xclbin=xclbin,
                                              probe=probe ) )
