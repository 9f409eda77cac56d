"""The vector register file's contents: entries of d FP16 elements.

A result is written as whole entries: lanes past its length become +0
(the ISA's rule, so every level writes the same bits).  A scalar is element
0 of an entry.
"""

import numpy as np

from ...lib.arith import ceil_div

F16 = np.float16


class RegisterFileError( IndexError ):
  pass


class VectorRegisterFile:

  def __init__( s, entries, d ):
    s.d = d
    s.entries = entries
    s.mem = np.zeros( ( entries, d ), F16 )

  def _range( s, entry, n_elems, what ):
    n_ent = ceil_div( n_elems, s.d )
    if entry < 0 or entry + n_ent > s.entries:
      raise RegisterFileError( f"{what} of {n_elems} elements at v{entry} runs past the "
                               f"register file ({s.entries} entries of {s.d})" )
    return n_ent

  def read( s, entry, n_elems ):
    n_ent = s._range( entry, n_elems, "read" )
    return s.mem[ entry: entry + n_ent ].reshape( -1 )[ :n_elems ].copy()

  def read_entries( s, entry, n_ent ):
    s._range( entry, n_ent * s.d, "read" )
    return s.mem[ entry: entry + n_ent ].copy()

  def write( s, entry, values ):
    values = np.asarray( values, F16 ).reshape( -1 )
    n_ent = s._range( entry, values.size, "write" )
    block = np.zeros( n_ent * s.d, F16 )
    block[ :values.size ] = values
    s.mem[ entry: entry + n_ent ] = block.reshape( n_ent, s.d )

  def write_elements( s, entry, offset, values ):
    """Write at an element offset without touching other lanes (the router's
    all-gather fills other cores' segments in place)."""
    values = np.asarray( values, F16 ).reshape( -1 )
    flat = s.mem.reshape( -1 )
    lo = entry * s.d + offset
    if lo < 0 or lo + values.size > flat.size:
      raise RegisterFileError( f"write of {values.size} elements at v{entry}+{offset} runs "
                               f"past the register file" )
    flat[ lo: lo + values.size ] = values
