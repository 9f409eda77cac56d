"""Random legal core programs and the runners that compare the levels on them.

Differential testing of the whole core: every level against the
functional core on the same random programs
(tests/core/test_random_programs.py): `programs()` is a hypothesis strategy
of `CoreProgram`s, each a program every level must run to the same end, and
the initial contents of the memory words it touches.  `ring_programs()`
draws `RingProgram`s: one such program per core of a 2-core ring, with
matched `sync`s (below).  `FuncRunner` runs either on the instruction-level
functional appliance (`funcsim.ApplianceFunc`: `CoreFunc`s and their
`RouterFunc`s on a ring, the reference); `StreamRunner` on the stream
appliance (`core.Core`s and links, inside the host's `HostTop`) at fl, cl
or as one Verilator model.  Each runner is built once and reused: before a
program its touched memory words are written (the stream cores through the
memories' host ports, as the host loads images), the cores are reset and
each core's program streamed in; after it the touched words (and a few
guard words around every written region) are read back and, at fl / cl /
func, the register files are copied.  `compare()` says where two results
of one core differ.

The configuration is test_core_e2e's small core (d=32, l=8, 4 HBM channels,
256 register entries, 16 matrix-buffer and partial-sum entries, a 4-tile
weight FIFO) with its memory depths (1,024 HBM and 128 DDR rows per
channel), so the Verilator pass reuses that test's Verilated appliance.

What a program is (the legality rules the generator keeps):

  * prologue `ddr_read` fills a register window [base, base+n) from random
    DDR words; every instruction reads and writes only inside the window;
    epilogue `ddr_write` dumps the window to DDR, so the register file is
    compared at every level, a Verilated one included;
  * body: vector ops (every opcode the core runs, len up to 8 entries,
    `bcast`), matrix ops (conv1d / mm / maskedmm, every post-op, rows up to
    the x buffer, cols up to 160, random scale and mask), DMA (ddr_read /
    ddr_write, hbm_read / hbm_write, hbm_write tr at random positions, then
    read back as a K/V matrix), `sync` (a no-op on one core, still scheduled),
    chained pairs (the consumer's src1 is the producer's dst), wait flags;
  * two cores (`ring_programs`): each core a program as above (its own
    window, memories and contents) without its own syncs, plus 1-4 syncs
    with the same len in the same order on both cores (the routers pair
    the k-th sync of each; its len is the same so each counts the other's
    packets right), at different places in each body and each core's at
    its own register entry; the gathered vector, ceil(2*len/d) entries (the
    scoreboard's footprint), at most 8, inside the window; len often not
    a multiple of d (the other core's part starts inside an entry) or past
    one router packet (64 elements); sometimes a vector op producing the
    segment the core sends just before the sync, and a vector op, one with
    wait_router or a chained pair taking the gathered vector just after;
    any sync flags.  No extra deadlock rule: what comes before the k-th
    sync on a core waits only on that core and on syncs before the k-th,
    and the weight-read rule above holds per core (a sync is not a DMA
    instruction, a wait_dma on it is refused as on any);
  * weights: each matrix op is fed by exactly one `hbm_read mpu` before it
    (its rows giving the same row chunks, vecs = n_r * n_c * l, row- or
    column-major), placed anywhere since the previous matrix op so the DMA
    runs ahead; a read reads a random weight region or a region the program
    wrote before (K/V written, then read as a matrix);
  * deadlock freedom: the DMA runs one instruction at a time and a weight
    read completes only when its last tile is in the weight FIFO, so while
    the tiles of the reads not yet consumed by their matrix ops exceed the
    FIFO (`weight_fifo_entries` tiles), no DMA instruction and no wait_dma
    flag may come before the consuming matrix op (the head of the in-order
    issue would wait for a read that waits for that matrix op);
  * memory: regions at random word addresses, no two of one program
    overlapping except a region written then read back; every touched word
    gets random contents first.

Memory contents mix FP16 edge values into random normal values: +-0,
subnormals (smallest, largest), the smallest normal, +-65504 and values near
it, exp's overflow threshold, +-inf, quiet and signalling NaNs, 1 and -1.
"""

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from ..appliance.liveness import StepTimeout, cycle_limit
from ..isa import ComputeOp as C, DmaOp as D, PostOp, RouterOp, encode, format_inst, make
from ..lib.arith import ceil_div
from ..units.dma.msgs import mk_dma_types
from .core_mixing import DEPTHS, dfx_config

F16 = np.float16
CFG = dfx_config( 1 )
HBM_WORDS = DEPTHS["hbm_depth"] * CFG.hbm_channels
DDR_WORDS = DEPTHS["ddr_depth"] * CFG.ddr_channels
WORD_ELEMS = CFG.mem_word_elems
EW = CFG.entry_words                # words per register entry
TW = CFG.tile_words                 # words per d x l tile
FIFO_TILES = CFG.weight_fifo_entries
X_ENTRIES = CFG.mreg_entries // 2   # x buffer: a matrix op's ceil(rows/d)
GUARD = 2                           # words read back either side of a written region
# the generator's sizes (CI's; a test may draw bigger programs from a copy):
# register window entries, a vector op's entries, a matrix's tiles and
# column tiles (past psum_entries=16 a matrix takes several bands), a DMA
# transfer's vectors
SIZES = dict( window=( 8, 48 ), vec_entries=8, tiles=24, col_tiles=20, dma_vecs=6 )

# the ops CFG's core runs (gelu only with `vpu_gelu`)
UNARY = C.group( "is_unary", CFG )
REDUCE = C.group( "is_reduction", CFG )
BINARY = C.group( "is_binary", CFG )
MATRIX = ( C.CONV1D, C.MM, C.MASKEDMM )

# FP16 bit patterns mixed into the memories
EDGE_BITS = np.array( [
  0x0000, 0x8000,                   # +-0
  0x0001, 0x8001, 0x03ff, 0x83ff,   # smallest and largest subnormals
  0x0200, 0x8200,                   # a mid subnormal
  0x0400, 0x8400,                   # smallest normals
  0x7bff, 0xfbff, 0x7bfe, 0x7a00,   # 65504, -65504 and near it
  0x498c, 0x4990, 0xc98c,           # about ln(65504) = 11.09: exp's overflow edge
  0x7c00, 0xfc00,                   # +-inf
  0x7e00, 0xfe00, 0x7c01, 0x7fff,   # quiet / signalling NaNs
  0x3c00, 0xbc00,                   # +-1
], np.uint16 )


# -- a program ------------------------------------------------------------------

class CoreProgram:
  """A program and the memory words it touches.  insts: isa instruction
  objects in order; init: "hbm"/"ddr" -> [(addr, [n, WORD_ELEMS] FP16)], the
  contents written first; check: "hbm"/"ddr" -> [(lo, hi)], the word
  ranges compared after the run; window: the register entries (base, n)
  it uses; seed: the contents' RNG seed; kinds: what it exercises."""

  def __init__( s, insts, init, check, window, seed=0, kinds=() ):
    s.insts, s.init, s.check, s.window, s.seed = insts, init, check, window, seed
    s.kinds = set( kinds )

  def listing( s ):
    return "\n".join( f"{pc:3d}  {format_inst( i )}" for pc, i in enumerate( s.insts ) )

  def words( s ):
    return [ encode( i ) for i in s.insts ]

  def __repr__( s ):
    regions = { m: [ ( a, len( w ) ) for a, w in s.init[m] ] for m in s.init }
    return ( f"CoreProgram(seed={s.seed}, window={s.window}, regions={regions})\n"
             + s.listing() )


def contents( rng, n_words ):
  """[n_words, WORD_ELEMS] FP16 of one region: random normals at a random scale,
  with edge values mixed in at a random rate (none, some, most)."""
  n = n_words * WORD_ELEMS
  scale = 2.0 ** rng.integers( -6, 4 )
  x = ( rng.standard_normal( n ) * scale ).astype( F16 ).view( np.uint16 )
  rate = rng.choice( [ 0.0, 0.02, 0.1, 0.5 ], p=[ 0.35, 0.35, 0.2, 0.1 ] )
  pick = rng.random( n ) < rate
  x[ pick ] = rng.choice( EDGE_BITS, int( pick.sum() ) )
  return x.view( F16 ).reshape( n_words, WORD_ELEMS )


class _Alloc:
  """Non-overlapping word regions of one memory, at random places."""

  def __init__( s, draw, size ):
    s.draw, s.size, s.used = draw, size, []

  def take( s, n ):
    for _ in range( 20 ):
      lo = s.draw( st.integers( 0, s.size - n ) )
      if all( lo + n <= a or b <= lo for a, b in s.used ):
        s.used.append( ( lo, lo + n ) )
        return lo
    # fall back: the first gap that fits
    lo = 0
    for a, b in sorted( s.used ):
      if lo + n <= a:
        break
      lo = max( lo, b )
    assert lo + n <= s.size, "memory regions do not fit"
    s.used.append( ( lo, lo + n ) )
    return lo


class _Builder:
  """The program under construction and what it has promised."""

  def __init__( s, draw, base, n ):
    s.draw, s.base, s.n = draw, base, n
    s.body = []
    s.pending = []          # tiles of hbm_read mpu not yet consumed, in order
    s.reads = []            # (rows, cols) each pending read was drawn for
    s.hbm = _Alloc( draw, HBM_WORDS )
    s.ddr = _Alloc( draw, DDR_WORDS )
    s.init = { "hbm": [], "ddr": [] }
    s.check = { "hbm": [], "ddr": [] }
    s.guards = { "hbm": [], "ddr": [] }
    s.written_kv = []       # (addr, vecs) of hbm regions written (K rows, V rows)
    s.written_ddr = []      # (addr, vecs) of ddr regions written
    s.kinds = set()

  # register ranges inside the window
  def span( s, entries ):
    entries = min( entries, s.n )
    return s.base + s.draw( st.integers( 0, s.n - entries ) ), entries

  def elems( s, entries ):
    """A length of `entries` entries, the last one partly used."""
    return entries * CFG.d - s.draw( st.integers( 0, CFG.d - 1 ) )

  def region( s, mem, n_words, written ):
    lo = getattr( s, mem ).take( n_words )
    s.init[ mem ].append( ( lo, n_words ) )
    if written:
      g = ( max( 0, lo - GUARD ), min( HBM_WORDS if mem == "hbm" else DDR_WORDS, lo + n_words + GUARD ) )
      s.check[ mem ].append( g )
      # the guard words get contents too (before every region's own, which
      # win where they overlap), so they are the same at every level
      s.guards[ mem ] += [ ( g[0], lo - g[0] ), ( lo + n_words, g[1] - lo - n_words ) ]
    return lo

  def blocked( s ):
    """No DMA instruction or wait_dma may come now (see the module doc)."""
    return sum( s.pending ) > FIFO_TILES

  def flags( s, inst, allow_dma=True ):
    w = s.draw( st.integers( 0, 19 ) )
    if w < 3 and not ( w == 0 and not allow_dma ):
      setattr( inst.hdr, ( "wait_dma", "wait_compute", "wait_router" )[w],
               inst.hdr.chain.__class__( 1 ) )
    return inst

  def add( s, inst, kind ):
    s.body.append( inst )
    s.kinds.add( kind )


def _vector( b, chain=0, src1=None, n=None, op=None, dst=None ):
  op = op or b.draw( st.sampled_from( UNARY + REDUCE + BINARY ) )
  n = n or b.draw( st.integers( 1, SIZES["vec_entries"] ) )
  n = min( n, b.n )
  length = b.elems( n )
  s1 = src1 if src1 is not None else b.span( n )[0]
  dst = dst if dst is not None else b.span( 1 if op in REDUCE else n )[0]
  f = dict( dst=dst, src1=s1, len=length, chain=chain )
  if op in BINARY:
    bcast = b.draw( st.integers( 0, 3 ) ) == 0
    f.update( src2=b.span( 1 if bcast else n )[0], bcast=int( bcast ) )
  # an element-wise op streams: its dst may not start inside a source
  # after the source's first entry (regfile.ports.vector_error); in place
  # instead
  if op not in REDUCE:
    srcs = [ f["src1"] ] + ( [ f["src2"] ] if op in BINARY and not f["bcast"] else [] )
    if any( s_ < dst < s_ + n for s_ in srcs ):
      f["dst"] = f["src1"]
      if op in BINARY and not f["bcast"] and f["src2"] < f["src1"] < f["src2"] + n:
        f["src2"] = f["src1"]
  return make( op, **f )


def _matrix_shape( b ):
  n_r = b.draw( st.integers( 1, X_ENTRIES ) )
  rows = n_r * CFG.d - b.draw( st.integers( 0, CFG.d - 1 ) )
  # at most 24 tiles (192 words to load); n_c past psum_entries=16 splits
  # the matrix into bands
  n_c = b.draw( st.integers( 1, min( SIZES["col_tiles"], SIZES["tiles"] // n_r ) ) )
  cols = n_c * CFG.l - b.draw( st.integers( 0, CFG.l - 1 ) )
  return rows, cols


def _weight_read( b, rows, cols ):
  """The `hbm_read mpu` for a rows x cols matrix: a fresh random region, or
  one the program wrote (as K rows or V rows) of a fitting size."""
  n_r, n_c = ceil_div( rows, CFG.d ), ceil_div( cols, CFG.l )
  vecs = n_r * n_c * CFG.l
  # the read's rows may differ from the matrix op's, with the same row chunks
  rrows = n_r * CFG.d - b.draw( st.integers( 0, CFG.d - 1 ) )
  fits = [ a for a, v in b.written_kv if v * EW >= vecs * EW ]
  if fits and b.draw( st.integers( 0, 2 ) ) == 0:
    addr = b.draw( st.sampled_from( fits ) )
    b.kinds.add( "kv_reread" )
  else:
    addr = b.region( "hbm", vecs * EW, False )
  return make( D.HBM_READ, mpu=1, addr=addr, vecs=vecs, rows=rrows,
               cmajor=b.draw( st.integers( 0, 1 ) ) )


def _matrix( b, rows, cols, chain=0, src1=None ):
  op = b.draw( st.sampled_from( MATRIX ) )
  post = b.draw( st.sampled_from( list( PostOp ) ) )
  out = ceil_div( cols, CFG.d ) + ( post == PostOp.REDMAX )
  f = dict( dst=b.span( out )[0], src1=src1 if src1 is not None else b.span( ceil_div( rows, CFG.d ) )[0],
            rows=rows, cols=cols, post=int( post ), chain=chain )
  if op == C.CONV1D:
    f["bias"] = b.span( ceil_div( cols, CFG.d ) )[0]
  elif op == C.MASKEDMM:
    f["scale"] = int( b.draw( st.sampled_from(
      [ 0x3000, 0x3800, 0x3c00, 0x2e00, 0xb400, 0x0000, 0x0001, 0x7bff, 0x7c00, 0x7e00 ] ) ) )
    f["mask"] = b.draw( st.integers( 0, cols + 3 ) )
  return make( op, **f )


def _dma( b ):
  op = b.draw( st.sampled_from( [ D.DDR_READ, D.DDR_WRITE, D.HBM_READ, D.HBM_WRITE, "tr", "tr" ] ) )
  vecs = b.draw( st.integers( 1, SIZES["dma_vecs"] ) )
  reg, vecs = b.span( vecs )
  if op == D.DDR_READ:
    fits = [ a for a, v in b.written_ddr if v >= vecs ]
    if fits and b.draw( st.booleans() ):
      b.kinds.add( "ddr_reread" )
      return make( op, rf=reg, addr=b.draw( st.sampled_from( fits ) ), vecs=vecs )
    return make( op, rf=reg, addr=b.region( "ddr", vecs * EW, False ), vecs=vecs )
  if op == D.DDR_WRITE:
    addr = b.region( "ddr", vecs * EW, True )
    b.written_ddr.append( ( addr, vecs ) )
    return make( op, rf=reg, addr=addr, vecs=vecs )
  if op == D.HBM_READ:
    fits = [ a for a, v in b.written_kv if v >= vecs ]
    if fits and b.draw( st.booleans() ):
      return make( op, rf=reg, addr=b.draw( st.sampled_from( fits ) ), vecs=vecs )
    return make( op, rf=reg, addr=b.region( "hbm", vecs * EW, False ), vecs=vecs )
  if op == D.HBM_WRITE:
    addr = b.region( "hbm", vecs * EW, True )
    b.written_kv.append( ( addr, vecs ) )
    return make( op, rf=reg, addr=addr, vecs=vecs )
  # hbm_write tr: row `pos` of V into the transposed tile layout
  pos = b.draw( st.integers( 0, 3 * CFG.d - 1 ) )
  n_ct = ceil_div( vecs * CFG.d, CFG.l )
  span = ( pos // CFG.d + 1 ) * n_ct * CFG.l * EW
  addr = b.region( "hbm", span, True )
  b.written_kv.append( ( addr, span // EW ) )
  b.kinds.add( "tr" )
  return make( D.HBM_WRITE, rf=reg, addr=addr, vecs=vecs, tr=1, pos=pos )


KINDS = ( "vec", "vec", "vec", "mat", "mat", "dma", "dma", "sync", "chain", "chain_mat" )


def _start( draw ):
  """A core's window, builder, contents seed, prologue and dump region."""
  n = draw( st.integers( *SIZES["window"] ) )
  base = draw( st.integers( 0, CFG.vreg_entries - n ) )
  b = _Builder( draw, base, n )
  b.seed = draw( st.integers( 0, 2**32 - 1 ) )
  b.prologue = make( D.DDR_READ, rf=base, addr=b.region( "ddr", n * EW, False ), vecs=n )
  b.dump = b.region( "ddr", n * EW, True )
  return b


def _finish( b ):
  epilogue = make( D.DDR_WRITE, rf=b.base, addr=b.dump, vecs=b.n )
  insts = [ b.prologue ] + b.body + [ epilogue ]
  rng = np.random.default_rng( b.seed )
  init = { m: [ ( a, contents( rng, k ) ) for a, k in b.guards[m] + b.init[m] if k ]
           for m in b.init }
  return CoreProgram( insts, init, b.check, ( b.base, b.n ), b.seed, b.kinds )


@st.composite
def programs( draw, max_body=14 ):
  """A `CoreProgram`: prologue, up to `max_body` body instructions (chained
  pairs and weight reads count one each), matrix ops fed, epilogue."""
  b = _start( draw )
  for _ in range( draw( st.integers( 1, max_body ) ) ):
    _step( b, draw( st.sampled_from( KINDS ) ) )
  return _finish( b )


def _step( b, kind ):
  """One step of a body: `kind` one of KINDS."""
  draw = b.draw
  if kind == "vec":
    b.add( b.flags( _vector( b ), not b.blocked() ), "vec" )
  elif kind == "sync":
    # one core: no other core's part, the gathered vector is this core's
    reg, k = b.span( draw( st.integers( 1, 4 ) ) )
    b.add( b.flags( make( RouterOp.SYNC, rf=reg, len=b.elems( k ) ), not b.blocked() ), "sync" )
  elif kind == "dma":
    if b.blocked():
      b.add( _vector( b ), "vec" )
      return
    b.add( b.flags( _dma( b ) ), "dma" )
  elif kind == "chain":
    # vector -> vector, the consumer reading the producer's result
    n_ = draw( st.integers( 1, 4 ) )
    p = _vector( b, chain=1, n=n_, op=draw( st.sampled_from( UNARY + BINARY ) ) )
    c = _vector( b, src1=int( p.dst ), n=n_ )
    # the consumer takes the producer's elements, or a prefix of them
    c.len = c.len.__class__( max( 1, int( p.len ) - b.draw(
      st.sampled_from( [ 0, 0, 0, 1, int( p.len ) // 2 ] ) ) ) )
    b.add( p, "chain" )
    b.add( c, "chain" )
  else:
    rows, cols = _matrix_shape( b )
    read = _weight_read( b, rows, cols )
    if b.blocked() or b.pending:
      # only one read ahead of its matrix op at a time, the rule the
      # compiler keeps; place it just before the matrix op
      at = len( b.body )
    else:
      # anywhere since the last matrix op: the DMA runs ahead
      last = max( [ i for i, x in enumerate( b.body ) if _is_matrix( x ) ], default=-1 )
      at = draw( st.integers( last + 1, len( b.body ) ) )
      if any( _is_dma( x ) or x.hdr.wait_dma for x in b.body[ at: ] ) and \
         read.vecs // CFG.l > FIFO_TILES:
        at = len( b.body )
    b.body.insert( at, read )
    tiles = int( read.vecs ) // CFG.l
    b.pending.append( tiles )
    b.kinds.add( "hbm_read_mpu" )
    if kind == "chain_mat" and draw( st.booleans() ):
      # a vector op chained into the matrix op's input
      n_r = ceil_div( rows, CFG.d )
      p = _vector( b, chain=1, n=n_r, op=draw( st.sampled_from( UNARY + BINARY ) ) )
      b.add( p, "chain_mat" )
      m = _matrix( b, rows, cols, src1=int( p.dst ) )
    elif kind == "chain_mat":
      # a matrix op chained into a vector op (the attention's softmax)
      m = _matrix( b, rows, cols )
      out = int( m.dst ) + ( int( m.post ) == PostOp.REDMAX )
      n_ = ceil_div( cols, CFG.d )
      b.add( m, "mat" )
      b.pending.pop( 0 )
      if out + n_ <= b.base + b.n:
        m.hdr.chain = m.hdr.chain.__class__( 1 )
        c = _vector( b, src1=out, n=n_ )
        c.len = c.len.__class__( cols )
        b.add( c, "chain_mat" )
      return
    else:
      m = _matrix( b, rows, cols )
    b.add( b.flags( m, not b.blocked() ), "mat" )
    b.pending.pop( 0 )


# -- programs of several cores on the ring ---------------------------------------

def ring_config( cores ):
  """CFG for `cores` cores on a ring (the scoreboard's sync footprint is
  ceil(cores*len/d) entries)."""
  return CFG if cores == 1 else dfx_config( cores )


class RingProgram:
  """One `CoreProgram` per core (`progs`, by ring position) whose syncs
  match: the same count, in the same order, with the same len on every
  core (each core's at its own register entry)."""

  def __init__( s, progs ):
    s.progs = progs
    s.kinds = set().union( *( p.kinds for p in progs ) )

  @property
  def insts( s ):
    return [ p.insts for p in s.progs ]

  def __repr__( s ):
    return "\n".join( f"core {i}: {p!r}" for i, p in enumerate( s.progs ) )


def _sync( b, length, cores, pos ):
  """`sync` of `length` elements per core on core `pos` of `cores`, inside
  the window; sometimes a vector op producing the segment it sends before
  it, and a vector op (or a chained pair) taking the gathered vector after
  it, with or without wait_router (the scoreboard orders both anyway)."""
  draw = b.draw
  entries = ceil_div( cores * length, CFG.d )   # the footprint: sends and receives in place
  reg, _ = b.span( entries )
  if draw( st.integers( 0, 3 ) ) == 0:
    # a producer of this core's own segment (entries holding elements
    # [pos*len, (pos+1)*len) of the gathered vector); in place when it
    # would write inside its own source
    lo = reg + pos * length // CFG.d
    n_ = ceil_div( ( pos + 1 ) * length, CFG.d ) - ( lo - reg )
    b.add( _vector( b, n=n_, op=draw( st.sampled_from( UNARY + BINARY ) ), dst=lo ), "sync_send" )
  b.add( b.flags( make( RouterOp.SYNC, rf=reg, len=length ), not b.blocked() ), "sync" )
  use = draw( st.sampled_from( [ None, "vec", "wait", "chain" ] ) )
  if use is None:
    return
  n_ = min( entries, SIZES["vec_entries"] )
  if use == "chain":
    # the gathered vector streamed through a chained pair
    p = _vector( b, chain=1, src1=reg, n=n_, op=draw( st.sampled_from( UNARY + BINARY ) ) )
    p.len = p.len.__class__( cores * length )
    c = _vector( b, src1=int( p.dst ), n=n_ )
    c.len = p.len           # the consumer takes every element the producer streams
    b.add( p, "sync_chain" )
    b.add( c, "sync_chain" )
    return
  c = _vector( b, src1=reg, n=n_ )
  if use == "wait":
    c.hdr.wait_router = c.hdr.chain.__class__( 1 )
  b.add( c, "sync_use" if use == "vec" else "sync_wait" )


@st.composite
def ring_programs( draw, cores=2, max_body=10, max_syncs=4 ):
  """A `RingProgram`: per core a program as `programs()` draws it (its own
  window, memories and contents, up to `max_body` steps, no unmatched
  sync), with 1..max_syncs matched syncs at random places in each core's
  body (different places, so the cores reach a sync at different times).
  A sync's len gives a gathered vector of at most 8 entries (two router
  packets per core at len 128), often not a multiple of d, so the parts
  start inside an entry."""
  bs = [ _start( draw ) for _ in range( cores ) ]
  for pos, b in enumerate( bs ):
    # different contents on every core even when hypothesis draws the same
    # seed for each (it likes 0): else a part arriving in the wrong place
    # could hold the same values as the right one
    b.seed = ( b.seed + pos * 0x9e3779b9 ) % 2**32
  most = min( 8, min( b.n for b in bs ) ) * CFG.d // cores
  lens = [ draw( st.one_of( st.integers( 1, most ), st.sampled_from(
             [ most, CFG.d, CFG.d // 2, CFG.router_words, CFG.router_words + 1 ] ).filter(
               lambda x: x <= most ) ) ) for _ in range( draw( st.integers( 1, max_syncs ) ) ) ]
  kinds = [ k for k in KINDS if k != "sync" ]
  for pos, b in enumerate( bs ):
    steps = draw( st.integers( 0, max_body ) )
    at = sorted( draw( st.integers( 0, steps ) ) for _ in lens )
    k = 0
    for i in range( steps + 1 ):
      while k < len( lens ) and at[k] == i:
        _sync( b, lens[k], cores, pos )
        k += 1
      if i < steps:
        _step( b, draw( st.sampled_from( kinds ) ) )
  return RingProgram( [ _finish( b ) for b in bs ] )


def _is_matrix( inst ):
  from ..isa import Kind, op_of
  op = op_of( inst )
  return int( inst.hdr.kind ) == Kind.COMPUTE and not op.on_vpu


def _is_dma( inst ):
  from ..isa import Kind
  return int( inst.hdr.kind ) == Kind.DMA


# -- running a program ----------------------------------------------------------

@dataclass
class Result:
  cycles: int
  hbm: dict                 # (lo, hi) -> [hi-lo, 32] uint16 words read back
  ddr: dict
  rf: object = None         # the whole register file [entries, d] uint16, or None
  rf_before: object = None  # the same before the program
  busy: tuple = None        # per unit: cycles it held an unfinished instruction


def _bits( a ):
  return np.ascontiguousarray( a ).view( np.uint16 )


def program_cycle_limit( prog, cfg=CFG ):
  """The host's own bound (`appliance.liveness`) for a program (a
  `CoreProgram`, or a `RingProgram` of cfg.cores cores)."""
  progs = prog.insts if isinstance( prog, RingProgram ) else [ prog.insts ]
  return cycle_limit( cfg, mk_dma_types( cfg ), progs )


def _per_core( prog ):
  return prog.progs if isinstance( prog, RingProgram ) else [ prog ]


class ProgramTimeout( AssertionError ):
  pass


def _timed_out( f, *args, **kw ):
  """f(...), its `StepTimeout` a `ProgramTimeout` (a test's failure)."""
  try:
    return f( *args, **kw )
  except StepTimeout as e:
    raise ProgramTimeout( str( e ) ) from None


def _run( backend, prog, cfg, what ):
  """(cycles, per-core Progress or None): the program on a backend
  (`appliance.backend`), bounded by the host's own limit; a program has no
  op classes, so every instruction counts as the first."""
  from ..compiler import stats as S
  insts = [ p.insts for p in _per_core( prog ) ]
  return _timed_out( backend.run_programs, insts, [ [ S.CLASSES[0] ] * len( p ) for p in insts ],
                     program_cycle_limit( prog, cfg ), what )


class FuncRunner:
  """The reference: the instruction-level functional appliance
  (`ApplianceFunc`: `CoreFunc`s, their `RouterFunc`s on a ring) over
  whole-memory arrays per core, built once (`backend.FuncBackend`); a
  program's regions are written into the arrays in place.  `run` takes a
  `CoreProgram` (one core) or a `RingProgram` (cores cores) and returns a
  `Result`, or one per core."""

  level = "func"

  def __init__( s, cfg=None, cores=1 ):
    from ..appliance.backend import FuncBackend
    s.cfg = cfg or ring_config( cores )
    s.mems = [ ( np.zeros( ( HBM_WORDS, WORD_ELEMS ), F16 ),
                 np.zeros( ( DDR_WORDS, WORD_ELEMS ), F16 ) ) for _ in range( cores ) ]
    # readonly_hbm_words=0: the MPU caches no matrix (every region may change)
    s.backend = FuncBackend( s.cfg, s.mems, 0 )
    s.top = s.backend.top
    s.programs = 0

  def run( s, prog ):
    progs = _per_core( prog )
    assert len( progs ) == len( s.mems ), f"{len( progs )} programs for {len( s.mems )} cores"
    for p, mems in zip( progs, s.mems ):
      for mem, m in zip( mems, ( "hbm", "ddr" ) ):
        for a, w in p.init[m]:
          mem[ a: a + len( w ) ] = w
    s.top.sim_reset()
    cores = s.top.cores
    before = [ _bits( c.regs.rf.mem ).copy() for c in cores ]
    k, _ = _run( s.backend, prog, s.cfg, "func: program" )
    s.programs += 1
    out = [ Result( k, { r: _bits( hbm[ r[0]:r[1] ] ).copy() for r in p.check["hbm"] },
                    { r: _bits( ddr[ r[0]:r[1] ] ).copy() for r in p.check["ddr"] },
                    _bits( c.regs.rf.mem ).copy(), b )
            for p, ( hbm, ddr ), c, b in zip( progs, s.mems, cores, before ) ]
    return out if isinstance( prog, RingProgram ) else out[0]


class PerfRunner:
  """The performance model (`perf.backend.PerfBackend`: every unit's timing
  object, no data) on a program, from the state a reset core is in; `run`
  returns (cycles, per core its busy cycles per unit), counted as
  `StreamRunner` counts them, so a CL run of the same program must give
  the same numbers."""

  level = "perf"

  def __init__( s, cfg=None, cores=1 ):
    s.cfg, s.cores = cfg or ring_config( cores ), cores

  def run( s, prog ):
    from ..perf.backend import PerfBackend
    assert len( _per_core( prog ) ) == s.cores, f"{len( _per_core( prog ) )} programs for {s.cores} cores"
    k, tracks = _run( PerfBackend( s.cfg, s.cores ), prog, s.cfg, "perf: program" )
    return k, [ tuple( t.busy ) for t in tracks ]


class StreamRunner:
  """The stream appliance of `cores` cores at `level` (fl, cl, or verilog:
  every unit RTL and the whole appliance one Verilator model, as the host's
  "verilog" level), the host's `backend.StreamBackend`, built once.  A
  program's regions are written (into Python memories' stores, or through
  the memories' host ports), the cores reset, each core's program streamed
  into its `inst` and counted from the first word offered to the cycle
  every core is idle with every word taken, as the host counts a step;
  then the checked regions are read back.  `run` takes a `CoreProgram`
  (one core) or a `RingProgram` and returns a `Result`, or one per core."""

  def __init__( s, level, cfg=None, cores=1 ):
    from ..appliance.backend import StreamBackend
    s.level, s.cores = level, cores
    s.cfg = cfg or ring_config( cores )
    s.backend = StreamBackend( s.cfg, cores, level, None, DEPTHS["hbm_depth"], DEPTHS["ddr_depth"] )
    s.top, s.fast = s.backend.top, s.backend.fast
    s.programs = 0

  def run( s, prog ):
    top, n = s.top, s.cores
    progs = _per_core( prog )
    assert len( progs ) == n, f"{len( progs )} programs for {n} cores"
    _timed_out( s.backend.write, [ p.init for p in progs ], direct=True,
                what=f"{s.level}: writing the program's memory words" )
    s.backend.reset()
    rfms = [ getattr( top.dut.cores[i], "rfm", None ) if s.fast is None else None for i in range( n ) ]
    before = [ _bits( r.rf.mem ).copy() if hasattr( r, "rf" ) else None for r in rfms ]
    k, tracks = _run( s.backend, prog, s.cfg, f"{s.level}: program" )
    got = { m: _timed_out( s.backend.read, m, [ p.check[m] for p in progs ], direct=True,
                           what=f"{s.level}: reading {m} back" ) for m in ( "hbm", "ddr" ) }
    out = []
    for i, p in enumerate( progs ):
      mem = { m: { r: a.view( "<u2" ) for r, a in zip( p.check[m], got[m][i] ) }
              for m in ( "hbm", "ddr" ) }
      rf = _bits( rfms[i].rf.mem ).copy() if before[i] is not None else None
      out.append( Result( k, mem["hbm"], mem["ddr"], rf, before[i], tuple( tracks[i].busy ) ) )
    s.programs += 1
    return out if isinstance( prog, RingProgram ) else out[0]


def compare( prog, want, got, what, shown=None ):
  """Assert `got` (a stream level's Result) equals `want` (the reference's)
  word for word; the message names the first difference and the program
  (or `shown`: a `RingProgram`, every core's)."""
  shown = prog if shown is None else shown
  for m in ( "hbm", "ddr" ):
    for r in prog.check[m]:
      a, b = getattr( want, m )[r], getattr( got, m )[r]
      if not np.array_equal( a, b ):
        w, e = [ int( x ) for x in np.argwhere( a != b )[0] ]
        raise AssertionError(
          f"{what}: {m.upper()} word {r[0] + w} element {e}: {b[w, e]:#06x}, the reference "
          f"{a[w, e]:#06x} ({int( ( a != b ).sum() )} elements differ in words {r[0]}..{r[1] - 1})"
          f"\n{shown!r}" )
  # the register file: the window equal to the reference's, every other
  # entry as it was before the program (each runner has its own history)
  lo, hi = prog.window[0], prog.window[0] + prog.window[1]
  for r, who in ( ( want, "the reference" ), ( got, what ) ):
    if r.rf is None:
      continue
    a, b = r.rf_before.reshape( CFG.vreg_entries, CFG.d ), r.rf.reshape( CFG.vreg_entries, CFG.d )
    a, b = np.concatenate( [ a[ :lo ], a[ hi: ] ] ), np.concatenate( [ b[ :lo ], b[ hi: ] ] )
    if not np.array_equal( a, b ):
      v = int( np.argwhere( a != b )[0][0] )
      v = v if v < lo else v + hi - lo
      raise AssertionError( f"{who}: register v{v}, outside the program's window "
                            f"v{lo}..v{hi - 1}, changed\n{shown!r}" )
  if want.rf is not None and got.rf is not None:
    a = want.rf.reshape( CFG.vreg_entries, CFG.d )[ lo:hi ]
    b = got.rf.reshape( CFG.vreg_entries, CFG.d )[ lo:hi ]
    if not np.array_equal( a, b ):
      v, e = [ int( x ) for x in np.argwhere( a != b )[0] ]
      raise AssertionError( f"{what}: register v{lo + v} element {e}: {b[v, e]:#06x}, the "
                            f"reference {a[v, e]:#06x} ({int( ( a != b ).sum() )} elements "
                            f"differ)\n{shown!r}" )
