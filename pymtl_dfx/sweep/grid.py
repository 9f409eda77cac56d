"""The sweep's points: `--grid key=v1,v2,...` (any DFXConfig field, repeatable)
and `--set key=value` for every point; the cartesian product, each point
validated by `DFXConfig.with_overrides`."""

import itertools
import math
from dataclasses import dataclass, fields

from .. import profiles
from ..bounds import MAX_SWEEP_POINTS, check_dfx, show
from ..config import ConfigError, DFXConfig


class GridError( ValueError ):
  """A bad --grid: the message names the key or value."""


@dataclass( frozen=True )
class Point:
  values: tuple            # ((key, value as given), ...) in grid order
  dfx: DFXConfig

  @property
  def label( s ):
    return ", ".join( f"{k}={getattr( s.dfx, k )}" for k, _ in s.values ) or "base"

  @property
  def grid( s ):
    return { k: getattr( s.dfx, k ) for k, _ in s.values }


def _why( e ):
  """A ConfigError's reason without with_overrides' 'invalid --set: '."""
  return str( e ).removeprefix( "invalid --set: " )


def parse_grid( texts ):
  """['d=32,64', 'l=8'] -> {'d': ['32', '64'], 'l': ['8']}: the keys must be
  DFXConfig fields, each given once, each with distinct non-empty values."""
  names = [ f.name for f in fields( DFXConfig ) ]
  grid = {}
  for text in texts:
    key, eq, values = str( text ).partition( "=" )
    key = key.strip()
    vals = [ v.strip() for v in values.split( "," ) ]
    if not eq or not key:
      raise GridError( f"--grid {text!r}: expected key=v1,v2,..." )
    if key not in names:
      raise GridError( f"--grid {key!r} is not a DFXConfig field (fields: {', '.join( names )})" )
    if key in grid:
      raise GridError( f"--grid {key} is given twice" )
    if any( not v for v in vals ):
      raise GridError( f"--grid {text!r}: an empty value" )
    if len( set( vals ) ) != len( vals ):
      raise GridError( f"--grid {text!r}: a value is repeated" )
    grid[ key ] = vals
  return grid


def points( grid, sets=(), profile=None ):
  """Every combination of the grid's values (the first key varies slowest),
  over DFXConfig() with profile `profile`'s values (None: none), then
  `sets`, applied; a bad value or combination raises GridError naming it."""
  set_keys = { str( a ).partition( "=" )[0].strip() for a in sets }
  both = sorted( set_keys & set( grid ) )
  if both:
    raise GridError( f"{', '.join( both )} given both in --grid and in --set" )
  try:
    base = profiles.config( profile ).with_overrides( list( sets ) )
  except ConfigError as e:
    raise GridError( str( e ) ) from None
  n = math.prod( len( v ) for v in grid.values() )
  if n > MAX_SWEEP_POINTS:
    raise GridError( f"--grid: {show( n )} points is above the bound of {MAX_SWEEP_POINTS:,} "
                     f"(one table and one figure, each point laid out before any is timed: "
                     f"bounds.MAX_SWEEP_POINTS); split the grid into several sweeps" )
  # each value on its own first, so that the message names the bad one
  for key, vals in grid.items():
    for v in vals:
      try:
        check_dfx( base.with_overrides( [ f"{key}={v}" ] ) )
      except ConfigError as e:
        raise GridError( f"--grid {key}={v}: {_why( e )}" ) from None
  out = []
  keys = list( grid )
  for combo in itertools.product( *grid.values() ):
    values = tuple( zip( keys, combo ) )
    try:
      dfx = base.with_overrides( [ f"{k}={v}" for k, v in values ] )
      check_dfx( dfx )
    except ConfigError as e:
      raise GridError( f"--grid point {', '.join( f'{k}={v}' for k, v in values )}: "
                       f"{_why( e )}" ) from None
    out.append( Point( values, dfx ) )
  seen = {}
  for p in out:
    if p.dfx in seen:
      raise GridError( f"--grid points {seen[ p.dfx ].label} and {p.label} are the same config" )
    seen[ p.dfx ] = p
  return out
