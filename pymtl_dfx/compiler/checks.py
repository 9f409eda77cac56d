"""Whether a model fits the machine: `check_model` before its layout, from
the layouts of 1 and 2 layers (O(1) in the model's sizes, `linear_layout`),
and `check_limits` on the layout itself, naming every limit it breaks.
The rules of each unit and memory are `limits`'; this module applies them
to a model on N cores."""

import dataclasses
from types import SimpleNamespace

from ..bounds import MAX_CORES, _join, _size, show
from ..config import CompileError
from ..isa.fields import POS, VECS
from ..units.memory.msgs import memory_spec
from ..units.regfile.ports import matrix_error
from .layout import plan_layout
from .limits import capacity_error, config_errors, shape_errors


def linear_layout( gpt, dfx, cores, max_tokens ):
  """Per core: (HBM words, DDR words) of the model's layout, and the HBM
  words of one more layer, from the layouts of 1 and 2 layers: a layout
  grows linearly in n_layer, so this is the layout's own rule, in O(1)."""
  one, two = ( plan_layout( dataclasses.replace( gpt, n_layer=n ), dfx, cores, max_tokens )
               for n in ( 1, 2 ) )
  n = gpt.n_layer - 1
  per_layer = two["hbm"]["words"] - one["hbm"]["words"]
  hbm = one["hbm"]["words"] + n * per_layer
  ddr = one["ddr"]["words"] + n * ( two["ddr"]["words"] - one["ddr"]["words"] )
  return hbm, ddr, per_layer


def model_errors( gpt, dfx, cores, max_tokens=None ):
  """Every bound of the model on `cores` cores of `dfx` that fails, each one
  line; O(1) in the model's sizes."""
  errors = []
  # the register file holds x, h, dev, y, sq, gamma, beta and wpe: 8 vectors
  # of n_embd (layout.plan_layout), besides everything else
  lim = dfx.vreg_entries * dfx.d // 8
  if gpt.n_embd > lim:
    errors.append( f"n_embd={show( gpt.n_embd )} is above its bound {lim} (vreg_entries x d / 8: "
                   f"the register file holds 8 vectors of n_embd)" )
  if errors or shape_errors( gpt, dfx, cores ):
    return errors        # shape errors: the partition's own message
  T = max_tokens or gpt.n_positions
  hbm_used, ddr_used, per_layer = linear_layout( gpt, dfx, cores, max_tokens )
  why = capacity_error( dfx, "hbm", hbm_used )
  if why:
    hbm = memory_spec( dfx, "hbm" ).words
    lim = max( 0, ( hbm - ( hbm_used - gpt.n_layer * per_layer ) ) // per_layer )
    errors.append( f"{why}: n_layer={show( gpt.n_layer )} is above its bound {lim} on "
                   f"{cores} core(s) (each layer's weights and K/V cache for {T} tokens take "
                   f"{_size( per_layer * dfx.mem_word_bytes )} of each card's "
                   f"{_size( hbm * dfx.mem_word_bytes )} of HBM, hbm_channels x "
                   f"hbm_channel_mb; the U280 has 8 GB)" )
  why = capacity_error( dfx, "ddr", ddr_used )
  if why:
    errors.append( why )
  return errors


def check_model( gpt, dfx, cores, max_tokens=None ):
  errors = model_errors( gpt, dfx, cores, max_tokens )
  if errors:
    raise CompileError( "cannot compile for DFX: " + _join( errors ) )


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
