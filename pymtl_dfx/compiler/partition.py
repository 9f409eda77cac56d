"""Model parallelism as in DFX: which core computes which columns.

Attention is split by heads, the FC layers by output columns, the LM head by
vocabulary columns; LayerNorm and residuals run on every core.  Each split
gives every core a segment of the same size, a whole number of register
entries (d elements) and of tiles (l columns), so that the ring all-gather
puts the segments side by side and the gathered vector is the real one
followed by zero padding: the next matrix product reads only its real
`rows`, so padding never changes a bit.  Heads that do not divide over the
cores become all-zero heads at the end.

With `DFXConfig.proj_row_split` (on more than one core) the two c_proj
matrices are split by rows instead (Megatron's pairing): attn c_proj's rows
as the heads (`attn`), mlp c_proj's as c_fc's columns (`fc`), so each core
multiplies the segment it computed itself, and every core's output is a
full-width partial that an all-reduce sums.
"""

import math
from dataclasses import dataclass

from ..config import DFXConfig, GPT2Config
from .limits import CompileError, shape_errors
from ..lib.arith import ceil_div


def round_up( n, m ):
  return ceil_div( n, m ) * m


@dataclass( frozen=True )
class Split:
  """`n` columns over `cores` cores in segments of `seg` columns."""
  n: int
  cores: int
  seg: int

  def real( self, core ):
    """Real columns [lo, hi) of `core` (hi <= lo when it has none)."""
    lo = core * self.seg
    return lo, max( lo, min( lo + self.seg, self.n ) )

  @property
  def padded( self ):
    return self.cores * self.seg

  @property
  def pad( self ):
    return self.padded - self.n


def _split( n, cores, align ):
  return Split( n, cores, round_up( ceil_div( n, cores ), align ) )


@dataclass( frozen=True )
class Partition:
  gpt: GPT2Config
  dfx: DFXConfig
  cores: int

  def __post_init__( self ):
    # the limits partitioning itself needs; the rest: checks.check_limits
    errors = shape_errors( self.gpt, self.dfx, self.cores )
    if errors:
      raise CompileError( "cannot partition GPT-2 for DFX: " + "; ".join( errors ) )

  @property
  def align( self ):
    return math.lcm( self.dfx.d, self.dfx.l )

  @property
  def heads_per_core( self ):
    return ceil_div( self.gpt.n_head, self.cores )

  def real_heads( self, core ):
    lo = core * self.heads_per_core
    return range( lo, max( lo, min( lo + self.heads_per_core, self.gpt.n_head ) ) )

  @property
  def row_split( self ):
    """`DFXConfig.proj_row_split` on more than one core: the c_proj
    matrices split by rows (one core's row split is the whole matrix)."""
    return bool( self.dfx.proj_row_split ) and self.cores > 1

  @property
  def attn( self ):
    """Attention output a (attn_dim wide): each core produces
    heads_per_core * head_dim elements."""
    return Split( self.gpt.attn_dim, self.cores, self.heads_per_core * self.gpt.head_dim )

  @property
  def attn_proj( self ):
    # attn_dim rows in, the residual's n_embd columns out
    return _split( self.gpt.n_embd, self.cores, self.align )

  @property
  def fc( self ):
    return _split( self.gpt.n_inner, self.cores, self.align )

  @property
  def mlp_proj( self ):
    return _split( self.gpt.n_embd, self.cores, self.align )

  @property
  def vocab( self ):
    return _split( self.gpt.vocab_size, self.cores, self.align )

  def padding_report( self ):
    """Padded vs real sizes of every split (the overhead the stats report)."""
    rows = {}
    for name in ( "attn", "attn_proj", "fc", "mlp_proj", "vocab" ):
      s = getattr( self, name )
      rows[ name ] = { "real": s.n, "padded": s.padded,
                       "overhead": round( s.pad / s.n, 6 ) }
    rows[ "heads" ] = { "real": self.gpt.n_head,
                        "padded": self.heads_per_core * self.cores,
                        "overhead": round( ( self.heads_per_core * self.cores
                                             - self.gpt.n_head ) / self.gpt.n_head, 6 ) }
    return rows
