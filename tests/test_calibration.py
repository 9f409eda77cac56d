"""The calibrated profile's parameters (`pymtl_dfx.calibration`): each one a
DFXConfig field with no effect at its default and a range that gives valid
configs; the chord fit `reports/calibrate_dfx.py` runs recovers known
parameters of a synthetic, mildly nonlinear model from slightly wrong
slopes, keeps an integer parameter integral, and clips a value the target
would push out of its range (saying so in its history); the written fit,
when there is one, is what the profile `calibrated` sets on top of
`paper`."""

import numpy as np
import pytest

from pymtl_dfx import calibration, profiles
from pymtl_dfx.config import CALIBRATION_FIELDS, DFXConfig

P = calibration.PARAMS


def test_every_parameter_is_a_field_whose_default_is_the_identity():
  d = DFXConfig()
  assert tuple( p.field for p in P ) == CALIBRATION_FIELDS
  assert calibration.identity() == { "hbm_stream_efficiency": 1.0, "ring_hop_overhead_ns": 0.0,
                                     "done_latency_cycles": 0 }
  for p in P:
    assert p.low <= getattr( d, p.field ) <= p.high, p.field
    for v in ( p.low, p.high ):
      DFXConfig( **{ p.field: int( v ) if p.integer else float( v ) } )    # valid
    assert p.meaning and p.why_range and p.unit and p.step


TRUE = { "hbm_stream_efficiency": 0.62, "ring_hop_overhead_ns": 2400.0, "done_latency_cycles": 11 }
# ms per unit of each parameter, on 1, 2 and 4 cards
J_TRUE = np.array( [ [ -900.0, 0.0, 2.0 ], [ -500.0, 0.05, 1.1 ], [ -300.0, 0.12, 0.7 ] ] )
BASE = np.array( [ 400.0, 240.0, 170.0 ] )


def _vec( v ):
  return np.array( [ v[ p.field ] - calibration.identity()[ p.field ] for p in P ] )


def synthetic( v ):
  """Linear in the parameters plus a mild curvature in the efficiency."""
  x = _vec( v )
  return BASE + J_TRUE @ x + 40.0 * x[0] ** 2


def test_chord_fit_recovers_known_parameters():
  target = synthetic( TRUE )
  J = J_TRUE * np.array( [ 1.1, 0.93, 1.05 ] )     # slopes measured a little off
  values, ms, hist = calibration.chord_fit( synthetic, J, target, calibration.identity(),
                                            iterations=8, tol=0.05, log=lambda s: None )
  assert isinstance( values["done_latency_cycles"], int )
  assert values["done_latency_cycles"] == 11
  assert values["hbm_stream_efficiency"] == pytest.approx( 0.62, abs=0.01 )
  assert values["ring_hop_overhead_ns"] == pytest.approx( 2400, rel=0.05 )
  assert np.all( np.abs( 100 * ( ms - target ) / target ) <= 0.05 )
  assert 1 < len( hist ) <= 8


def test_chord_fit_clips_to_the_range_and_records_the_unclipped_value():
  target = synthetic( dict( TRUE, hbm_stream_efficiency=0.1 ) )     # below 0.36
  values, _, hist = calibration.chord_fit( synthetic, J_TRUE, target, calibration.identity(),
                                           iterations=2, tol=0.05, log=lambda s: None )
  assert values["hbm_stream_efficiency"] == P[0].low
  assert hist[0]["unclipped"]["hbm_stream_efficiency"] < P[0].low


def test_the_calibrated_profile_is_paper_with_the_fit():
  rec = calibration.fitted()
  if rec is None:
    assert "calibrated" not in profiles.PROFILES
    return
  cal = profiles.values( "calibrated" )
  assert cal == dict( profiles.values( "paper" ), **rec["values"] )
  for q in rec["params"]:
    p = next( p for p in P if p.field == q["field"] )
    assert ( q["low"], q["high"] ) == ( p.low, p.high )
    assert p.low <= q["value"] <= p.high
    assert q["at_edge"] == ( q["value"] in ( p.low, p.high ) )
    assert rec["values"][ p.field ] == q["value"]


def test_the_docs_state_every_parameter_and_its_range():
  import pathlib
  doc = ( pathlib.Path( __file__ ).resolve().parents[1] / "docs" / "perf.md" ).read_text()
  section = doc.split( "## Calibration", 1 )[1].split( "\n## ", 1 )[0]
  rows = { l.split( " | " )[0].strip( "| `" ): [ c.strip() for c in l.strip( "|" ).split( " | " ) ]
           for l in section.splitlines() if l.startswith( "| `" ) }
  assert set( rows ) == set( CALIBRATION_FIELDS )
  for p in P:
    assert rows[ p.field ][1:] == [ p.meaning, p.unit, f"{p.low:g}..{p.high:g}", p.why_range ]


def test_a_parameter_the_data_does_not_want_stays_at_its_identity_edge():
  """A target only the integer parameter explains, with noise that an
  unconstrained solve answers with an efficiency above 1 or a negative
  hop overhead: the active set keeps both at their edges and fits the
  rest."""
  start = calibration.identity()
  target = synthetic( dict( start, done_latency_cycles=20 ) ) + np.array( [ -3.0, -2.0, -1.5 ] )
  values, _, hist = calibration.chord_fit( synthetic, J_TRUE, target, start, iterations=4,
                                           tol=0.01, log=lambda s: None )
  for p in P:
    assert p.low <= values[ p.field ] <= p.high
  un = hist[0]["unclipped"]
  assert un["hbm_stream_efficiency"] > 1 or un["ring_hop_overhead_ns"] < 0
  assert abs( values["done_latency_cycles"] - 20 ) <= 3
