"""Where everything lives: register-file entries, HBM and DDR addresses.

The layout is plain data (JSON-able dicts of ints) so it travels in the image
file to every level and to the FPGA host, and the per-step program emitter
needs nothing else.

Units: register addresses are entries of d elements; HBM/DDR addresses are
memory words (`DFXConfig.mem_word_elems` elements; a d-element vector is
`vec_words` of them); sizes of weight streams are d-element
vectors.

HBM (per core), in the order the DMA streams it:
  for each layer: c_attn, attn c_proj, c_fc, mlp c_proj weights (this
  core's columns, a row-major grid of d x l tiles, `tiling` grid layout;
  with `proj_row_split` the two c_proj are this core's rows, every column),
  then the LM head (wte^T, or lm_head.weight^T when untied; this core's
  vocabulary columns); then the K/V caches, also tile grids:
  K^T per (layer, head): column-major (tile c holds tokens [c*l, c*l+l),
  its row chunks consecutive) so that T tokens are a prefix;
  V per (layer, head): row-major (tokens [r*d, r*d+d) in row chunk r)
  so that a new row chunk is appended at the end.
One `hbm_read mpu` per matrix instruction streams a grid in tile order.
DDR (per core): wte and wpe rows (each padded to whole vectors), LayerNorm
  parameters, this core's biases (the c_proj's whole with `proj_row_split`),
  constants, and the logits output slot.
  With `ln_fold` a layer has no ln_1 parameters: c_attn's weights are
  gamma-folded, b_qkv holds the folded bias and c_qkv the folded weights'
  column sums (`numerics.fold_layernorm`), this core's columns; with
  `ln2_fold` likewise no ln_2 parameters: b_fc holds c_fc's folded bias and
  cs_fc its column sums.
"""

from ..config import DFXConfig, GPT2Config
from .partition import Partition
from ..lib.arith import ceil_div
from ..lib.tiling import band_width, stream_vectors


class Allocator:
  """Bump allocator of named regions; sizes in units (entries or words).
  Capacities are `checks.check_limits`' business (one error for all)."""

  def __init__( s ):
    s.top = 0
    s.regions = {}

  def take( s, name, size ):
    s.regions[ name ] = s.top
    s.top += size
    return s.regions[ name ]


# The registers one attention head uses (its scores, probabilities and the
# softmax's two scalars); `attn_head_pipeline` gives a second set of them,
# named with the suffix ".1".
HEAD_SET_REGS = ( "scores", "probs", "s0", "s1" )


def unfolded_layernorms( dfx ):
  """A layer's LayerNorms whose parameters the DDR holds (a folded one's
  live in its matrix's weights, column sums and bias)."""
  return tuple( ln for ln, folded in ( ( "ln_1", dfx.ln_fold ), ( "ln_2", dfx.ln2_fold ) )
                if not folded )


def words_of_vectors( n_vectors, dfx ):
  return n_vectors * dfx.entry_words


def plan_layout( gpt: GPT2Config, dfx: DFXConfig, cores: int, max_tokens: int = None ):
  """Return the layout dict shared by every core (cores differ in contents only)."""
  part = Partition( gpt, dfx, cores )
  d, l = dfx.d, dfx.l
  E, hd, Hc = gpt.n_embd, gpt.head_dim, part.heads_per_core
  T = max_tokens or gpt.n_positions
  ents = lambda n: ceil_div( n, d )                       # noqa: E731
  vec_words = words_of_vectors( 1, dfx )

  # register file (entries)
  rf = Allocator()
  for name in ( "inv_n", "eps", "s0", "s1", "s2", "s3" ):
    rf.take( name, 1 )
  for name in ( "x", "h", "dev", "y", "sq", "gamma", "beta", "wpe" ):
    rf.take( name, ents( E ) )
  rf.take( "qkv", ents( 3 * Hc * hd ) )
  rf.take( "b_qkv", ents( 3 * Hc * hd ) )
  rf.take( "a", ents( part.attn.padded ) )
  rf.take( "scores", ents( T ) )
  rf.take( "probs", ents( T ) )
  rf.take( "o", ents( part.attn_proj.padded ) )
  rf.take( "b_o", ents( part.attn_proj.seg ) )
  rf.take( "f", ents( part.fc.padded ) )
  rf.take( "b_fc", ents( part.fc.seg ) )
  rf.take( "m", ents( part.mlp_proj.padded ) )
  rf.take( "b_m", ents( part.mlp_proj.seg ) )
  rf.take( "logits", ents( part.vocab.seg ) )
  if part.row_split:
    # proj_row_split's all-reduce (`emit.StepEmitter.row_slice`): every
    # core's full-width partial side by side, as the sync gathers them, and
    # the whole bias; after the default's regions, so they are unchanged
    rf.take( "parts", cores * ents( E ) )
    rf.take( "b_proj", ents( E ) )
  if dfx.attn_head_pipeline:
    # the second register set of the pipelined heads (`emit.StepEmitter.heads`),
    # after every other region so the rest of the layout is the default's
    for name in HEAD_SET_REGS:
      rf.take( f"{name}.1", ents( T ) if name in ( "scores", "probs" ) else 1 )
  if dfx.ln_fold:
    # ln_1 folded into c_attn: the weights' column sums (the folded bias goes
    # into b_qkv), after every other region so the rest is the default's
    rf.take( "c_qkv", ents( 3 * Hc * hd ) )
  if dfx.ln2_fold:
    # ln_2 folded into c_fc: its column sums (the folded bias goes into b_fc)
    rf.take( "cs_fc", ents( part.fc.seg ) )

  # HBM (words): weight streams, then K/V caches
  hbm = Allocator()
  mats = {}

  def matrix( name, rows, cols ):
    band = band_width( cols, l, dfx.psum_entries )
    n = stream_vectors( rows, cols, d, l )
    mats[ name ] = dict( addr=hbm.take( name, words_of_vectors( n, dfx ) ),
                         rows=rows, cols=cols, band=band, vecs=n )

  # the c_proj matrices: this core's columns, or with the row split its
  # rows (its heads', its c_fc columns') at the full width
  o_shape, m_shape = ( ( part.attn.seg, E ), ( part.fc.seg, E ) ) if part.row_split else \
    ( ( gpt.attn_dim, part.attn_proj.seg ), ( gpt.n_inner, part.mlp_proj.seg ) )
  for i in range( gpt.n_layer ):
    matrix( f"h{i}.c_attn", E, 3 * Hc * hd )
    matrix( f"h{i}.attn_proj", *o_shape )
    matrix( f"h{i}.c_fc", E, part.fc.seg )
    matrix( f"h{i}.mlp_proj", *m_shape )
  matrix( "lm_head", E, part.vocab.seg )
  k_vecs = ceil_div( T, l ) * l * ( hd // d )
  v_vecs = ceil_div( T, d ) * ceil_div( hd, l ) * l
  kv = {}
  for i in range( gpt.n_layer ):
    for j in range( Hc ):
      kv[ f"h{i}.k{j}" ] = hbm.take( f"h{i}.k{j}", words_of_vectors( k_vecs, dfx ) )
      kv[ f"h{i}.v{j}" ] = hbm.take( f"h{i}.v{j}", words_of_vectors( v_vecs, dfx ) )

  # DDR (words)
  ddr = Allocator()
  row_words = words_of_vectors( ents( E ), dfx )
  ddr.take( "wte", gpt.vocab_size * row_words )
  ddr.take( "wpe", gpt.n_positions * row_words )
  for i in range( gpt.n_layer ):
    for ln in unfolded_layernorms( dfx ):
      for name in ( "g", "b" ):
        ddr.take( f"h{i}.{ln}.{name}", row_words )
    ddr.take( f"h{i}.b_qkv", words_of_vectors( ents( 3 * Hc * hd ), dfx ) )
    if dfx.ln_fold:
      ddr.take( f"h{i}.c_qkv", words_of_vectors( ents( 3 * Hc * hd ), dfx ) )
    ddr.take( f"h{i}.b_o", words_of_vectors( ents( o_shape[1] ), dfx ) )
    ddr.take( f"h{i}.b_fc", words_of_vectors( ents( part.fc.seg ), dfx ) )
    if dfx.ln2_fold:
      ddr.take( f"h{i}.cs_fc", words_of_vectors( ents( part.fc.seg ), dfx ) )
    ddr.take( f"h{i}.b_m", words_of_vectors( ents( m_shape[1] ), dfx ) )
  ddr.take( "ln_f.g", row_words )
  ddr.take( "ln_f.b", row_words )
  ddr.take( "consts", 2 * vec_words )
  ddr.take( "logits", words_of_vectors( ents( part.vocab.seg ), dfx ) )

  return dict(
    cores=cores, max_tokens=T, d=d, l=l, psum_entries=dfx.psum_entries,
    vec_words=vec_words, row_words=row_words,
    rf=rf.regions, rf_entries=rf.top,
    hbm=dict( matrices=mats, kv=kv, k_vecs=k_vecs, v_vecs=v_vecs, words=hbm.top ),
    ddr=dict( regions=ddr.regions, words=ddr.top ),
    split=dict( heads_per_core=Hc, attn=part.attn.seg, attn_proj=part.attn_proj.seg,
                fc=part.fc.seg, mlp_proj=part.mlp_proj.seg, vocab=part.vocab.seg ),
    padding=part.padding_report(),
    **( dict( weight_read_ahead=1 ) if dfx.weight_read_ahead else {} ),   # `read_ahead`
    # the pipelined heads' order depends on what the weight FIFO holds
    **( dict( weight_fifo_entries=dfx.weight_fifo_entries )
        if dfx.attn_head_pipeline or dfx.weight_read_ahead else {} ),
    **( dict( dma_inst_queue=dfx.dma_inst_queue )
        if dfx.weight_read_ahead and dfx.dma_inst_queue else {} ),
  )
