"""A core at any mix of unit levels, built and run briefly (tests/core/test_core_mixing.py).

`elaborate_core(levels)`: the core elaborated and scheduled (pymtl3 raises
at `DefaultPassGroup` when blocks form a loop it cannot schedule).

`run_layer(levels)`: one core of the small model of tests/core/test_core_e2e.py
(the same GPT-2 config, seed and DFX config) runs the first decoder layer of
its first step: the step's program up to and including the layer's second
residual add, then a `ddr_write` of the residual stream to the logits
region.  The images are loaded and the results read back through the
memories' host ports, so the run is the same at every level; it returns the
cycles of the program, the HBM words the layer wrote (the K/V cache), the
DDR words of the residual, and the register file when the manager is FL or
CL (Python state).
"""

import functools

import numpy as np
from pymtl3 import DefaultPassGroup

from ..compiler.build import compile_model
from ..config import DFXConfig, GPT2Config
from ..core.Core import Core, prepare_sim, resolve_levels
from ..gpt2 import random_weights
from ..isa import assemble, encode
from ..isa.asm import format_inst
from ..lib.arith import ceil_div
from ..units.control.msgs import InstMsg
from ..units.memory.msgs import write_requests

GPT = GPT2Config( n_layer=2, n_embd=64, n_head=2, vocab_size=128, n_positions=32, name="small" )
TOKEN = 5
MAX_TOKENS = 4
F16 = np.float16


# The small appliances, by d: (DFXConfig fields besides d, the memories' rows
# per channel).  d=32 has the widest memory word (512 bits) and runs every
# test_core_e2e case and the random programs: one Verilator model for all
# of them.  d=8, l=4 is a narrow core: a memory word is one register entry
# (128 bits), so the images take 4x the words (4x the HBM rows), and the x
# buffer holds 256 rows in entries of 8 (mreg_entries=64).  Its DDR is 4
# ports of one 128-bit word a cycle (12.8 GB/s at 200 MHz) as d=32's is 4
# ports of 512 bits: the default 33 GB/s would take 16 narrow ports, and
# each port is logic the Verilator model evaluates every cycle.
SMALL = {
  32: ( dict( l=8, mreg_entries=16 ), dict( hbm_depth=1024, ddr_depth=128 ) ),
  8:  ( dict( l=4, mreg_entries=64, ddr_gbps=12.8 ), dict( hbm_depth=4096, ddr_depth=512 ) ),
}
DEPTHS = SMALL[32][1]


def dfx_config( cores=1, d=32 ):
  """A small appliance's config (test_core_e2e, the random programs): small
  buffers and 4 HBM channels so the RTL and its Verilator build stay small."""
  return DFXConfig( d=d, cores=cores, hbm_channels=4, vreg_entries=256, psum_entries=16,
                    **SMALL[d][0] )


@functools.lru_cache( maxsize=None )
def compiled( cores=1 ):
  w = random_weights( GPT, 7 ).to_fp16()
  return compile_model( w, dfx_config( cores ), cores, max_tokens=MAX_TOKENS )


def elaborate_core( levels=None, level=None, cfg=None, hbm_depth=64, ddr_depth=64 ):
  """A one-core Core at these levels, elaborated and scheduled."""
  cfg = cfg or dfx_config( 1 )
  core = Core( cfg, 0, 1, levels=levels, level=level, hbm_depth=hbm_depth, ddr_depth=ddr_depth )
  core.elaborate()
  core.apply( DefaultPassGroup( linetrace=False ) )
  return core


@functools.lru_cache( maxsize=None )
def layer_program():
  """(instructions, what they leave in DDR: (addr, words)): the first layer
  of core 0's first step and a ddr_write of the residual stream."""
  cm = compiled( 1 )
  prog, cls = cm.emitter().step( 0, TOKEN, 0, True )
  res = [ i for i, c in enumerate( cls ) if c == "residual" ]
  prog = list( prog[ :res[1] + 1 ] )
  resid = int( prog[-1].dst )
  n = GPT.n_embd // cm.dfx.d
  addr = cm.layout["ddr"]["regions"]["logits"]
  prog += assemble( f"ddr_write v{resid}, {addr}, vecs={n}" )
  return prog, ( addr, n * cm.dfx.entry_words )


def _depth( words, channels ):
  rows = max( 2, ceil_div( words, channels ) )
  return 1 << ( rows - 1 ).bit_length()


def run_layer( levels=None, max_cycles=200_000, timing=None ):
  """Run `layer_program` on one core at `levels` (unnamed units CL, the
  weight FIFO by `resolve_levels`' default); returns a dict: cycles, hbm
  (the words from the layer's first hbm_write to the image's end), ddr
  (the residual's words), rf (the register file, or None at RTL).
  timing: DFXConfig fields the core is built with besides the compiled
  model's, ones that change no program nor layout (e.g.
  done_latency_cycles)."""
  from ..appliance.drivers import HostTop     # the host's port drivers
  from ..units.dma.msgs import mk_dma_types
  cm = compiled( 1 )
  cfg = cm.dfx.replace( **timing ) if timing else cm.dfx
  hbm_img, ddr_img = cm.images[0]
  T = mk_dma_types( cfg )
  depth = { "hbm": _depth( hbm_img.shape[0], T["hbm"].channels ),
            "ddr": _depth( ddr_img.shape[0], T["ddr"].channels ) }
  resolve_levels( levels )                   # names a bad unit or level
  top = HostTop( cfg, 1, levels, depth["hbm"], depth["ddr"], None )
  top = prepare_sim( top )
  top.sim_reset()
  prog, ( ddr_addr, ddr_words ) = layer_program()

  def tick_until( cond, what ):
    for k in range( max_cycles ):
      if cond():
        return k
      top.sim_tick()
    raise AssertionError( f"{what}: not done in {max_cycles} cycles at {levels}; "
                          f"{top.dut.cores[0].line_trace()}" )

  # load both images through the host ports
  for port, img in ( ( top.hbm[0], hbm_img ), ( top.ddr[0], ddr_img ) ):
    port.q.extend( write_requests( port.Req, img ) )
  tick_until( lambda: len( top.hbm[0].got ) >= hbm_img.shape[0] and
                      len( top.ddr[0].got ) >= ddr_img.shape[0], "loading the images" )

  # the program, counted as the host counts a step: from the first word
  # offered until the core is idle and every word taken
  top.src[0].push( InstMsg( encode( inst ) ) for inst in prog )
  dut = top.dut

  def done():
    return int( dut.idle[0] ) and not top.src[0].q
  cycles = 0
  while True:
    top.sim_tick()
    cycles += 1
    if done():
      break
    if cycles >= max_cycles:
      raise AssertionError( f"the layer did not finish in {max_cycles} cycles at {levels}; "
                            f"{dut.cores[0].line_trace()}" )

  def read( port, lo, n ):
    port.got.clear()
    port.q.extend( port.Req( 0, lo + k, 0, 0 ) for k in range( n ) )
    tick_until( lambda: len( port.got ) >= n, "reading back" )
    return np.array( port.got, dtype=object )

  hbm_lo = _first_hbm_write( prog )
  core = dut.cores[0]
  rf = core.rfm.rf.mem.copy() if hasattr( core.rfm, "rf" ) else None
  return dict( cycles=cycles, hbm=read( top.hbm[0], hbm_lo, hbm_img.shape[0] - hbm_lo ),
               ddr=read( top.ddr[0], ddr_addr, ddr_words ), rf=rf, levels=levels )


def _first_hbm_write( prog ):
  return min( int( i.addr ) for i in prog if format_inst( i ).startswith( "hbm_write" ) )
