"""The memory request/response boundary of one channel (HBM pseudo-channel
or DDR port), the same at CL and RTL, and how a word address is striped.

A memory is `channels` word-interleaved channels (a power of two): word
address a lives in channel a % channels, at row a // channels.  One word is
`DFXConfig.mem_word_elems` FP16 elements (32, 512 bits, from d=32 up; one
register entry below); element k of a word is bits [16k, 16k+16).

  req   `MemReq`: wr, row, strb (one bit per FP16 element: which elements a
        write stores; ignored by reads), data (writes).
  resp  `MemResp`: one per request, in request order per channel: the read
        word, or for a write 0 (the write's acknowledgement: the word is
        stored when its response is sent).
"""

import functools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from pymtl3 import *

from ...config import FP16_BITS, DFXConfig
from ...isa.fields import EXT_BITS
from ...lib.arith import ceil_div


def word_type( elems ):
  """A memory word of `elems` FP16 elements."""
  return mk_bits( FP16_BITS * elems )


def strb_type( elems ):
  return mk_bits( elems )


def all_elems( elems ):
  """The strobe that writes every element of a word."""
  return ( 1 << elems ) - 1


def array_to_words( img ):
  """The rows of an [n, E] FP16 array as n memory words (ints); the inverse
  of `words_to_array`."""
  bits = np.ascontiguousarray( img ).view( "<u2" )
  return [ int.from_bytes( row.tobytes(), "little" ) for row in bits ]


def write_requests( Req, img, base=0 ):
  """Requests (of type Req) storing the rows of an [n, E] FP16 array, one
  word each, at word addresses base, base+1, ...: how a host loads an
  image into a memory at every level."""
  strb = all_elems( img.shape[1] )
  return [ Req( 1, base + k, strb, w ) for k, w in enumerate( array_to_words( img ) ) ]


def words_to_array( words, elems ):
  """Memory words (read responses' data) as an [n, elems] FP16 array."""
  raw = b"".join( int( w ).to_bytes( 2 * elems, "little" ) for w in words )
  return np.frombuffer( raw, "<u2" ).reshape( -1, elems ).view( np.float16 ).copy()


@functools.lru_cache( maxsize=None )
def mk_mem_types( row_bits, elems ):
  Row, Word = mk_bits( row_bits ), word_type( elems )
  return dict(
    Req=mk_bitstruct( f"MemReq_{row_bits}_{elems}",
                      { "wr": Bits1, "row": Row, "strb": strb_type( elems ), "data": Word } ),
    Resp=mk_bitstruct( f"MemResp_{elems}", { "data": Word } ),
  )


def channel_of( addr, channels ):
  return addr % channels


def row_of( addr, channels ):
  return addr // channels


@functools.lru_cache( maxsize=None )
def row_bits( words, channels ):
  """Row address width of a memory of `words` words in `channels` channels."""
  return max( 1, ( ceil_div( words, channels ) - 1 ).bit_length() )


@dataclass( frozen=True )
class MemorySpec:
  """One memory as the DMA and the channel models see it."""
  name: str
  channels: int
  words_per_cycle: Fraction     # per channel, at most 1 (one port, one word)
  latency: int                  # cycles from a request's acceptance to its response
  outstanding: int              # requests a channel holds
  words: int                    # capacity in words (address space)
  word_elems: int               # FP16 elements per word (DFXConfig.mem_word_elems)

  @property
  def row_bits( s ):
    return row_bits( s.words, s.channels )

  @property
  def types( s ):
    return mk_mem_types( s.row_bits, s.word_elems )

  @property
  def Word( s ):
    return word_type( s.word_elems )

  @property
  def all_elems( s ):
    return all_elems( s.word_elems )


class MemoryConfigError( ValueError ):
  pass


def memory_spec( cfg: DFXConfig, name ):
  """'hbm' or 'ddr' from the config; the one place the two are told apart."""
  if name == "hbm":
    spec = MemorySpec( "HBM", cfg.hbm_channels, cfg.hbm_words_per_channel_cycle,
                       cfg.hbm_latency_cycles, cfg.mem_outstanding,
                       cfg.hbm_words, cfg.mem_word_elems )
  elif name == "ddr":
    spec = MemorySpec( "DDR", cfg.ddr_channels, cfg.ddr_words_per_channel_cycle,
                       cfg.ddr_latency_cycles, cfg.mem_outstanding, 1 << EXT_BITS,
                       cfg.mem_word_elems )
  else:
    raise MemoryConfigError( f"unknown memory {name!r}: 'hbm' or 'ddr'" )
  # a channel port moves at most one word a cycle (config.hbm_port_words_per_cycle,
  # ddr_channels), so `channel_rule` never sees more
  assert spec.words_per_cycle <= 1, spec
  return spec
