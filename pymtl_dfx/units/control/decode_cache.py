"""Decoding with a cache: a program repeats the same words every token."""

import functools

from ...isa import Kind, decode, op_of


@functools.lru_cache( maxsize=1 << 16 )
def decoded( word ):
  """(instruction object, opcode, kind) of a 128-bit word (an int)."""
  inst = decode( word )
  return inst, op_of( inst ), Kind( int( inst.hdr.kind ) )
