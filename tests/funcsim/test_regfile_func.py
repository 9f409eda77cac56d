"""The functional register file (RegisterFileFunc): whole-entry writes pad with +0, element writes do not, bounds."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.config import DFXConfig
from pymtl_dfx.funcsim.RegisterFileFunc import RegisterFileFunc
from pymtl_dfx.units.regfile.state import RegisterFileError

# the instruction-level functional units (pymtl_dfx.funcsim): untimed, one level
pytestmark = pytest.mark.no_verilog


def test_entries_and_elements():
  Manager = RegisterFileFunc
  manager = Manager( DFXConfig( vreg_entries=16, d=32 ) )
  manager.elaborate()
  rf = manager.rf
  rf.mem[:] = np.float16( 7 )
  rf.write( 2, np.arange( 40, dtype=np.float16 ) )            # 2 entries, 24 lanes of +0
  assert np.array_equal( rf.read( 2, 40 ), np.arange( 40, dtype=np.float16 ) )
  assert not N.bits( rf.read_entries( 2, 2 ).reshape( -1 )[ 40: ] ).any()
  assert rf.read( 4, 1 )[0] == 7                               # next entry untouched
  rf.write_elements( 4, 5, np.ones( 3, np.float16 ) )
  assert list( rf.read( 4, 9 ) ) == [ 7 ] * 5 + [ 1 ] * 3 + [ 7 ]
  with pytest.raises( RegisterFileError, match="write of 40 elements at v15 runs past" ):
    rf.write( 15, np.zeros( 40, np.float16 ) )
  with pytest.raises( RegisterFileError, match="read of 33 elements at v15" ):
    rf.read( 15, 33 )
