"""What a CL/RTL core can run: the compiler refuses every other program.

The functional core would happily run a program that the hardware computes
wrongly (an MPU output slice wider than a register entry) or cannot run at
all (a matrix whose input does not fit the x buffer), so these limits are
checked once, at compile time, on the layout every step's program is
emitted from.  Each rule is the owning unit's own check where the unit has
one (`regfile.ports`, `dma.msgs`, `router`, `memory`, `isa`); this module
only says which instructions the compiler emits, what each limit is called
and what to change.

Limits (one `CompileError` lists every one that fails):

  head_dim         each head starts on a register entry: head_dim % d == 0
  core count       the ring: 1..255 cores (`check_router_params`, an 8-bit
                   packet source); DFXConfig.cores must be the compiled
                   count, because the scoreboard sizes a sync's footprint
                   (cores * len) from it
  register file manager  l <= d (an MPU output slice lies in one entry),
                   x buffers of >= 2 entries, register addresses fit the
                   ISA (`check_rfm_params`)
  ISA field widths the config fits the instruction fields
                   (`isa.check_config_fits`)
  x buffer         every matrix instruction's ceil(rows/d) fits one of the
                   two x buffers (`ports.matrix_error`): the weight
                   matrices (rows n_embd, n_inner or attn_dim) and attention's
                   q K^T (rows head_dim) and p V (rows = the compiled
                   context)
  register file    the layout's last entry < vreg_entries (with
                   attn_head_pipeline, its own message when only the
                   second register set of the heads does not fit; with
                   proj_row_split, when only its all-reduce's registers
                   do not)
  context          1 <= max_tokens <= n_positions (wpe has n_positions
                   rows) and every position fits the ISA's pos field
  DMA transfer     the longest `hbm_read` (a whole weight matrix, or a
                   head's K or V) fits the vecs field
  HBM / DDR        weights + K/V caches fit hbm_channels * hbm_channel_mb;
                   DDR contents fit the DDR address space (`memory_spec`)

The partial-sum buffer needs nothing here: DFXConfig already refuses a
psum_entries that is not a positive power of two, which is all the MPU's
sequencer assumes (`MPUSeqRTL`); `tiling.band_width` makes any matrix
width fit it.
"""

from ..bounds import U280_DDR_BYTES, show
from ..config import CompileError, ConfigError  # noqa: F401 (CompileError: named here)
from ..isa import check_config_fits
from ..units.dma.msgs import DMAConfigError
from ..units.memory.msgs import memory_spec
from ..units.regfile.ports import RFMError, check_rfm_params
from ..units.router.RouterRTL import check_router_params


def _unit_check( errors, name, fix, check, *args ):
  """Run a unit's own parameter check; its message says what and why."""
  try:
    check( *args )
  except ( ConfigError, DMAConfigError, RFMError, ValueError ) as e:
    why = str( e )
    errors.append( f"{why if why.startswith( name ) else f'{name}: {why}'}; {fix}" )
    return False
  return True


def shape_errors( gpt, dfx, cores ):
  """The limits that must hold before the model can be partitioned at all
  (`partition.Partition` raises them)."""
  errors = []
  hd, d = gpt.head_dim, dfx.d
  if hd % d:
    rule = "" if gpt.attn_dim != gpt.n_embd else f" (n_embd={gpt.n_embd} / n_head={gpt.n_head})"
    errors.append( f"head_dim: head_dim={hd}{rule} "
                   f"needs to be a multiple of d={d} so that each head's output starts on "
                   f"a register entry; choose d dividing {hd} or a model whose heads are "
                   f"a multiple of {d} wide" )
  if not isinstance( cores, int ) or isinstance( cores, bool ):
    errors.append( f"core count: cores={cores!r} must be an integer" )
  else:
    _unit_check( errors, "core count",
                 "the ring's packets carry an 8-bit source core: use 1..255 cores",
                 check_router_params, dfx, 0, cores )
  return errors


_CAPACITY = {
  "hbm": ( "weights and K/V caches",
           "raise hbm_channel_mb or hbm_channels, use more cores or compile a shorter context" ),
  "ddr": ( "embeddings, LayerNorm parameters and biases",
           "use a smaller model (the DDR address is EXT_BITS wide)" ) }


def capacity_error( dfx, mem, used ):
  """The message when `used` words do not fit memory `mem` of one core
  (None when they do); `checks.check_model` says the same before a layout."""
  spec = memory_spec( dfx, mem )
  what, fix = _CAPACITY[ mem ]
  gib = lambda w: f"{w * dfx.mem_word_bytes / 2**30:.3f} GiB" if w < 2**64 else "too many"  # noqa: E731
  if used > spec.words:
    return ( f"{spec.name} capacity: {what} need {show( used )} words ({gib( used )}), "
             f"{spec.name} holds {spec.words} ({gib( spec.words )}); {fix}" )
  # DDR's address space is larger than the card's DDR4 (HBM's is the card's)
  card = U280_DDR_BYTES // dfx.mem_word_bytes
  if mem == "ddr" and used > card:
    return ( f"DDR capacity: {what} need {show( used )} words ({gib( used )}), a U280's "
             f"two DDR4 channels hold {card} ({gib( card )}); use a smaller model" )
  return None


def config_errors( dfx, cores ):
  """The limits of the DFX configuration alone, whatever the model: the
  register file manager's (l <= d first) and the ISA's field widths.  The
  CLI refuses these up front, as the other config errors (usage errors)."""
  errors = []
  fix_rfm = ( "lower l or raise d" if dfx.l > dfx.d else
              "change the DFXConfig field it names" )
  _unit_check( errors, "l <= d" if dfx.l > dfx.d else "register file manager", fix_rfm,
               check_rfm_params, dfx, 0, cores )
  _unit_check( errors, "ISA field widths", "or lower the DFXConfig size it names",
               check_config_fits, dfx )
  return errors
