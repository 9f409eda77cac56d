"""The FP16 operators' golden functions on messages, from `pymtl_dfx.numerics`."""

from ... import numerics
from .msgs import FP16


def _val( bits ):
  return numerics.from_bits( int( bits ) )


def add_msg( req ):
  op = numerics.sub if req.sub else numerics.add
  return FP16( int( numerics.bits( op( _val( req.a ), _val( req.b ) ) ) ) )


def mul_msg( req ):
  return FP16( int( numerics.bits( numerics.mul( _val( req.a ), _val( req.b ) ) ) ) )
