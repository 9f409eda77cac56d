"""Control unit: each instruction goes to its unit, in program order, one at a time."""

import numpy as np
import pytest
from pymtl3 import *
from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL

from pymtl_dfx.isa import assemble, encode
from pymtl_dfx.testing import run_stream_test, select_or_skip
from pymtl_dfx.units.control.ControlUnitFL import UNITS, ControlUnitFL, unit_of
from pymtl_dfx.units.control.decode_cache import decoded
from pymtl_dfx.units.control.msgs import DoneMsg, InstMsg

PROGRAM = """
ddr_read  v0, 0, vecs=2
hbm_read  mpu, 0x40, vecs=16
conv1d    v8, v0, rows=64 cols=16 bias=v4
add       v12, v8, v8, len=16
sync      v12, len=8
exp       v12, v12, len=16
mm        v20, v12, rows=16 cols=16
ddr_write v20, 100, vecs=1
"""


class ControlWithPorts( Component ):
  """Exposes the control unit's per-unit ports under plain names."""

  def construct( s, Ctrl, words ):
    s.ctrl = Ctrl()
    s.ctrl.load( words )
    for i, u in enumerate( UNITS ):
      setattr( s, f"issue_{u}", SendIfcRTL( InstMsg ) )
      setattr( s, f"done_{u}", RecvIfcRTL( DoneMsg ) )
      connect( s.ctrl.issue[i], getattr( s, f"issue_{u}" ) )
      connect( getattr( s, f"done_{u}" ), s.ctrl.done[i] )

  def line_trace( s ):
    return s.ctrl.line_trace()


def test_issue_order_and_routing( level, cmdline_opts ):
  Ctrl = select_or_skip( level, fl=ControlUnitFL )
  words = [ encode( i ) for i in assemble( PROGRAM ) ]
  per_unit = { u: [] for u in UNITS }
  for w in words:
    _, op, kind = decoded( w )
    per_unit[ UNITS[ unit_of( op, kind ) ] ].append( InstMsg( w ) )
  dut = ControlWithPorts( Ctrl, words )
  r = run_stream_test(
    dut,
    sources={ f"done_{u}": ( DoneMsg, [ DoneMsg( 1 ) ] * len( per_unit[u] ) ) for u in UNITS },
    sinks={ f"issue_{u}": ( InstMsg, per_unit[u] ) for u in UNITS },
    level=level, cmdline_opts=cmdline_opts, max_delay=3, seed=2 )
  # one at a time: every issue happens after the previous instruction's issue,
  # and the units' arrival stamps interleave in program order
  stamps = sorted( ( t, u ) for u in UNITS for t in r.arrivals[ f"issue_{u}" ] )
  assert [ u for _, u in stamps ] == [ UNITS[ unit_of( *decoded( w )[1:] ) ] for w in words ]
  assert len( { t for t, _ in stamps } ) == len( words )
  assert dut.ctrl.idle()
