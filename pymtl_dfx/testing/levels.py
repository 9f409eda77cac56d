"""Abstraction levels and how a test picks the component for one."""

LEVELS = ( "fl", "cl", "rtl" )


def select( level, **by_level ):
  """`select(level, fl=AFL, cl=ACL, rtl=ARTL)` -> the class for `level`."""
  if level not in LEVELS:
    raise ValueError( f"unknown level {level!r}; levels are {', '.join(LEVELS)}" )
  if level not in by_level:
    raise ValueError( f"no {level.upper()} model given (have {sorted(by_level)})" )
  return by_level[ level ]
