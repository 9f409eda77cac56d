"""Measure the special functions against float64 over every finite FP16 input.

`python -m pymtl_dfx.numerics.error_report` prints the markdown table that
docs/numerics.md carries (a test checks the two agree).  An error in ulps is
|got - exact| divided by the FP16 spacing at the exact value (2^-24 in the
subnormal range); inputs whose exact result overflows FP16 are left out.
"""

from dataclasses import dataclass

import numpy as np

from . import tables
from .fp16 import from_bits


@dataclass
class ErrorRow:
  name: str
  definition: str
  inputs: int
  max_ulp: float
  mean_ulp: float
  max_abs: float
  worst_input: float


def _spacing( ref ):
  """FP16 ulp at each exact value: 2^(floor(log2|ref|) - 10), min 2^-24."""
  a = np.abs( ref )
  e = np.floor( np.log2( np.where( a > 0, a, 1.0 ) ) )
  return np.maximum( np.exp2( e - 10 ), 2.0 ** -24 )


def _row( name, definition, fn, exact, domain ):
  x = from_bits( np.arange( 1 << 16, dtype=np.uint16 ) )
  xf = x.astype( np.float64 )
  with np.errstate( all="ignore" ):
    ref = exact( xf )
    keep = np.isfinite( xf ) & np.isfinite( ref ) & ( np.abs( ref ) <= 65504 ) & domain( xf )
    got = fn( x ).astype( np.float64 )
  err = np.abs( got[ keep ] - ref[ keep ] )
  ulp = err / _spacing( ref[ keep ] )
  worst = int( np.argmax( ulp ) )
  return ErrorRow( name, definition, int( keep.sum() ), float( ulp.max() ),
                   float( ulp.mean() ), float( err.max() ), float( xf[ keep ][ worst ] ) )


def measure_all():
  return [
    _row( "exp", "mul(EXP_HI[s,e,m>>5], EXP_LO[s,e,m&31]), 2 x 1088 entries",
          tables.exp, np.exp, lambda x: np.ones_like( x, bool ) ),
    _row( "recip", "RECIP[frac] (1024 entries) x 2^-E, one rounding",
          tables.recip, lambda x: 1.0 / x, lambda x: x != 0 ),
    _row( "rsqrt", "RSQRT[E&1, frac] (2048 entries) x 2^-floor(E/2)",
          tables.rsqrt, lambda x: 1.0 / np.sqrt( x ), lambda x: x > 0 ),
    _row( "gelu", "add(Y0[k], mul(SLOPE[k], sub(x, X[k]))), 2048 entries on [-8, 8)",
          tables.gelu, tables.gelu_new, lambda x: np.ones_like( x, bool ) ),
  ]


def markdown_table( rows=None ):
  rows = rows or measure_all()
  lines = [ "| function | definition | finite inputs | max error (ulp) | mean error (ulp) "
            "| max abs error | worst input |",
            "|---|---|---|---|---|---|---|" ]
  for r in rows:
    lines.append( f"| {r.name} | {r.definition} | {r.inputs} | {r.max_ulp:.3f} | "
                  f"{r.mean_ulp:.3f} | {r.max_abs:.3g} | {r.worst_input:.6g} |" )
  return "\n".join( lines ) + "\n"


if __name__ == "__main__":
  print( markdown_table(), end="" )
