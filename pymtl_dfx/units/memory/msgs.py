"""The memory request/response boundary of one channel (HBM pseudo-channel
or DDR port), the same at CL and RTL, and how a word address is striped.

A memory is `channels` word-interleaved channels (a power of two): word
address a lives in channel a % channels, at row a // channels.  One word is
64 bytes (`MEM_WORD_BITS`), 32 FP16 elements; element k of a word is bits
[16k, 16k+16).

  req   `MemReq`: wr, row, strb (one bit per FP16 element: which elements a
        write stores; ignored by reads), data (writes).
  resp  `MemResp`: one per request, in request order per channel: the read
        word, or for a write 0 (the write's acknowledgement: the word is
        stored when its response is sent).
"""

import functools
from dataclasses import dataclass
from fractions import Fraction

from pymtl3 import *

from ...config import MEM_WORD_BITS, MEM_WORD_BYTES, MEM_WORD_ELEMS, DFXConfig
from ...isa.fields import EXT_BITS

Word = mk_bits( MEM_WORD_BITS )
Strb = mk_bits( MEM_WORD_ELEMS )
ALL_ELEMS = ( 1 << MEM_WORD_ELEMS ) - 1


@functools.lru_cache( maxsize=None )
def mk_mem_types( row_bits ):
  Row = mk_bits( row_bits )
  return dict(
    Req=mk_bitstruct( f"MemReq_{row_bits}",
                      { "wr": Bits1, "row": Row, "strb": Strb, "data": Word } ),
    Resp=mk_bitstruct( "MemResp", { "data": Word } ),
  )


def channel_of( addr, channels ):
  return addr % channels


def row_of( addr, channels ):
  return addr // channels


@functools.lru_cache( maxsize=None )
def row_bits( words, channels ):
  """Row address width of a memory of `words` words in `channels` channels."""
  return max( 1, ( -( -words // channels ) - 1 ).bit_length() )


@dataclass( frozen=True )
class MemorySpec:
  """One memory as the DMA and the channel models see it."""
  name: str
  channels: int
  words_per_cycle: Fraction     # per channel, at most 1 (one port, one word)
  latency: int                  # cycles from a request's acceptance to its response
  outstanding: int              # requests a channel holds
  words: int                    # capacity in words (address space)

  @property
  def row_bits( s ):
    return row_bits( s.words, s.channels )

  @property
  def types( s ):
    return mk_mem_types( s.row_bits )


class MemoryConfigError( ValueError ):
  pass


def memory_spec( cfg: DFXConfig, name ):
  """'hbm' or 'ddr' from the config; the one place the two are told apart."""
  if name == "hbm":
    spec = MemorySpec( "HBM", cfg.hbm_channels, cfg.hbm_words_per_channel_cycle,
                       cfg.hbm_latency_cycles, cfg.mem_outstanding,
                       cfg.hbm_bytes // MEM_WORD_BYTES )
  elif name == "ddr":
    spec = MemorySpec( "DDR", cfg.ddr_channels, cfg.ddr_words_per_channel_cycle,
                       cfg.ddr_latency_cycles, cfg.mem_outstanding, 1 << EXT_BITS )
  else:
    raise MemoryConfigError( f"unknown memory {name!r}: 'hbm' or 'ddr'" )
  if spec.words_per_cycle > 1:
    raise MemoryConfigError(
      f"{spec.name}: a channel moves {spec.words_per_cycle} words per cycle, but a "
      f"channel port is one {MEM_WORD_BITS}-bit word (hbm_channel_bits must be at most "
      f"{MEM_WORD_BITS})" )
  return spec
