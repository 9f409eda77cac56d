"""A small GPT-2 generated on the appliance of cores built from the stream
units: every level gives the DFX-numerics reference's tokens and final
logits bit for bit, and every timed level gives CL's cycles, step by step
and op class by op class.

Cases (one test body), at d=32 and, on 1 core at fl, cl and rtl, at d=8
(l=4: a memory word is one 128-bit register entry, `testing.core_mixing.SMALL`):
  fl         every unit FL (untimed: values only)
  cl         every unit CL (the cycle reference)
  rtl        every unit RTL; under --test-verilog the whole appliance (cores,
             memories, links) is one Verilator model.  pymtl3's Python RTL
             simulation of a whole core runs a few cycles per second, so the
             plain pass skips it.
  mixed      RTL routers and links inside CL cores (Python RTL); under
             --test-verilog the RTL MPU and VPU, each translated and
             imported alone, inside CL cores.
  mixed_mpu  (--test-verilog only) the Verilated RTL MPU alone in CL cores
  mixed_vpu  (--test-verilog only) the Verilated RTL VPU, with RTL routers
             and links, in CL cores

`test_attention_narrower_than_residual` runs fl and cl on 1 and 2 cores
for a model whose attention is narrower than its residual (the shape of
gpt2-xl-dfx-1600).

`test_streaming_profile` runs the small model with the profile `streaming`
(every design option past DFX on) at fl and cl on 1 and 4 cores and, under
--test-verilog, as the whole Verilated appliance on 1 and 4 cores: the
DFX-numerics reference at that config, CL's cycles, perf == CL.
`test_compiler_option` runs compiler options alone at fl and cl on 1 and 2
cores against their own DFX-numerics reference: ln_fold=1, ln2_fold=1, the weight
reads moved ahead, and six heads whose pipelined order puts DMA work in
the softmax's wait.

`test_row_split_projections` runs the small model with the c_proj
matrices split by rows (`proj_row_split`) at fl and cl on 1 and 4 cores.

`test_long_context` runs one longer generation on 1 core (cl in the plain
pass, the whole Verilated appliance under --test-verilog): prompt and new
tokens pass d=32 positions, so the attention's score and p V matrices span
two row chunks.

make test runs fl and cl on 1, 2 and 4 cores, mixed on 1 core, and in
Verilator rtl on 1 and 2 cores and mixed on 1 core; the Verilated ring of 4
is `streaming`'s (test_streaming_profile), the one 4-core Verilator build of
make test (build times in docs/measurements.md).  The default's Verilated
ring of 4, the mixed cases on 2 and 4 cores (Verilator builds, or minutes
of Python RTL routers), mixed_mpu, mixed_vpu and the Verilated long context
run with DFX_CORE_E2E_FULL=1.
"""

import os

import numpy as np
import pytest

from pymtl_dfx.appliance.host import emit_step
from pymtl_dfx.compiler.read_ahead import fifo_bound
from pymtl_dfx.config import DESIGN_FIELDS
from pymtl_dfx.core.Core import CoreConfigError, resolve_levels
from pymtl_dfx.testing.perf_check import assert_perf_equals_cl
from pymtl_dfx.testing.small_gpt2 import (NEW, NEW_LONG, PROMPT, PROMPT_LONG, cl_results, cl_run,
                                          compiled, reference, run)

# an RTL control unit or weight FIFO next to the CL DMA forms a block-level
# combinational loop in pymtl3's scheduler (rdy -> val through DMACL's one
# port block; the RTL memories likewise), so the Python mixed case uses RTL
# routers and links
MIXED_PY = { "router": "rtl" }
# case -> unit levels under --test-verilog (each "verilog" unit is its own
# Verilator model inside the CL core)
MIXED_VL = {
  "mixed":     { "mpu": "verilog", "vpu": "verilog" },
  "mixed_mpu": { "mpu": "verilog" },
  "mixed_vpu": { "vpu": "verilog", "router": "rtl" },
}
FULL = bool( os.environ.get( "DFX_CORE_E2E_FULL" ) )

def _translating( opts ):
  return bool( opts.get( "test_verilog" ) or opts.get( "test_yosys_verilog" ) )


@pytest.mark.spread
@pytest.mark.parametrize( "d", [ 32, 8 ] )
@pytest.mark.parametrize( "cores", [ 1, 2, 4 ] )
@pytest.mark.parametrize( "case", [ "fl", "cl", "rtl", "mixed", "mixed_mpu", "mixed_vpu" ] )
def test_generate_on_cores( case, cores, d, cmdline_opts ):
  verilog = _translating( cmdline_opts )
  if d != 32 and ( cores > 1 or case.startswith( "mixed" ) ):
    pytest.skip( "the narrow core (d=8: 128-bit memory words) runs fl, cl and rtl on 1 core; "
                 "the ring and the unit mixes are d=32's cases" )
  if verilog and case in ( "fl", "cl" ):
    pytest.skip( "fl/cl run in the plain pass; --test-verilog runs rtl and mixed" )
  if case == "rtl" and not verilog:
    pytest.skip( "a whole RTL appliance in pymtl3's Python simulation takes hours: "
                 "run with --test-verilog (one Verilator model)" )
  if case in ( "mixed_mpu", "mixed_vpu" ) and not verilog:
    pytest.skip( "an RTL MPU or VPU in pymtl3's Python simulation is slow: "
                 "run with --test-verilog (the unit Verilated alone)" )
  if verilog and case in ( "mixed_mpu", "mixed_vpu" ) and not FULL:
    pytest.skip( "each unit Verilated alone is covered by `mixed` (MPU and VPU together); "
                 "set DFX_CORE_E2E_FULL=1 to run them one at a time" )
  if verilog and case == "rtl" and cores == 4 and not FULL:
    pytest.skip( "the ring of 4 Verilated is test_streaming_profile[rtl-streaming-4] (one "
                 "4-core appliance per make test: the default's took 831 s of C++ cold, "
                 "docs/measurements.md); "
                 "set DFX_CORE_E2E_FULL=1 to Verilate the default's as well" )
  if case == "mixed" and cores > 1 and not FULL:
    pytest.skip( "mixed on 2 and 4 cores (minutes of Python RTL routers, or Verilator "
                 "builds) exceeds make test's budget: set DFX_CORE_E2E_FULL=1" )
  if case == "cl":
    tokens, logits, host = cl_run( cores, d=d )
    # the performance model gives this CL run's cycles exactly
    assert_perf_equals_cl( compiled( cores, d=d )[1], PROMPT, NEW, tokens, host.results() )
  elif case == "rtl":
    tokens, logits, host = run( cores, "verilog", d=d )
  elif case.startswith( "mixed" ):
    tokens, logits, host = run( cores, "cl", MIXED_VL[ case ] if verilog else MIXED_PY )
  else:
    tokens, logits, host = run( cores, case, d=d )
  check( f"{case} d={d}", cores, tokens, logits, host, reference( cores, d=d ),
         None if case == "fl" else cl_results( cores, d=d ), len( PROMPT ) + NEW - 1 )


# the ring position as each core's input (`Core(..., runtime_id=True)`, as
# the FPGA kernel has it; the appliance ties core i's to i): one core module
# for every position, the same tokens, logit bits and cycles as the cores
# built for their positions (2 cores: a 4-core CL run takes minutes; the
# RTL router ring and the RTL manager check positions 0..3 and 0..2)
@pytest.mark.parametrize( "cores", [ 2 ] )
def test_runtime_ring_positions( cores ):
  if not FULL:
    pytest.skip( "a second 2-core CL generation (~40 s) exceeds make test's budget: "
                 "set DFX_CORE_E2E_FULL=1" )
  from pymtl_dfx.levels import backend_for
  _, cm = compiled( cores )
  host = Host( cm, backend=backend_for( cm, "cl", runtime_id=True, **SMALL[32][1] ) )
  assert all( c.runtime_id for c in host.backend.top.dut.cores )
  tokens = host.generate( PROMPT, NEW )
  want_tokens, want_logits, want = cl_run( cores )
  assert tokens == want_tokens
  assert np.array_equal( N.bits( host.last_logits ), want_logits )
  assert host.results()["cycles"] == want.results()["cycles"]
  assert host.results()["step_cycles"] == want.results()["step_cycles"]


@pytest.mark.spread
@pytest.mark.parametrize( "case", [ "cl", "rtl" ] )
def test_long_context( case, cmdline_opts ):
  verilog = _translating( cmdline_opts )
  if verilog != ( case == "rtl" ):
    pytest.skip( "cl runs in the plain pass, rtl (the Verilated appliance) under --test-verilog" )
  if verilog and not FULL:
    pytest.skip( "the Verilated long run needs the CL long run (minutes) as its cycle "
                 "reference: set DFX_CORE_E2E_FULL=1 (the cl case checks values every pass)" )
  _, cm = compiled( 1, long=True )
  assert cm.layout["max_tokens"] > cm.dfx.d    # the attention spans two row chunks
  tokens, logits, host = run( 1, "verilog" if verilog else "cl", long=True )
  cl = cl_results( 1, long=True ) if verilog else None
  check( f"{case} long", 1, tokens, logits, host, reference( 1, long=True ), cl,
         len( PROMPT_LONG ) + NEW_LONG - 1 )


# gpt2-xl-dfx-1600's shape in small (`small_gpt2.GPT_ATTN`): the attention
# (2 heads of 32) narrower than the 96-wide residual, whose columns pad to
# 64 per core on 2 cores; untimed and timed, bit for bit, perf == CL
@pytest.mark.parametrize( "cores", [ 1, 2 ] )
@pytest.mark.parametrize( "case", [ "fl", "cl" ] )
def test_attention_narrower_than_residual( case, cores, cmdline_opts ):
  if _translating( cmdline_opts ):
    pytest.skip( "fl/cl run in the plain pass" )
  _, cm = compiled( cores, model="attn" )
  mats = cm.layout["hbm"]["matrices"]
  assert ( mats["h0.c_attn"]["cols"], mats["h0.attn_proj"]["rows"] ) == ( 3 * 64 // cores, 64 )
  assert cm.layout["padding"]["attn_proj"]["padded"] == ( 96, 128 )[ cores - 1 ]
  if case == "cl":
    tokens, logits, host = cl_run( cores, model="attn" )
    assert_perf_equals_cl( cm, PROMPT, NEW, tokens, host.results() )
  else:
    tokens, logits, host = run( cores, case, model="attn" )
  check( f"{case} attn64", cores, tokens, logits, host, reference( cores, model="attn" ),
         None if case == "fl" else cl_results( cores, model="attn" ), len( PROMPT ) + NEW - 1 )


# the profiles `streaming` (every design option of `config.DESIGN_FIELDS`
# but the read-ahead on) and `streaming-wide` (with it, l=32 and a deep
# weight FIFO): the DFX-numerics reference at that config gives the tokens
# and logit bits at fl, cl and, for `streaming` under --test-verilog, the
# whole Verilated appliance, with CL's cycles; perf == CL
@pytest.mark.spread
@pytest.mark.parametrize( "cores", [ 1, 4 ] )
@pytest.mark.parametrize( "case, profile", [ ( "fl", "streaming" ), ( "cl", "streaming" ),
                                             ( "rtl", "streaming" ), ( "fl", "streaming-wide" ),
                                             ( "cl", "streaming-wide" ) ] )
def test_streaming_profile( case, profile, cores, cmdline_opts ):
  verilog = _translating( cmdline_opts )
  if verilog != ( case == "rtl" ):
    pytest.skip( "fl/cl run in the plain pass, rtl (the Verilated appliance) under --test-verilog" )
  _, cm = compiled( cores, model=profile )
  assert any( getattr( cm.dfx, k ) != getattr( compiled( cores )[1].dfx, k )
              for k in DESIGN_FIELDS ), "the profile turns no design option on"
  if case == "cl":
    tokens, logits, host = cl_run( cores, model=profile )
    assert_perf_equals_cl( cm, PROMPT, NEW, tokens, host.results() )
  else:
    tokens, logits, host = run( cores, "verilog" if case == "rtl" else case, model=profile )
  check( f"{case} {profile}", cores, tokens, logits, host, reference( cores, model=profile ),
         None if case == "fl" else cl_results( cores, model=profile ), len( PROMPT ) + NEW - 1 )


# the c_proj matrices split by rows (`proj_row_split`): on 2 cores the
# reference's row-split numerics (which are not the column split's), CL's
# cycles, perf == CL; on 1 core the default's program and numerics (4 cores
# run in test_streaming_profile)
@pytest.mark.parametrize( "cores", [ 1, 2 ] )
@pytest.mark.parametrize( "case", [ "fl", "cl" ] )
def test_row_split_projections( case, cores, cmdline_opts ):
  if _translating( cmdline_opts ):
    pytest.skip( "fl/cl run in the plain pass" )
  _, cm = compiled( cores, model="rowsplit" )
  assert cm.dfx.proj_row_split == 1
  want = reference( cores, model="rowsplit" )
  assert np.array_equal( want[1], reference( cores )[1] ) == ( cores == 1 )
  if case == "cl":
    tokens, logits, host = cl_run( cores, model="rowsplit" )
    assert_perf_equals_cl( cm, PROMPT, NEW, tokens, host.results() )
  else:
    tokens, logits, host = run( cores, case, model="rowsplit" )
  check( f"{case} rowsplit", cores, tokens, logits, host, want,
         None if case == "fl" else cl_results( cores, model="rowsplit" ), len( PROMPT ) + NEW - 1 )


def test_interleaved_reductions():
  """reduce_partials=4 on 1 core at d=8 (LayerNorm's reductions over 8
  chunks): the CL appliance gives the tokens and final logits of the
  DFX-numerics reference in that order (which are not DFX's order's), and
  the performance model gives its cycles."""
  tokens, logits, host = run( 1, "cl", d=8, model="partials" )
  want = reference( 1, d=8, model="partials" )
  check( "cl partials=4 d=8", 1, tokens, logits, host, want, None, len( PROMPT ) + NEW - 1 )
  assert not np.array_equal( want[1], reference( 1, d=8 )[1] ), "the order changed no logit"
  assert_perf_equals_cl( compiled( 1, d=8, model="partials" )[1], PROMPT, NEW, tokens,
                         host.results() )


# compiler options on 1 and 2 cores (4 cores run in test_streaming_profile):
# (model, do its numerics differ from the default's): ln_1 folded into
# c_attn and ln_2 into c_fc (numerics variants); the weight reads moved ahead with l=32 and a
# 64-tile FIFO; six heads under `streaming`, whose pipelined heads put head
# j + 2's DMA work in softmax(j)'s wait (the program needs the FIFO to hold
# a head's V, `read_ahead.fifo_bound`)
OPTION_MODELS = [ ( "lnfold", True ), ( "ln2fold", True ), ( "read_ahead", False ),
                  ( "heads", False ) ]


@pytest.mark.parametrize( "cores", [ 1, 2 ] )
@pytest.mark.parametrize( "case", [ "fl", "cl" ] )
@pytest.mark.parametrize( "model, new_numerics", OPTION_MODELS )
def test_compiler_option( model, new_numerics, case, cores, cmdline_opts ):
  """fl and cl give the tokens and final logits of the DFX-numerics
  reference at the model's config, cl with the performance model's
  cycles."""
  if _translating( cmdline_opts ):
    pytest.skip( "fl/cl run in the plain pass" )
  _, cm = compiled( cores, model=model )
  if model == "heads":
    progs, _ = emit_step( cm, cm.emitter(), PROMPT[0], len( PROMPT ), True )
    assert fifo_bound( progs[0], cm.dfx.l ) > 0, "the heads' DMA work is not in the wait"
  if case == "cl":
    tokens, logits, host = cl_run( cores, model=model )
    assert_perf_equals_cl( cm, PROMPT, NEW, tokens, host.results() )
  else:
    tokens, logits, host = run( cores, case, model=model )
  want = reference( cores, model=model )
  check( f"{case} {model}", cores, tokens, logits, host, want,
         None if case == "fl" else cl_results( cores, model=model ), len( PROMPT ) + NEW - 1 )
  if new_numerics:
    assert not np.array_equal( want[1], reference( cores )[1] ), "the option changed no logit"


def check( case, cores, tokens, logits, host, want, cl, steps ):
  """Tokens and final logits equal the reference; the cycles are consistent
  and, when `cl` (a CL run's `results()`) is given, equal CL's."""
  want_tokens, want_logits = want
  assert tokens == want_tokens
  assert np.array_equal( logits, want_logits ), "final logits differ from the reference"
  r = host.results()
  assert len( r["step_cycles"] ) == steps
  for step, ( total, classes ) in enumerate( zip( r["step_cycles"], r["step_classes"] ) ):
    assert sum( classes.values() ) == total, f"step {step}: classes do not sum to the total"
  assert r["stage_cycles"]["summarization"] + r["stage_cycles"]["generation"] == r["cycles"]
  print( f"\n{case} x{cores}: {r['cycles']} cycles (+{r['load_cycles']} load), "
         f"build+load {host.build_and_load:.1f} s, total {host.seconds:.1f} s, "
         f"steps {r['step_cycles']}, classes {r['class_cycles']}" )
  if cl is not None:
    c = cl
    assert r["step_cycles"] == c["step_cycles"]
    assert r["step_classes"] == c["step_classes"]
    assert r["unit_busy"] == c["unit_busy"]
    assert r["load_cycles"] == c["load_cycles"]


def test_levels_are_checked():
  with pytest.raises( CoreConfigError, match="mpux" ):
    resolve_levels( { "mpux": "rtl" } )
  with pytest.raises( CoreConfigError, match="vpu='gate'" ):
    resolve_levels( { "vpu": "gate" } )
  with pytest.raises( CoreConfigError, match="unknown level 'x'" ):
    resolve_levels( level="x" )
  assert resolve_levels( { "mpu": "rtl" } )["wfifo"] == "cl"
  assert resolve_levels( { "mpu": "rtl", "dma": "rtl" } )["wfifo"] == "rtl"
