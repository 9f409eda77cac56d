"""A small GPT-2 generated on the appliance of cores built from the stream
units: every level gives the DFX-numerics reference's tokens and final
logits bit for bit, and every timed level gives CL's cycles, step by step
and op class by op class.

Cases (one test body):
  fl       every unit FL (untimed: values only)
  cl       every unit CL (the cycle reference)
  rtl      every unit RTL; under --test-verilog the whole appliance (cores,
           memories, links) is one Verilator model.  pymtl3's Python RTL
           simulation of a whole core runs a few cycles per second, so the
           plain pass skips it.
  mixed    RTL routers and links inside CL cores (Python RTL); under --test-verilog the RTL MPU and VPU, each translated and
           imported alone, inside CL cores.
"""

import functools
import os
import time

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.appliance.host import Host
from pymtl_dfx.compiler.build import compile_model
from pymtl_dfx.config import DFXConfig, GPT2Config
from pymtl_dfx.core.Core import CoreConfigError, resolve_levels
from pymtl_dfx.gpt2 import DFXForward, generate, random_weights
from pymtl_dfx.gpt2.decoding import greedy_token

GPT = GPT2Config( n_layer=2, n_embd=64, n_head=2, vocab_size=128, n_positions=32, name="small" )
PROMPT = [ 5, 17 ]
NEW = 2
# an RTL control unit or weight FIFO next to the CL DMA forms a block-level
# combinational loop in pymtl3's scheduler (rdy -> val through DMACL's one
# port block; the RTL memories likewise), so the Python mixed case uses RTL
# routers and links
MIXED_PY = { "router": "rtl" }
MIXED_VL = { "mpu": "verilog", "vpu": "verilog" }
FULL = bool( os.environ.get( "DFX_CORE_E2E_FULL" ) )


def dfx_config( cores ):
  # d=32 (the DMA's smallest entry), small buffers and 4 HBM channels so the
  # RTL (and its Verilator build) stays small
  return DFXConfig( d=32, l=8, cores=cores, hbm_channels=4, vreg_entries=256,
                    mreg_entries=16, psum_entries=16 )


@functools.lru_cache( maxsize=None )
def compiled( cores ):
  w = random_weights( GPT, 7 ).to_fp16()
  return w, compile_model( w, dfx_config( cores ), cores, max_tokens=len( PROMPT ) + NEW )


@functools.lru_cache( maxsize=None )
def reference( cores ):
  w, _ = compiled( cores )
  ref = DFXForward( w, dfx_config( cores ) )
  ref.reset()
  for k, tok in enumerate( PROMPT ):
    logits = ref.step( tok, logits=( k == len( PROMPT ) - 1 ) )
  tokens = [ greedy_token( logits ) ]
  while len( tokens ) < NEW:
    logits = ref.step( tokens[-1] )
    tokens.append( greedy_token( logits ) )
  assert tokens == generate( DFXForward( w, dfx_config( cores ) ), PROMPT, NEW )
  return tokens, N.bits( logits ).copy()


def run( cores, level, levels=None ):
  _, cm = compiled( cores )
  t0 = time.perf_counter()
  host = Host( cm, level, levels )
  tokens = host.generate( PROMPT, NEW )
  host.seconds = time.perf_counter() - t0
  return tokens, N.bits( host.last_logits ).copy(), host


@functools.lru_cache( maxsize=None )
def cl_run( cores ):
  return run( cores, "cl" )


def _translating( opts ):
  return bool( opts.get( "test_verilog" ) or opts.get( "test_yosys_verilog" ) )


@pytest.mark.parametrize( "cores", [ 1, 2, 4 ] )
@pytest.mark.parametrize( "case", [ "fl", "cl", "rtl", "mixed" ] )
def test_generate_on_cores( case, cores, cmdline_opts ):
  verilog = _translating( cmdline_opts )
  if verilog and case in ( "fl", "cl" ):
    pytest.skip( "fl/cl run in the plain pass; --test-verilog runs rtl and mixed" )
  if case == "rtl" and not verilog:
    pytest.skip( "a whole RTL appliance in pymtl3's Python simulation takes hours: "
                 "run with --test-verilog (one Verilator model)" )
  if ( case == "rtl" or ( case == "mixed" and verilog ) ) and cores > 1 and not FULL:
    pytest.skip( "each core count is its own Verilator build of several minutes: "
                 "set DFX_CORE_E2E_FULL=1 to run 2 and 4 cores" )
  if case == "cl":
    tokens, logits, host = cl_run( cores )
  elif case == "rtl":
    tokens, logits, host = run( cores, "verilog" )
  elif case == "mixed":
    tokens, logits, host = run( cores, "cl", MIXED_VL if verilog else MIXED_PY )
  else:
    tokens, logits, host = run( cores, case )
  want_tokens, want_logits = reference( cores )
  assert tokens == want_tokens
  assert np.array_equal( logits, want_logits ), "final logits differ from the reference"
  r = host.results()
  assert len( r["step_cycles"] ) == len( PROMPT ) + NEW - 1
  for step, ( total, classes ) in enumerate( zip( r["step_cycles"], r["step_classes"] ) ):
    assert sum( classes.values() ) == total, f"step {step}: classes do not sum to the total"
  assert r["stage_cycles"]["summarization"] + r["stage_cycles"]["generation"] == r["cycles"]
  print( f"\n{case} x{cores}: {r['cycles']} cycles, {host.seconds:.1f} s, "
         f"classes {r['class_cycles']}" )
  if case != "fl":
    _, _, cl = cl_run( cores )
    c = cl.results()
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
