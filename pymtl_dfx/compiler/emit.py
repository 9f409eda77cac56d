"""Per-core instruction streams for one token step.

DFX processes the prompt one token at a time, so a step is the unit of
work: the program for (core, token, position) computes the token's pass
through every decoder layer, appends its K and V, and, when asked, the
core's slice of the logits.  The program only depends on the layout, the
token id (its embedding row) and the position (K/V rows, attention length),
so the host emits one per step from the layout alone.

The sequence is exactly `pymtl_dfx.gpt2.dfx_forward`'s order, with the
matrix products split over cores (`partition`) and the four all-gathers per
layer of the paper; with `proj_row_split` (the layout's `parts` registers)
the two c_proj matrices split by rows and two all-reduces per layer
(`row_slice`).

Dependencies: register hazards are the scoreboard's (it compares register
ranges), the DMA -> MPU weight stream is a FIFO, and K/V writes and reads go
through the one in-order DMA, so no wait flags are needed.  Every matrix
instruction has exactly one `hbm_read mpu` (its tile grid: rows, vecs,
cmajor), right before it; the DMA walks the grid in tile order itself.  Two
reads per matrix would deadlock an in-order core: a read finishes only when
the MPU has taken its last tile, and the matrix instruction would sit
behind the second read.  With `weight_read_ahead` a pass moves the reads up (`read_ahead`).
With `attn_head_pipeline` a layer's heads interleave (`heads`); when a
head's V fits in the weight FIFO the next heads' DMA work sits in the
softmax's reduction wait, between V's read and its matrix
(`heads_in_reduction_wait`, safe by `read_ahead.pending_tiles`).  With
`ln_fold` / `ln2_fold` ln_1 / ln_2 is folded into the next matrix
(`folded`), ln_2's with the VPU's gelu after the correction.  Results consumed once by the next VPU instruction are chained
(squares into the variance sum, score - max into exp).
"""

import math

import numpy as np

from ..isa import ComputeOp as C, DmaOp as D, Kind, PostOp, RouterOp as R, make, op_of
from ..lib.arith import ceil_div
from .layout import HEAD_SET_REGS
from .read_ahead import read_ahead, read_tiles


class StepEmitter:

  def __init__( s, layout, gpt ):
    s.lay = layout
    s.gpt = gpt
    s.d, s.l = layout["d"], layout["l"]
    s.rf = layout["rf"]
    s.ddr = layout["ddr"]["regions"]
    s.mats = layout["hbm"]["matrices"]
    s.kv = layout["hbm"]["kv"]
    s.vw = layout["vec_words"]
    s.split = layout["split"]
    s.E = gpt.n_embd
    s.hd = gpt.head_dim
    s.A = gpt.attn_dim        # the attention's width (n_embd in GPT-2 itself)
    s.Hc = s.split["heads_per_core"]
    s.scale = float( np.float16( 1.0 / math.sqrt( s.hd ) ) )

  def ents( s, n ):
    return ceil_div( n, s.d )

  # -- building blocks -------------------------------------------------------

  def vec( s, op, dst, src1, n, src2=None, bcast=False, chain=False ):
    """A VPU instruction.  `chain`: the result streams into the next compute
    instruction (whose src1 names this dst) and is dead afterwards."""
    fields = dict( dst=dst, src1=src1, len=n, chain=int( chain ) )
    if src2 is not None:
      fields.update( src2=src2, bcast=int( bcast ) )
    return make( op, **fields )

  def ddr_read( s, reg, region, n_elems ):
    return make( D.DDR_READ, rf=reg, addr=s.ddr[ region ], vecs=s.ents( n_elems ) )

  def weight_stream( s, name ):
    m = s.mats[ name ]
    return make( D.HBM_READ, mpu=1, addr=m["addr"], vecs=m["vecs"], rows=m["rows"] )

  def layernorm( s, src, dst, g_region, b_region ):
    rf, E = s.rf, s.E
    return [ s.ddr_read( rf["gamma"], g_region, E ),
             s.ddr_read( rf["beta"], b_region, E ) ] + s.layernorm_vpu( src, dst )

  def layernorm_vpu( s, src, dst ):
    """`numerics.layernorm` as VPU instructions (gamma, beta already loaded)."""
    rf, E = s.rf, s.E
    return s.layernorm_stats_vpu( src ) + [
      s.vec( C.MUL, dst, rf["y"], E, rf["s2"], bcast=True ),
      s.vec( C.MUL, dst, dst, E, rf["gamma"] ),
      s.vec( C.ADD, dst, dst, E, rf["beta"] ),
    ]

  def layernorm_stats_vpu( s, src ):
    """`numerics.layernorm_stats`: the mean into s0, s into s1, r into s2
    (y = (src - mean) * s into y; dev, sq and s3 are scratch)."""
    rf, E = s.rf, s.E
    return [
      s.vec( C.ACCUM, rf["s0"], src, E ),
      s.vec( C.MUL, rf["s0"], rf["s0"], 1, rf["inv_n"] ),
      s.vec( C.SUB, rf["dev"], src, E, rf["s0"], bcast=True ),
      s.vec( C.REDMAXABS, rf["s1"], rf["dev"], E ),
      s.vec( C.INVPOW2, rf["s1"], rf["s1"], 1 ),
      s.vec( C.MUL, rf["y"], rf["dev"], E, rf["s1"], bcast=True ),
      s.vec( C.MUL, rf["sq"], rf["y"], E, rf["y"], chain=True ),
      s.vec( C.ACCUM, rf["s2"], rf["sq"], E ),
      s.vec( C.MUL, rf["s2"], rf["s2"], 1, rf["inv_n"] ),
      s.vec( C.MUL, rf["s3"], rf["eps"], 1, rf["s1"] ),
      s.vec( C.MUL, rf["s3"], rf["s3"], 1, rf["s1"] ),
      s.vec( C.ADD, rf["s2"], rf["s2"], 1, rf["s3"] ),
      s.vec( C.RSQRT, rf["s2"], rf["s2"], 1 ),
    ]

  def folded( s, mat_cls, matrix, dst, cols, csum, bias ):
    """A LayerNorm folded into the matrix that follows it (`ln_fold`,
    `ln2_fold`; `numerics.fold_correct`) as [(op class, instructions)]: the
    gamma-folded weights on the un-normalised x (an MM: the folded bias
    comes after the correction) into `dst`, then the statistics, which issue
    while the MPU runs (in-order issue: the matrix only needs x and dst, the
    statistics x and their scratch registers), then the per-column
    correction on dst.  `csum`, `bias`: (register, DDR region) of the
    weights' column sums and the folded bias.  Their DDR reads come after
    the statistics: the in-order DMA takes them once the weight stream is
    done, and the statistics must not wait behind them.  The column sums'
    product with the mean needs no matrix output, so it runs while the
    matrix drains."""
    rf, E = s.rf, s.E
    ( c_reg, c_region ), ( b_reg, b_region ) = csum, bias
    return [
      ( mat_cls, [
        s.weight_stream( matrix ),
        make( C.MM, dst=dst, src1=rf["x"], rows=E, cols=cols ),
      ] ),
      ( "layernorm", s.layernorm_stats_vpu( rf["x"] ) + [
        s.vec( C.MUL, rf["s3"], rf["s1"], 1, rf["s2"] ),
        s.ddr_read( c_reg, c_region, cols ),
        s.ddr_read( b_reg, b_region, cols ),
        s.vec( C.MUL, c_reg, c_reg, cols, rf["s0"], bcast=True ),
        s.vec( C.SUB, dst, dst, cols, c_reg ),
        s.vec( C.MUL, dst, dst, cols, rf["s3"], bcast=True ),
        s.vec( C.ADD, dst, dst, cols, b_reg ),
      ] ),
    ]

  def folded_qkv( s, layer ):
    """ln_1 folded into c_attn (`ln_fold`): `folded` into qkv."""
    rf, cols = s.rf, 3 * s.Hc * s.hd
    return s.folded( "attention", f"h{layer}.c_attn", rf["qkv"], cols,
                     ( rf["c_qkv"], f"h{layer}.c_qkv" ), ( rf["b_qkv"], f"h{layer}.b_qkv" ) )

  def folded_fc( s, layer, core, gather ):
    """ln_2 folded into c_fc (`ln2_fold`): `folded` into this core's
    segment of f, then the VPU's GELU on it (the correction comes between
    the matrix and its GELU, so no post-op), then the all-gather unless
    `gather` is False (a row split's input)."""
    rf, seg = s.rf, s.split["fc"]
    dst = rf["f"] + core * s.ents( seg )
    out = s.folded( "ffn", f"h{layer}.c_fc", dst, seg,
                    ( rf["cs_fc"], f"h{layer}.cs_fc" ), ( rf["b_fc"], f"h{layer}.b_fc" ) )
    return out + [ ( "ffn", [ s.vec( C.GELU, dst, dst, seg ) ]
                     + ( [ make( R.SYNC, rf=rf["f"], len=seg ) ] if gather else [] ) ) ]

  def column_slice( s, layer, name, src, rows, out_reg, split_key, bias_region,
                    core, post=PostOp.NONE, gather=True ):
    """conv1d of this core's columns into its segment of `out_reg`, then the
    all-gather that gives every core the whole vector (not with
    `gather=False`: a row split's input, each core only needs its own)."""
    seg = s.split[ split_key ]
    rf = s.rf
    bias_reg = rf[ { "attn_proj": "b_o", "fc": "b_fc", "mlp_proj": "b_m" }[ split_key ] ]
    return [
      s.ddr_read( bias_reg, bias_region, seg ),
      s.weight_stream( f"h{layer}.{name}" ),
      make( C.CONV1D, dst=out_reg + core * s.ents( seg ), src1=src, rows=rows,
            cols=seg, bias=bias_reg, post=int( post ) ),
    ] + ( [ make( R.SYNC, rf=out_reg, len=seg ) ] if gather else [] )

  def row_slice( s, layer, name, src, rows, out_reg, bias_region, core ):
    """`numerics.row_split_conv1d` (`proj_row_split`): this core's rows
    times its own segment `src` of the input (no gather before it), a
    full-width partial into its slot of `parts`, then the all-reduce: one
    sync gathers every core's partial side by side (segments of a whole
    number of entries, so core k's starts at parts + k * ents(E)), and the
    VPU adds them in core order 0, 1, ..., cores-1 (the same on every core,
    so every core holds the same bits), then the bias, into `out_reg`."""
    rf, E = s.rf, s.E
    pitch = s.ents( E )
    parts = rf["parts"]
    out = [
      s.ddr_read( rf["b_proj"], bias_region, E ),
      s.weight_stream( f"h{layer}.{name}" ),
      make( C.MM, dst=parts + core * pitch, src1=src, rows=rows, cols=E ),
      make( R.SYNC, rf=parts, len=pitch * s.d ),
    ]
    for k in range( 1, s.lay["cores"] ):
      out.append( s.vec( C.ADD, out_reg, out_reg if k > 1 else parts, E, parts + k * pitch ) )
    out.append( s.vec( C.ADD, out_reg, out_reg, E, rf["b_proj"] ) )
    return out

  def head_regs( s, j ):
    """The register set of local head j ({scores, probs, s0, s1}): the one
    set, or with the layout's second set (`attn_head_pipeline`) set j % 2."""
    suffix = ".1" if j % 2 and "scores.1" in s.rf else ""
    return { name: s.rf[ name + suffix ] for name in HEAD_SET_REGS }

  def head_parts( s, layer, j, core, pos, regs ):
    """Attention of local head j in its three parts: (append K and V, then
    the scores; the softmax; p V), on register set `regs`."""
    rf, d, l, hd, Hc = s.rf, s.d, s.l, s.hd, s.Hc
    T = pos + 1
    q = rf["qkv"] + s.ents( j * hd )
    k = rf["qkv"] + s.ents( ( Hc + j ) * hd )
    v = rf["qkv"] + s.ents( ( 2 * Hc + j ) * hd )
    k_base, v_base = s.kv[ f"h{layer}.k{j}" ], s.kv[ f"h{layer}.v{j}" ]
    R_k = hd // d
    c, jj = divmod( pos, l )
    score = [ make( D.HBM_WRITE, rf=k + r, addr=k_base + ( ( c * R_k + r ) * l + jj ) * s.vw,
                    vecs=1 ) for r in range( R_k ) ]
    score.append( make( D.HBM_WRITE, rf=v, addr=v_base, vecs=s.ents( hd ), tr=1, pos=pos ) )
    # K^T [hd, T]: column-major grid, so the first ceil(T/l) column tiles are a prefix
    score.append( make( D.HBM_READ, mpu=1, addr=k_base, vecs=R_k * ceil_div( T, l ) * l,
                        rows=hd, cmajor=1 ) )
    score.append( make( C.MASKEDMM, dst=regs["scores"], src1=q, rows=hd, cols=T,
                        scale=s.scale, mask=T ) )
    # V [T, hd]: row-major grid, a new row chunk is appended at the end
    pv = [ make( D.HBM_READ, mpu=1, addr=v_base,
                 vecs=ceil_div( T, d ) * ceil_div( hd, l ) * l, rows=T ),
           make( C.MM, dst=rf["a"] + s.ents( ( core * Hc + j ) * hd ),
                 src1=regs["probs"], rows=T, cols=hd ) ]
    return score, s.softmax_vpu( T, regs ), pv

  def head( s, layer, j, core, pos ):
    """Attention of local head j: append K and V, scores, softmax, p V."""
    score, soft, pv = s.head_parts( layer, j, core, pos, s.head_regs( j ) )
    return score + soft + pv

  def heads( s, layer, core, pos ):
    """Every local head of `layer`.  One register set: one head after
    another.  Two (`attn_head_pipeline`): software pipelined, score(0),
    score(1), softmax(0), pv(0), score(2), softmax(1), pv(1), ...,
    softmax(last), pv(last), heads alternating between the sets.  Issue is
    in order and an instruction waiting for its operands holds every later
    one, so the next head's score is placed before this head's softmax:
    the MPU computes score(j + 1) while the VPU runs softmax(j), where one
    set makes the MPU wait for every softmax.  (score(j + 1) placed after
    softmax(j) would issue only once softmax(j)'s last instruction has, as
    its operands come from the one before.)  Each head's instructions are
    today's, into the same output slice: only the order and the
    scores/probs/scalar registers of odd heads differ.  Each matrix keeps
    its one `hbm_read mpu` right before it, so the DMA streams the matrices'
    tiles in the MPU's order; with more than two heads a core and a head's
    V within the weight FIFO, the DMA work moves into the softmax's wait
    (`heads_in_reduction_wait`)."""
    if "scores.1" not in s.rf:
      return [ inst for j in range( s.Hc ) for inst in s.head( layer, j, core, pos ) ]
    parts = [ s.head_parts( layer, j, core, pos, s.head_regs( j ) ) for j in range( s.Hc ) ]
    # a head j + 2 to move, and the FIFO holds a head's V (its read's tiles)
    if s.Hc > 2 and read_tiles( parts[0][2][0], s.l ) <= s.lay.get( "weight_fifo_entries", 0 ):
      return s.heads_in_reduction_wait( parts )
    out = parts[0][0]
    for j in range( s.Hc ):
      if j + 1 < s.Hc:
        out += parts[ j + 1 ][0]          # the next head's score, on the other set
      out += parts[j][1] + parts[j][2]
    return out

  def heads_in_reduction_wait( s, parts ):
    """The pipelined heads with the DMA work off the softmax's path:
    score(0), score(1), then per head j

      softmax(j) up to its sum, read V(j), append K and V of head j + 2 and
      read its K^T, the rest of softmax(j), p V(j), scores(j + 2)

    The DMA is in order and takes one instruction at a time, so each DMA
    instruction placed before softmax(j) (as `heads` places score(j + 1)'s)
    holds the softmax until the DMA took the one before: about 100 cycles a
    head.  Placed after the sum (whose reduction is the softmax's longest
    wait), they issue while it runs.  The weight FIFO still gets the
    matrices in the MPU's order (K^T(j + 1), V(j), K^T(j + 2), ...: V(j) is
    read before head j + 2's K^T, and p V(j) comes before scores(j + 2)).
    DMA instructions now sit between read V(j) and p V(j), so read V(j)
    must end before its matrix issues: V's tiles must fit in the weight
    FIFO (`heads` checks; the older matrices in it drain without any
    younger instruction, as their instructions issued earlier)."""
    H = len( parts )
    out = list( parts[0][0] ) + ( list( parts[1][0] ) if H > 1 else [] )
    for j in range( H ):
      soft, pv = parts[j][1], parts[j][2]
      read_v, mm = pv
      nxt = parts[ j + 2 ][0] if j + 2 < H else []
      n_sum = next( i for i, inst in enumerate( soft ) if op_of( inst ) == C.ACCUM ) + 1
      out += soft[ :n_sum ] + [ read_v ] + nxt[ :-1 ] + soft[ n_sum: ] + [ mm ] + nxt[ -1: ]
    return out

  def softmax_vpu( s, T, regs=None ):
    """Softmax of the T scores at regs["scores"] into regs["probs"]
    (`numerics.softmax`); regs: a head's register set (default rf's)."""
    r = regs or s.rf
    return [
      s.vec( C.REDMAX, r["s0"], r["scores"], T ),
      s.vec( C.SUB, r["probs"], r["scores"], T, r["s0"], bcast=True, chain=True ),
      s.vec( C.EXP, r["probs"], r["probs"], T ),
      s.vec( C.ACCUM, r["s1"], r["probs"], T ),
      s.vec( C.RECIP, r["s1"], r["s1"], 1 ),
      s.vec( C.MUL, r["probs"], r["probs"], T, r["s1"], bcast=True ),
    ]

  # -- a whole step ----------------------------------------------------------

  def step( s, core, token, pos, want_logits ):
    """(instructions, op classes): the program of one token step on `core`."""
    rf, E = s.rf, s.E
    if not 0 <= token < s.gpt.vocab_size:
      raise ValueError( f"token id {token} out of range [0, {s.gpt.vocab_size})" )
    if not 0 <= pos < s.lay["max_tokens"]:
      raise ValueError( f"position {pos} is past the compiled context of "
                        f"{s.lay['max_tokens']} tokens" )
    prog, classes = [], []

    def add( cls, insts ):
      for inst in insts:
        prog.append( inst )
        classes.append( "sync" if int( inst.hdr.kind ) == Kind.ROUTER else cls )

    row = s.lay["row_words"]
    row_split = "parts" in rf     # proj_row_split on more than one core
    add( "embedding", [
      s.ddr_read( rf["inv_n"], "consts", 1 ),
      make( D.DDR_READ, rf=rf["eps"], addr=s.ddr["consts"] + s.vw, vecs=1 ),
      make( D.DDR_READ, rf=rf["x"], addr=s.ddr["wte"] + token * row, vecs=s.ents( E ) ),
      make( D.DDR_READ, rf=rf["wpe"], addr=s.ddr["wpe"] + pos * row, vecs=s.ents( E ) ),
      s.vec( C.ADD, rf["x"], rf["x"], E, rf["wpe"] ),
    ] )
    for i in range( s.gpt.n_layer ):
      if "c_qkv" in rf:             # the layout of ln_fold
        for cls, insts in s.folded_qkv( i ):
          add( cls, insts )
      else:
        add( "layernorm", s.layernorm( rf["x"], rf["h"], f"h{i}.ln_1.g", f"h{i}.ln_1.b" ) )
        qkv_cols = 3 * s.Hc * s.hd
        add( "attention", [
          s.ddr_read( rf["b_qkv"], f"h{i}.b_qkv", qkv_cols ),
          s.weight_stream( f"h{i}.c_attn" ),
          make( C.CONV1D, dst=rf["qkv"], src1=rf["h"], rows=E, cols=qkv_cols, bias=rf["b_qkv"] ),
        ] )
      add( "attention", s.heads( i, core, pos ) )
      if row_split:     # the attention output of this core's heads only
        add( "attention", s.row_slice( i, "attn_proj", rf["a"] + s.ents( core * s.Hc * s.hd ),
                                       s.split["attn"], rf["o"], f"h{i}.b_o", core ) )
      else:
        add( "attention", [ make( R.SYNC, rf=rf["a"], len=s.split["attn"] ) ] )
        add( "attention", s.column_slice( i, "attn_proj", rf["a"], s.A, rf["o"], "attn_proj",
                                          f"h{i}.b_o", core ) )
      add( "residual", [ s.vec( C.ADD, rf["x"], rf["x"], E, rf["o"] ) ] )
      if "cs_fc" in rf:             # the layout of ln2_fold
        for cls, insts in s.folded_fc( i, core, gather=not row_split ):
          add( cls, insts )
      else:
        add( "layernorm", s.layernorm( rf["x"], rf["h"], f"h{i}.ln_2.g", f"h{i}.ln_2.b" ) )
        add( "ffn", s.column_slice( i, "c_fc", rf["h"], E, rf["f"], "fc", f"h{i}.b_fc", core,
                                    post=PostOp.GELU, gather=not row_split ) )
      if row_split:     # this core's c_fc columns times the matching rows
        seg = s.split["fc"]
        add( "ffn", s.row_slice( i, "mlp_proj", rf["f"] + core * s.ents( seg ), seg, rf["m"],
                                 f"h{i}.b_m", core ) )
      else:
        add( "ffn", s.column_slice( i, "mlp_proj", rf["f"], s.gpt.n_inner, rf["m"], "mlp_proj",
                                    f"h{i}.b_m", core ) )
      add( "residual", [ s.vec( C.ADD, rf["x"], rf["x"], E, rf["m"] ) ] )
    if want_logits:
      add( "layernorm", s.layernorm( rf["x"], rf["h"], "ln_f.g", "ln_f.b" ) )
      seg = s.split["vocab"]
      add( "lm_head", [
        s.weight_stream( "lm_head" ),
        make( C.MM, dst=rf["logits"], src1=rf["h"], rows=E, cols=seg ),
        make( D.DDR_WRITE, rf=rf["logits"], addr=s.ddr["logits"], vecs=s.ents( seg ) ),
      ] )
    if s.lay.get( "weight_read_ahead" ):     # the weight reads moved ahead (`read_ahead`)
      q = s.lay.get( "dma_inst_queue" )       # reads may then pass MPU instructions
      return read_ahead( prog, classes, s.d, s.lay["cores"], l=s.l,
                         fifo_entries=s.lay["weight_fifo_entries"] if q else 0 )
    return prog, classes
