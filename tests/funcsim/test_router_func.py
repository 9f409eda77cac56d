"""The functional router (RouterFunc): the ring all-gather on 2, 3 and 4 cores."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.isa import RouterOp, encode, make
from pymtl_dfx.testing import run_stream_test
from pymtl_dfx.units.control.msgs import DoneMsg, InstMsg
from pymtl_dfx.units.regfile.state import VectorRegisterFile
from pymtl_dfx.funcsim.RouterFunc import RouterFunc
from pymtl_dfx.testing.funcsim_ring import Ring

# the instruction-level functional units (pymtl_dfx.funcsim): untimed, one level
pytestmark = pytest.mark.no_verilog

F16 = np.float16


@pytest.mark.parametrize( "cores", [ 1, 2, 3, 4 ] )
@pytest.mark.parametrize( "seg", [ 1, 64, 100, 256 ] )
def test_all_gather( cores, seg, cmdline_opts ):
  cfg = DFXConfig( d=64, l=16 )
  Router = RouterFunc
  rng = np.random.default_rng( cores * 1000 + seg )
  rfs = [ VectorRegisterFile( 64, cfg.d ) for _ in range( cores ) ]
  base, base2 = 2, 30
  parts = [ rng.standard_normal( seg ).astype( F16 ) for _ in range( cores ) ]
  parts2 = [ rng.standard_normal( seg ).astype( F16 ) for _ in range( cores ) ]
  for i, rf in enumerate( rfs ):
    rf.write_elements( base, i * seg, parts[i] )
    rf.write_elements( base2, i * seg, parts2[i] )
  # two syncs back to back: the second one's packets may overtake a slow core
  insts = [ InstMsg( encode( make( RouterOp.SYNC, rf=b, len=seg ) ) ) for b in ( base, base2 ) ]
  r = run_stream_test( Ring( Router, cfg, rfs ),
                       sources={ f"recv{i}": ( InstMsg, insts ) for i in range( cores ) },
                       sinks={ f"send{i}": ( DoneMsg, [ DoneMsg( 1 ) ] * 2 ) for i in range( cores ) },
                       level="fl", cmdline_opts=cmdline_opts, max_delay=3, seed=seg )
  for rf in rfs:
    assert np.array_equal( N.bits( rf.read( base, cores * seg ) ), N.bits( np.concatenate( parts ) ) )
    assert np.array_equal( N.bits( rf.read( base2, cores * seg ) ), N.bits( np.concatenate( parts2 ) ) )
  assert len( r.arrivals["send0"] ) == 2
