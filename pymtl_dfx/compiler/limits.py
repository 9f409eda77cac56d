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

from types import SimpleNamespace

from ..config import ConfigError
from ..isa import check_config_fits
from ..isa.fields import POS, VECS
from ..units.dma.msgs import DMAConfigError
from ..units.memory.msgs import memory_spec
from ..units.regfile.ports import RFMError, check_rfm_params, matrix_error
from ..units.router.RouterRTL import check_router_params


class CompileError( ConfigError ):
  """The model does not fit the DFX configuration; the message names each
  limit, the value needed, the value available and what to change."""


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
  (None when they do); `bounds.check_model` says the same before a layout."""
  from ..bounds import U280_DDR_BYTES, show
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


def matrix_shapes( gpt, layout ):
  """{name: (rows, cols)} of every matrix instruction a step can emit, at
  the largest attention (position max_tokens - 1)."""
  shapes = { name: ( m["rows"], m["cols"] ) for name, m in layout["hbm"]["matrices"].items() }
  T, hd = layout["max_tokens"], gpt.head_dim
  shapes["attention q K^T"] = ( hd, T )
  shapes["attention p V"] = ( T, hd )
  return shapes


def _longest_read( layout ):
  """(vecs, what) of the longest `hbm_read` a step emits: a whole weight
  matrix's slice, or a head's K or V cache."""
  hbm = layout["hbm"]
  return max( [ ( m["vecs"], f"weight stream {name}" ) for name, m in hbm["matrices"].items() ]
              + [ ( hbm["k_vecs"], "a head's K cache" ), ( hbm["v_vecs"], "a head's V cache" ) ] )


def _cores_for_reads( gpt, dfx, cores, max_tokens ):
  """The fewest cores past `cores` whose longest hbm_read fits the vecs
  field, or None if none up to the router's 255 does (a head's K and V
  caches do not shrink with more cores); only on this error's path."""
  from ..bounds import MAX_CORES
  from .layout import plan_layout
  for c in range( cores + 1, MAX_CORES + 1 ):
    try:
      if _longest_read( plan_layout( gpt, dfx, c, max_tokens ) )[0] <= VECS.max:
        return c
    except CompileError:
      continue
  return None


def check_limits( gpt, dfx, cores, layout ):
  """Raise CompileError naming every limit the compiled model breaks."""
  errors = shape_errors( gpt, dfx, cores )
  if errors:
    # the rest is read off a layout that these make meaningless
    raise CompileError( "cannot compile for DFX: " + "; ".join( errors ) )

  if dfx.cores != cores:
    errors.append( f"core count: compiled for {cores} cores but DFXConfig.cores="
                   f"{dfx.cores}: the scoreboard sizes a sync's footprint (cores * len "
                   f"elements) from DFXConfig.cores; use DFXConfig(cores={cores})" )
  errors += config_errors( dfx, cores )

  # x buffer: every matrix instruction's input fits one of the two
  # buffers; one line, for the instruction needing the most entries
  bad = [ ( rows, name, cols, why ) for name, ( rows, cols ) in matrix_shapes( gpt, layout ).items()
          for why in [ matrix_error( SimpleNamespace( rows=rows, cols=cols ), dfx ) ] if why ]
  if bad:
    rows, name, cols, why = max( bad, key=lambda b: b[0] )
    fix = "compile a shorter context (max_tokens) or raise mreg_entries" \
      if name == "attention p V" else "raise mreg_entries"
    more = f" (and {len( bad ) - 1} more matrices)" if len( bad ) > 1 else ""
    errors.append( f"x buffer: {name} ({rows} x {cols}){more}: {why}; {fix}" )

  have = dfx.vreg_entries
  need = layout["rf_entries"]
  second = layout["rf"].get( "scores.1" )     # attn_head_pipeline's second set
  parts = layout["rf"].get( "parts" )         # proj_row_split's all-reduce
  parts_end = need if second is None else second
  if parts is not None and parts <= have < parts_end:
    errors.append( f"register file: proj_row_split=1 needs the {cores} cores' full-width "
                   f"partials and the bias of the all-reduce ({parts_end - parts} entries of "
                   f"d={dfx.d}, up to v{parts_end - 1}), vreg_entries={have} available (the "
                   f"rest of the layout takes {parts}); set proj_row_split=0, raise "
                   f"vreg_entries or compile a shorter context" )
  elif second is not None and second <= have < need:
    errors.append( f"register file: attn_head_pipeline=1 needs a second set of scores, "
                   f"probs and two scalars ({need - second} entries of d={dfx.d}, up to "
                   f"v{need - 1}), vreg_entries={have} available (the rest of the layout "
                   f"takes {second}); set attn_head_pipeline=0, raise vreg_entries or "
                   f"compile a shorter context" )
  elif need > have:
    pipelined = "" if second is None else " (twice with attn_head_pipeline=1)"
    errors.append( f"register file: the layout needs {need} entries of d={dfx.d} (highest "
                   f"v{need - 1}), vreg_entries={have} available; raise vreg_entries or "
                   f"compile a shorter context (scores and probs take "
                   f"2 * ceil(max_tokens / d) entries{pipelined})" )

  T = layout["max_tokens"]
  if not 1 <= T <= gpt.n_positions:
    errors.append( f"context: max_tokens={T} needs {T} position embeddings, the model has "
                   f"n_positions={gpt.n_positions}; compile max_tokens <= {gpt.n_positions}" )
  if T - 1 > POS.max:
    errors.append( f"context: position {T - 1} needs a pos field of "
                   f"{( T - 1 ).bit_length()} bits, {POS.bits_name}={POS.bits} available; "
                   f"compile max_tokens <= {POS.max + 1}" )

  hbm = layout["hbm"]
  longest = _longest_read( layout )
  if longest[0] > VECS.max:
    need = _cores_for_reads( gpt, dfx, cores, T )
    fix = ( f"use {need} or more cores (each streams 1/cores of the columns)" if need else
            "more cores do not shorten it; compile a shorter context" )
    errors.append( f"DMA transfer: hbm_read of {longest[1]} needs vecs={longest[0]} on {cores} "
                   f"core(s), the vecs field holds {VECS.max} ({VECS.bits_name}={VECS.bits}: "
                   f"one DMA instruction streams it whole); {fix}" )

  for mem, used in ( ( "hbm", hbm["words"] ), ( "ddr", layout["ddr"]["words"] ) ):
    why = capacity_error( dfx, mem, used )
    if why:
      errors.append( why )
  if errors:
    raise CompileError( "cannot compile for DFX: " + "; ".join( errors ) )
