"""What one DMA instruction means at the port level, shared by DMAFL,
DMACL and DMARTL's parameters (the one definition of every size and rule).

A transfer touches word addresses addr, addr+1, ... (word k of the transfer
at addr+k, channel (addr+k) % C, row (addr+k) // C):

  reads   (hbm_read, ddr_read): n_words = vecs*EW words leave as output
          units in address order: a d-element entry on rf_wr (entry rf+u),
          or with mpu a d x l tile on w (`unit_words` words).
  writes  (hbm_write, ddr_write): entry rf+i (from rf_rd_resp) is words
          addr + i*EW ..., all strobes.
  hbm_write tr: element e of the vecs*d-element vector goes to element
          pos % d of vector base + e of the region (base = (pos // d) *
          ceil(vecs*d / l) * l, see `semantics.py`), i.e. one strobed
          single-element write at word `tr_word0 + e * entry_words`.

The DMA works in beats: a read beat takes P = min(C, unit_words) words, one
from each of P consecutive channels, through a rotation; a write beat sends
`write_slots` words (or elements) to distinct channels.  EW (`entry_words`)
is d / E, E = `DFXConfig.mem_word_elems` the elements of a memory word.
"""

from dataclasses import dataclass

from ...config import FP16_BITS
from ...isa import DmaOp as D
from ...lib.arith import ceil_div
from ..memory.msgs import memory_spec
from ...lib.tiling import GridError
from .msgs import DMAConfigError
from .semantics import check_plain_read, mpu_grid


ELEM_MASK = ( 1 << FP16_BITS ) - 1


def log2( x ):
  return x.bit_length() - 1


@dataclass( frozen=True )
class DmaGeometry:
  """Sizes the DMA's hardware is built for (from cfg only)."""
  d: int
  l: int
  entry_words: int      # EW: words of one d-element register entry
  tile_words: int       # TW: words of one d x l weight tile
  word_elems: int       # E: FP16 elements of one memory word

  def read_beat( s, C, unit_words ):
    return min( C, unit_words )

  def write_slots( s, C, tr ):
    """Words (tr: elements) one write beat sends, all to distinct channels.
    tr: elements e..e+S-1 of one column tile are S words entry_words apart,
    on distinct channels while S * entry_words <= C (at least 1)."""
    if tr:
      return max( 1, min( s.l, s.d, C // s.entry_words ) )
    return min( C, s.entry_words )


def geometry( cfg ):
  return DmaGeometry( cfg.d, cfg.l, cfg.entry_words, cfg.tile_words, cfg.mem_word_elems )


def is_ddr( op ):
  return op in ( D.DDR_READ, D.DDR_WRITE )


def split_word( word, elems ):
  """A memory word as its `elems` FP16 bit patterns (element k = bits
  [16k, 16k+16), `memory.msgs`)."""
  w = int( word )
  return [ ( w >> ( FP16_BITS * k ) ) & ELEM_MASK for k in range( elems ) ]


def join_elems( elems ):
  """The inverse of `split_word`."""
  w = 0
  for k, x in enumerate( elems ):
    w |= int( x ) << ( FP16_BITS * k )
  return w


def tr_base_vector( cfg, vecs, pos ):
  """First vector of the region a transposed write of token `pos` touches."""
  n = vecs * cfg.d
  return ( pos // cfg.d ) * ( ceil_div( n, cfg.l ) * cfg.l )


def tr_word0( cfg, addr, vecs, pos ):
  """Word of element 0 of a transposed write; element e is e*EW words on."""
  return addr + tr_base_vector( cfg, vecs, pos ) * cfg.entry_words + ( pos % cfg.d ) // cfg.mem_word_elems


def check_inst( cfg, op, inst ):
  """The errors the hardware does not check (it assumes a valid program):
  raised by FL and CL with what is wrong."""
  addr, vecs = int( inst.addr ), int( inst.vecs )
  EW = cfg.entry_words
  spec = memory_spec( cfg, "ddr" if is_ddr( op ) else "hbm" )
  try:
    if op == D.HBM_READ and inst.mpu:
      mpu_grid( inst, cfg.d, cfg.l, cfg.psum_entries )
    elif op == D.HBM_READ:
      check_plain_read( inst )
  except GridError as e:
    raise DMAConfigError( str( e ) ) from None
  if op == D.HBM_WRITE and inst.tr:
    lo = tr_word0( cfg, addr, vecs, int( inst.pos ) )
    hi = lo + ( vecs * cfg.d - 1 ) * EW + 1 if vecs else lo
  else:
    lo, hi = addr, addr + vecs * EW
  if hi > spec.words:
    raise DMAConfigError( f"{op.mnemonic}: words [{lo:#x}, {hi:#x}) run past the "
                          f"{spec.words} words ({spec.words:#x}) of {spec.name}" )
