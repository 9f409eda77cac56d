"""The functional (instruction-level) core runs an assembled program: control,
DMA, MPU, VPU and register file together.  The stream core at fl/cl/rtl runs
whole GPT-2 steps in test_core_e2e.py."""

import numpy as np
from pymtl3 import DefaultPassGroup

from pymtl_dfx import numerics as N
from pymtl_dfx.lib.tiling import to_grid
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.funcsim.CoreFunc import CoreFunc
from pymtl_dfx.isa import assemble, encode

F16 = np.float16

PROGRAM = """
ddr_read  v0, 0, vecs=2            # x: 40 elements (2 entries of 32)
ddr_read  v4, 4, vecs=1            # bias: 24 elements
hbm_read  mpu, 0, vecs={wvecs} rows=40
conv1d    v8, v0, rows=40 cols=24 bias=v4 post=gelu
redmax    v12, v8, len=24
sub       v16, v8, v12, len=24 bcast
exp       v16, v16, len=24
accum     v13, v16, len=24
recip     v13, v13, len=1
mul       v16, v16, v13, len=24 bcast
ddr_write v16, 100, vecs=1
sync      v20, len=8               # one core: a no-op
"""


def test_program_on_the_functional_core():
  cfg = DFXConfig( d=32, l=8 )
  rng = np.random.default_rng( 3 )
  x = rng.standard_normal( 40 ).astype( F16 )
  b = rng.standard_normal( 24 ).astype( F16 )
  w = rng.standard_normal( ( 40, 24 ) ).astype( F16 )
  hbm = np.zeros( ( 256, 32 ), F16 )
  ddr = np.zeros( ( 256, 32 ), F16 )
  ddr[ 0:2 ] = np.concatenate( [ x, np.zeros( 24, F16 ) ] ).reshape( 2, 32 )
  ddr[ 4, :24 ] = b
  stream = to_grid( w, cfg.d, cfg.l )      # the DMA walks the grid in tile order
  hbm[ :stream.size // 32 ] = stream.reshape( -1, 32 )
  prog = assemble( PROGRAM.format( wvecs=stream.shape[0] ) )

  core = CoreFunc( cfg, 0, 1, hbm, ddr, readonly_hbm_words=256 )
  core.elaborate()
  core.apply( DefaultPassGroup( linetrace=False ) )
  core.sim_reset()
  core.ctrl.load( [ encode( i ) for i in prog ] )
  for _ in range( 500 ):
    if core.ctrl.is_idle():
      break
    core.sim_tick()
  assert core.ctrl.is_idle(), core.line_trace()

  y = N.gelu( N.add( N.matvec( x, w, cfg.d ), b ) )
  want = N.softmax( y, cfg.d )
  assert np.array_equal( N.bits( ddr[ 100, :24 ] ), N.bits( want ) )
  assert not N.bits( ddr[ 100, 24: ] ).any()
