"""Ring packets: `router_words` FP16 words plus where they belong.

The words are a list field: pymtl3 Bits stop below 1024 bits, and a
64-word packet is exactly 1024.
"""

from pymtl3 import *

from ...config import DFXConfig, FP16_BITS


def mk_ring_packet( cfg: DFXConfig ):
  return mk_bitstruct( f"RingPacket_{cfg.router_words}", {
    "src":  Bits8,                           # core whose segment this is
    "idx":  Bits16,                          # packet number within the segment
    "data": [ mk_bits( FP16_BITS ) ] * cfg.router_words,
  } )
