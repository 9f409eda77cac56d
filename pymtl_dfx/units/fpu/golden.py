"""The FP16 operators' golden functions on messages, from `pymtl_dfx.numerics`."""

import functools

import numpy as np

from ... import numerics
from .msgs import FP16


def _val( bits ):
  return numerics.from_bits( int( bits ) )


def _msg( value ):
  return FP16( int( numerics.bits( value ) ) )


def add_msg( req ):
  op = numerics.sub if req.sub else numerics.add
  return _msg( op( _val( req.a ), _val( req.b ) ) )


def mul_msg( req ):
  return _msg( numerics.mul( _val( req.a ), _val( req.b ) ) )


def max_msg( req ):
  return _msg( numerics.maximum( _val( req.a ), _val( req.b ) ) )


@functools.lru_cache( maxsize=None )
def _all_results( fn ):
  # a unary function over every input pattern, evaluated once: FL/CL models
  # stream tens of thousands of messages without a numpy call per message
  x = numerics.from_bits( np.arange( 1 << 16, dtype=np.uint32 ).astype( np.uint16 ) )
  return numerics.bits( fn( x ) )


def unary( fn ):
  """Message function of a unary numerics function (exp, recip, ...)."""
  return lambda req: FP16( int( _all_results( fn )[ int( req ) ] ) )


exp_msg = unary( numerics.exp )
recip_msg = unary( numerics.recip )
rsqrt_msg = unary( numerics.rsqrt )
gelu_msg = unary( numerics.gelu )
inv_pow2_msg = unary( numerics.inv_pow2 )
