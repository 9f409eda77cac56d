"""A channel's contents on Python values, for MemoryFL and MemoryCL: one
int per row, `depth` rows, rows aliased modulo depth."""

from ...config import FP16_BITS

ELEM_MASK = ( 1 << FP16_BITS ) - 1


def strobe_mask( strb ):
  """Bit mask of the FP16 elements whose strobe bit is set."""
  strb = int( strb )
  return sum( ELEM_MASK << ( FP16_BITS * k )
              for k in range( strb.bit_length() ) if ( strb >> k ) & 1 )


class ChannelStore:

  def __init__( s, depth ):
    s.depth = depth
    s.rows = [ 0 ] * depth

  def access( s, row, req ):
    """Apply MemReq `req` to channel row `row`; returns the response word
    (a read's word as stored before the access, 0 for a write)."""
    r = int( row ) % s.depth
    if req.wr:
      m = strobe_mask( req.strb )
      s.rows[r] = ( s.rows[r] & ~m ) | ( int( req.data ) & m )
      return 0
    return s.rows[r]
