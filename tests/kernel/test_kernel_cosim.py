"""The wrapped U280 kernel co-simulated end to end: the small GPT-2 on 1
card and on 2 cards joined by link models (clock crossings, back-pressure
bursts) gives the DFX-numerics reference's tokens and final logits bit for
bit, driven through the kernel's registers as the XRT runtime drives them.

Each case is one Verilator model of `kernel.CardsRTL` (the kernels, their
memories behind AXI slaves, the links), built whatever the pass; it runs in
the plain pass only (pymtl3's plugin skips it under --test-verilog, which
has nothing more to translate here).  The kernel's cycles differ from CL's
by the AXI adapters' and the program fetch's latencies: both are printed.
"""

import numpy as np
import pytest

from pymtl_dfx.testing.small_gpt2 import NEW, PROMPT, cl_run, reference, run

D = 8              # testing.core_mixing's narrow core: 128-bit memory words


@pytest.mark.spread
@pytest.mark.parametrize( "cores", [ 1, 2 ] )
def test_kernel_generates_the_reference( cores ):
  tokens, logits, host = run( cores, "kernel", d=D )
  want_tokens, want_logits = reference( cores, d=D )
  assert tokens == want_tokens
  assert np.array_equal( logits, want_logits ), "final logits differ from the reference"
  r = host.results()
  assert len( r["step_cycles"] ) == len( PROMPT ) + NEW - 1
  cl = cl_run( cores, d=D )[2].results()
  # the kernel adds the AXI round trips and the fetch to CL's core: never faster
  for step, ( k, c ) in enumerate( zip( r["step_cycles"], cl["step_cycles"] ) ):
    assert k >= c, f"step {step}: kernel {k} cycles < CL {c}"
  busy = r["unit_busy"]
  assert all( b["dma"] > 0 and b["mpu"] > 0 for b in busy )
  print( f"\nkernel x{cores}: steps {r['step_cycles']} (CL {cl['step_cycles']}), "
         f"build+load {host.build_and_load:.1f} s, total {host.seconds:.1f} s" )
