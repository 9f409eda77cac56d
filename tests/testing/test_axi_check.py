"""The AXI4 protocol checker fails on a valid dropped before ready and on a
payload changed while valid & !ready, on every channel, and passes a legal
hold, counting the handshakes."""

import pytest

from pymtl3 import *

from pymtl_dfx.testing.axi_check import CHANNELS, AxiCheckRTL, AxiProtocolError, payload_signals


def checker():
  chk = AxiCheckRTL( 64, 128, "bus" )
  chk.elaborate()
  chk.apply( DefaultPassGroup() )
  chk.sim_reset()
  return chk


def offer( chk, ch, valid, ready, value ):
  for n, v in [ ( ch + "valid", valid ), ( ch + "ready", ready ) ] + \
              [ ( n, value ) for n in payload_signals( ch ) ]:
    port = getattr( chk, n )
    port @= v & ( ( 1 << port.nbits ) - 1 )
  chk.sim_tick()


@pytest.mark.parametrize( "ch", CHANNELS )
def test_legal_hold_passes( ch ):
  chk = checker()
  offer( chk, ch, 1, 0, 5 )
  offer( chk, ch, 1, 0, 5 )
  offer( chk, ch, 1, 1, 5 )       # taken
  offer( chk, ch, 1, 1, 6 )       # a new beat may follow at once
  offer( chk, ch, 0, 0, 7 )
  assert chk.beats[ ch ] == 2


@pytest.mark.parametrize( "ch", CHANNELS )
def test_valid_dropped_fails( ch ):
  chk = checker()
  offer( chk, ch, 1, 0, 5 )
  with pytest.raises( AxiProtocolError, match=f"{ch}valid dropped" ):
    offer( chk, ch, 0, 0, 5 )


@pytest.mark.parametrize( "ch", CHANNELS )
def test_payload_changed_fails( ch ):
  chk = checker()
  offer( chk, ch, 1, 0, 5 )
  with pytest.raises( AxiProtocolError, match=f"{ch} payload changed" ):
    offer( chk, ch, 1, 0, 4 )
