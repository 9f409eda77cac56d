"""The wrapped U280 kernel co-simulated end to end: the small GPT-2 on 1
card with the U280's 32 HBM pseudo-channels and on 2 cards of 4 channels
joined by link models (clock crossings, back-pressure bursts) gives the
DFX-numerics reference's tokens and final logits bit for bit, driven
through the kernel's registers as the XRT runtime drives them.

Each case is one Verilator model of `kernel.CardsRTL` (the kernels, their
memories behind AXI slaves, the links), so the cases run in make test's
--test-verilog pass (which records the kernel as Verilated) and skip in the
plain one.  The kernel's cycles differ from CL's
by the AXI adapters' and the program fetch's latencies: both are printed.
"""

import numpy as np
import pytest

from pymtl_dfx.testing.small_gpt2 import NEW, PROMPT, cl_results, reference, run

D = 8              # testing.core_mixing's narrow core: 128-bit memory words
# the small model's variant per card count (`small_gpt2.MODELS`): one card
# as the U280 has it, 32 HBM channels, each an AXI master of its own; the
# ring of 2 on 4 channels a card, so that the larger build is made once
MODEL = { 1: "u280", 2: None }


def verilator_pass( cmdline_opts ):
  if not ( cmdline_opts.get( "test_verilog" ) or cmdline_opts.get( "test_yosys_verilog" ) ):
    pytest.skip( "the co-simulated kernel is a Verilator model: it runs in the --test-verilog pass" )


@pytest.mark.spread
@pytest.mark.parametrize( "cores", [ 1, 2 ] )
def test_kernel_generates_the_reference( cores, cmdline_opts ):
  verilator_pass( cmdline_opts )
  model = MODEL[ cores ]
  tokens, logits, host = run( cores, "kernel", d=D, model=model )
  want_tokens, want_logits = reference( cores, d=D, model=model )
  assert tokens == want_tokens
  assert np.array_equal( logits, want_logits ), "final logits differ from the reference"
  r = host.results()
  assert len( r["step_cycles"] ) == len( PROMPT ) + NEW - 1
  cl = cl_results( cores, d=D, model=model )
  # on one card the kernel adds the AXI round trips and the fetch to CL's
  # core: never faster.  On a ring the co-simulation's link model (Aurora's
  # core latency) is not CL's link (`ring_*` costs, UDP by default).
  if cores == 1:
    for step, ( k, c ) in enumerate( zip( r["step_cycles"], cl["step_cycles"] ) ):
      assert k >= c, f"step {step}: kernel {k} cycles < CL {c}"
  busy = r["unit_busy"]
  assert all( b["dma"] > 0 and b["mpu"] > 0 for b in busy )
  print( f"\nkernel x{cores}: steps {r['step_cycles']} (CL {cl['step_cycles']}), "
         f"build+load {host.build_and_load:.1f} s, total {host.seconds:.1f} s" )


def test_the_kernels_control_protocol( cmdline_opts ):
  """On the co-simulated kernel itself (the same model as the 1-card case,
  32 HBM channels):
  ap_done clears on read, ap_idle after a run, the interrupt through
  GIE/IER/ISR, a start while busy ignored, an AXI error response raising
  its sticky error bit."""
  from pymtl_dfx.levels import backend_for
  from pymtl_dfx.isa import assemble
  from pymtl_dfx.kernel.control import AP_DONE, AP_IDLE, ISR_DONE
  from pymtl_dfx.kernel.cosim import KernelRunError
  from pymtl_dfx.kernel.interface import ERROR_BITS
  from pymtl_dfx.testing.core_mixing import SMALL
  from pymtl_dfx.testing.small_gpt2 import compiled
  verilator_pass( cmdline_opts )
  b = backend_for( compiled( 1, d=D, model=MODEL[1] )[1], "kernel", **SMALL[D][1] )
  ctl, top = b.ctl[0], b.top
  prog = assemble( "ddr_read v0, 0x10, vecs=16\nadd v0, v0, v0, len=16\nddr_write v0, 0x0, vecs=16" )
  alone, _ = b.run_programs( [ prog ], None, 10_000, "the program alone" )
  assert ctl.idle()
  # by hand, as the runtime does, with a second start while the run is busy
  b._write_programs( [ prog ] )
  ctl.set_args( **b.args( 0, len( prog ) ) )
  ctl.start()
  assert not ctl.read_ctrl() & AP_IDLE
  ctl.start()                                   # busy: ignored
  n = 0
  while not int( top.irq[0] ):
    b._tick()
    n += 1
    assert n < 10_000, "no interrupt"
  assert ctl.isr() & ISR_DONE
  first, second = ctl.read_ctrl(), ctl.read_ctrl()
  assert first & AP_DONE and not second & AP_DONE, "ap_done is clear on read"
  assert second & AP_IDLE
  assert ctl.clear_isr() & ISR_DONE and not int( top.irq[0] ) and not ctl.isr()
  for _ in range( 3 * alone ):
    b._tick()
  assert not ctl.read_ctrl() & AP_DONE, "the start while busy ran a second time"
  assert ctl.status()["cycles"] == alone and ctl.status()["errors"] == 0
  # an error response: the sticky bit, the run still ends, and stays raised
  top.fail[0] @= 1
  with pytest.raises( KernelRunError, match="ddr_resp" ):
    b.run_programs( [ prog ], None, 10_000, "a failing run" )
  top.fail[0] @= 0
  with pytest.raises( KernelRunError, match="ddr_resp" ):
    b.run_programs( [ assemble( "add v0, v0, v0, len=1" ) ], None, 10_000, "after the error" )
  assert ctl.status()["errors"] >> ERROR_BITS["ddr_resp"] & 1
