"""Per-core HBM and DDR images from FP16 GPT-2 weights and a layout."""

import numpy as np

from .. import numerics
from ..lib.arith import ceil_div
from .layout import unfolded_layernorms
from .partition import Partition
from ..lib.tiling import to_grid

F16 = np.float16


def _columns( w, lo, hi, seg ):
  """Columns [lo, hi) of w, zero-padded to seg columns."""
  out = np.zeros( w.shape[:-1] + ( seg, ), F16 )
  out[ ..., : hi - lo ] = w[ ..., lo:hi ]
  return out


def _rows( w, lo, hi, seg ):
  """Rows [lo, hi) of w, zero-padded to seg rows."""
  out = np.zeros( ( seg, ) + w.shape[1:], F16 )
  out[ : hi - lo ] = w[ lo:hi ]
  return out


def _qkv_columns( w, part, core ):
  """This core's q | k | v head columns (zero for padding heads)."""
  A, hd, Hc = part.gpt.attn_dim, part.gpt.head_dim, part.heads_per_core
  out = np.zeros( w.shape[:-1] + ( 3 * Hc * hd, ), F16 )
  for which in range( 3 ):
    for j, h in enumerate( part.real_heads( core ) ):
      dst = which * Hc * hd + ( h - core * Hc ) * hd
      out[ ..., dst:dst + hd ] = w[ ..., which * A + h * hd: which * A + ( h + 1 ) * hd ]
  return out


class _Image:
  def __init__( s, words, elems ):
    s.mem = np.zeros( ( words, elems ), F16 )

  def put( s, addr, values ):
    E = s.mem.shape[1]
    flat = np.asarray( values, F16 ).reshape( -1 )
    n_words = ceil_div( flat.size, E )
    buf = np.zeros( n_words * E, F16 )
    buf[ :flat.size ] = flat
    s.mem[ addr: addr + n_words ] = buf.reshape( n_words, E )


def _rows_padded( m, d ):
  """Each row padded to a whole number of d-element vectors."""
  width = ceil_div( m.shape[1], d ) * d
  out = np.zeros( ( m.shape[0], width ), F16 )
  out[ :, :m.shape[1] ] = m
  return out


def build_images( weights16, dfx, layout, core ):
  """(hbm, ddr) arrays of shape [words, dfx.mem_word_elems] FP16 for one core."""
  gpt = weights16.config
  part = Partition( gpt, dfx, layout["cores"] )
  d, l = dfx.d, dfx.l
  mats = layout["hbm"]["matrices"]
  hbm = _Image( layout["hbm"]["words"], dfx.mem_word_elems )
  ddr = _Image( layout["ddr"]["words"], dfx.mem_word_elems )
  regions = layout["ddr"]["regions"]

  def stream( name, w ):
    m = mats[ name ]
    assert w.shape == ( m["rows"], m["cols"] ), ( name, w.shape )
    hbm.put( m["addr"], to_grid( w, d, l ) )    # row-major tile grid

  for i in range( gpt.n_layer ):
    p = lambda suffix: weights16.layer( i, suffix )           # noqa: E731
    w_qkv, b_qkv = p( "attn.c_attn.weight" ), p( "attn.c_attn.bias" )
    if dfx.ln_fold:
      w_qkv, c_qkv, b_qkv = numerics.fold_layernorm( p( "ln_1.weight" ), p( "ln_1.bias" ),
                                                     w_qkv, b_qkv )
      ddr.put( regions[ f"h{i}.c_qkv" ], _qkv_columns( c_qkv, part, core ) )
    stream( f"h{i}.c_attn", _qkv_columns( w_qkv, part, core ) )
    ddr.put( regions[ f"h{i}.b_qkv" ], _qkv_columns( b_qkv, part, core ) )
    for name, split, wname in ( ( "attn_proj", part.attn_proj, "attn.c_proj" ),
                                ( "c_fc", part.fc, "mlp.c_fc" ),
                                ( "mlp_proj", part.mlp_proj, "mlp.c_proj" ) ):
      bias_key = { "attn_proj": "b_o", "c_fc": "b_fc", "mlp_proj": "b_m" }[ name ]
      if part.row_split and name != "c_fc":
        # the rows of this core's heads (attn) or of its c_fc columns (mlp),
        # every column; the whole bias
        rows = part.attn if name == "attn_proj" else part.fc
        stream( f"h{i}.{name}", _rows( p( wname + ".weight" ), *rows.real( core ), rows.seg ) )
        ddr.put( regions[ f"h{i}.{bias_key}" ], p( wname + ".bias" ) )
        continue
      lo, hi = split.real( core )
      w, b = p( wname + ".weight" ), p( wname + ".bias" )
      if name == "c_fc" and dfx.ln2_fold:
        w, c_fc, b = numerics.fold_layernorm( p( "ln_2.weight" ), p( "ln_2.bias" ), w, b )
        ddr.put( regions[ f"h{i}.cs_fc" ], _columns( c_fc, lo, hi, split.seg ) )
      stream( f"h{i}.{name}", _columns( w, lo, hi, split.seg ) )
      ddr.put( regions[ f"h{i}.{bias_key}" ], _columns( b, lo, hi, split.seg ) )
    for ln in unfolded_layernorms( dfx ):
      ddr.put( regions[ f"h{i}.{ln}.g" ], p( ln + ".weight" ) )
      ddr.put( regions[ f"h{i}.{ln}.b" ], p( ln + ".bias" ) )

  lo, hi = part.vocab.real( core )
  # wte^T, or the untied lm_head.weight^T
  stream( "lm_head", _columns( weights16.lm_head.T, lo, hi, part.vocab.seg ) )
  ddr.put( regions["wte"], _rows_padded( weights16["wte.weight"], d ) )
  ddr.put( regions["wpe"], _rows_padded( weights16["wpe.weight"], d ) )
  ddr.put( regions["ln_f.g"], weights16["ln_f.weight"] )
  ddr.put( regions["ln_f.b"], weights16["ln_f.bias"] )
  consts = np.zeros( 2 * d, F16 )
  consts[0] = numerics.inv_count( gpt.n_embd )
  consts[d] = F16( gpt.layer_norm_epsilon )
  ddr.put( regions["consts"], consts )
  return hbm.mem, ddr.mem
