"""The Pareto front: the points no other point beats (as good on both axes,
better on one)."""


def pareto( points, x, y ):
  """Indices of `points` (dicts) on the front of minimal x and minimal y
  (keys or functions of a point): p is on it unless some q has x(q) <= x(p)
  and y(q) <= y(p), one of them strictly.  Points where x or y is None are
  left out.  Sorted by x."""
  fx = x if callable( x ) else ( lambda p: p[ x ] )
  fy = y if callable( y ) else ( lambda p: p[ y ] )
  pts = [ ( fx( p ), fy( p ), i ) for i, p in enumerate( points ) ]
  pts = [ t for t in pts if t[0] is not None and t[1] is not None ]
  front = []
  for a, b, i in pts:
    beaten = any( c <= a and e <= b and ( c < a or e < b ) for c, e, _ in pts )
    if not beaten:
      front.append( ( a, b, i ) )
  return [ i for _, _, i in sorted( front ) ]
