"""The calibrated profile's parameters: what each one means, the range it
may take (stated before any fit), and the values `reports/calibrate_dfx.py`
fitted, read from `calibration.json` beside this file (the script writes
it; the profile `calibrated` is the `paper` profile with these values).

Each parameter is one mechanism the sourced costs do not give, a
`DFXConfig` field (`config.CALIBRATION_FIELDS`) whose default has no
effect.  The fit uses the three GPT-2 345M 64:64 points (1, 2 and 4 cards)
only; the 1.5B latencies and breakdown shares are held out (`dfx report`
shows both).
"""

import json
import os
from dataclasses import dataclass

from .config import CALIBRATION_FIELDS, ConfigError

FITTED_FILE = os.path.join( os.path.dirname( __file__ ), "calibration.json" )


@dataclass( frozen=True )
class Param:
  field: str
  meaning: str
  unit: str
  low: float                # the plausible range, stated before the fit
  high: float
  why_range: str
  step: float               # the perturbation its slope is measured with
  integer: bool = False


PARAMS = (
  Param( "hbm_stream_efficiency",
         "the share of a pseudo-channel's rate it keeps with all 32 streaming at once",
         "fraction", 0.36, 1.0,
         "from random 64 B reads of one pseudo-channel (4.75 of 13.1 GB/s, Vitis-Tutorials "
         "04-using-hbm) to none lost", -0.1 ),
  Param( "ring_hop_overhead_ns",
         "what a ring hop costs beyond its link's latency: handshakes, the routers' "
         "store-and-forward, the cards' skew",
         "ns", 0.0, 10000.0,
         "from nothing to about 8x the 4-card ring's wire time (DFX's implied ~25 us of "
         "sync per 1.5B layer, /work/shared/paper/u280-costs.md)", 1000.0 ),
  Param( "done_latency_cycles",
         "cycles from a unit's completion to the controller's release of its scoreboard "
         "entry (status seen through the scheduler)",
         "cycles", 0, 256,
         "up to twice the paper core's deepest pipeline (the MPU's 130 cycles: lane, "
         "accumulator, post-ops); revised from 0..64 after the first fit ended at that edge "
         "with every fitted point 23-36 % off (calibration.json, previous_fits)", 8,
         integer=True ),
)

assert tuple( p.field for p in PARAMS ) == CALIBRATION_FIELDS


def fitted():
  """The fitted record ({values, ...}) or None when no fit was written."""
  if not os.path.exists( FITTED_FILE ):
    return None
  with open( FITTED_FILE ) as f:
    rec = json.load( f )
  values = rec.get( "values", {} )
  if set( values ) - set( CALIBRATION_FIELDS ):
    raise ConfigError( f"{FITTED_FILE}: fits unknown fields "
                       f"{sorted( set( values ) - set( CALIBRATION_FIELDS ) )}" )
  return rec


def in_range( p, value ):
  return p.low <= value <= p.high


def identity():
  """Every parameter at its no-effect default."""
  from .config import DFXConfig
  d = DFXConfig()
  return { p.field: getattr( d, p.field ) for p in PARAMS }


def typed( p, v ):
  return int( round( v ) ) if p.integer else float( round( v, 6 ) )


def clip( p, v ):
  return min( max( v, p.low ), p.high )


def _solve( J, r, values, fixed=() ):
  """values + the least-squares step for residual r, the `fixed`
  parameters left alone."""
  import numpy as np
  free = [ j for j, p in enumerate( PARAMS ) if p.field not in fixed ]
  step = np.linalg.lstsq( J[ :, free ], r, rcond=None )[0]
  out = dict( values )
  for j, d in zip( free, step ):
    out[ PARAMS[j].field ] += float( d )
  return out


def _bounded_step( J, r, values ):
  """The least-squares step for residual r within the ranges: solve, fix
  each parameter the solve takes out of its range at the edge it crossed
  and re-solve the others with it fixed (an active set, until every free
  value lies inside), then round the integer parameters and re-solve the
  free continuous ones with them fixed.  Returns (the new values, the
  first unconstrained solve)."""
  fixed = {}
  first = None
  while True:
    raw = _solve( J, r - J @ _moved( fixed, values ), values, fixed=list( fixed ) )
    raw.update( fixed )
    first = first or dict( raw )
    out = [ p for p in PARAMS if p.field not in fixed and not in_range( p, raw[ p.field ] ) ]
    if not out:
      break
    worst = max( out, key=lambda p: abs( raw[ p.field ] - clip( p, raw[ p.field ] ) )
                 / ( p.high - p.low ) )
    fixed[ worst.field ] = typed( worst, clip( worst, raw[ worst.field ] ) )
  ints = { p.field: typed( p, clip( p, raw[ p.field ] ) ) for p in PARAMS
           if p.integer and p.field not in fixed }
  if ints:
    fixed.update( ints )
    if len( fixed ) < len( PARAMS ):
      raw = _solve( J, r - J @ _moved( fixed, values ), values, fixed=list( fixed ) )
    raw.update( fixed )
  return { p.field: typed( p, clip( p, raw[ p.field ] ) ) for p in PARAMS }, first


def _moved( fixed, values ):
  import numpy as np
  return np.array( [ fixed[ p.field ] - values[ p.field ] if p.field in fixed else 0.0
                     for p in PARAMS ] )


def chord_fit( latency, J, target, start, iterations=3, tol=0.5, log=print ):
  """Chord iterations on `latency(values) -> array` (one entry per fitted
  point) toward `target`, with the slope matrix J (points x PARAMS): a
  bounded least-squares step (`_bounded_step`), then the generations
  timed at the result; stop when every point is within `tol` percent.
  Returns (values, latencies, history); each history entry keeps the
  step's unconstrained solution too."""
  import numpy as np
  target = np.asarray( target, dtype=float )
  values, ms = dict( start ), np.asarray( latency( start ), dtype=float )
  history = []
  for it in range( iterations ):
    values, unconstrained = _bounded_step( J, target - ms, values )
    ms = np.asarray( latency( values ), dtype=float )
    err = 100 * ( ms - target ) / target
    history.append( dict( values=values, unclipped=unconstrained, latency=ms.tolist(),
                          error_pct=err.tolist() ) )
    log( f"iteration {it + 1}: {values} -> errors "
         + ", ".join( f"{e:+.2f} %" for e in err ) )
    if np.all( np.abs( err ) <= tol ):
      break
  return values, ms, history
