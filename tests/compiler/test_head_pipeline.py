"""`attn_head_pipeline`: the compiler software-pipelines a layer's attention
heads over two register sets (`emit.StepEmitter.heads`).  Only the order of
the instructions and the scores/probs/scalar registers of odd heads change:
with the second set renamed to the first, a step's program is the default
program's multiset of instructions; each head's matrices and softmax come in
the order score(0), score(1), softmax(0), pv(0), score(2), softmax(1),
pv(1), ..., softmax(last), pv(last), with its K/V writes and one
`hbm_read mpu` right before its matrices, or, when a head's V fits in the
weight FIFO, with the DMA work of head j + 2 and the read of V(j) in
softmax(j)'s reduction wait (and the FIFO's bound met: a DMA instruction's
pending tiles fit in it); the default layout and program
are unchanged by the option's existence (the second set lies after every
other register), and a second set that does not fit the register file is a
CompileError naming the option."""

from collections import Counter

import pytest

from pymtl_dfx.compiler.build import plan
from pymtl_dfx.compiler.emit import StepEmitter
from pymtl_dfx.compiler.layout import HEAD_SET_REGS, plan_layout
from pymtl_dfx.compiler.limits import CompileError
from pymtl_dfx.compiler.read_ahead import fifo_bound
from pymtl_dfx.config import DFXConfig, GPT2Config
from pymtl_dfx.isa import ComputeOp as C, DmaOp as D, Kind, encode
from pymtl_dfx.units.control.decode_cache import decoded

# 8 heads of 32 on 2 cores: 4 heads per core (both register sets twice)
GPT = GPT2Config( n_layer=2, n_embd=256, n_head=8, vocab_size=100, n_positions=40 )
CORES, T = 2, 40


def cfg( pipeline, **kw ):
  return DFXConfig( d=32, l=8, cores=CORES, attn_head_pipeline=pipeline, **kw )


def programs( pipeline, pos, core=1, fifo=4, insts=False ):
  lay = plan( GPT, cfg( pipeline, weight_fifo_entries=fifo ), CORES, T )
  prog, classes = StepEmitter( lay, GPT ).step( core, 3, pos, want_logits=True )
  return lay, prog if insts else [ encode( i ) for i in prog ], classes


def renamed( word, rename ):
  """The instruction with its register operands mapped by `rename`."""
  inst, _, kind = decoded( word )
  inst = inst.clone()
  for f in ( "dst", "src1", "src2" ):
    if kind == Kind.COMPUTE and hasattr( inst, f ):
      v = int( getattr( inst, f ) )
      setattr( inst, f, type( getattr( inst, f ) )( rename.get( v, v ) ) )
  return encode( inst )


def head_events( lay, words, core ):
  """The attention order of a step, per layer: ("S", j) q K^T of head j,
  ("P", j) its p V, ("X", set) a run of softmax instructions on register set
  `set` (0 or 1), ("W", j) a K/V write of head j, ("R", j) an hbm_read mpu
  of head j's K or V; plus the register set of each head's matrices."""
  rf, Hc, hd, d = lay["rf"], lay["split"]["heads_per_core"], GPT.head_dim, lay["d"]
  sets = [ { rf[ n + sfx ] for n in HEAD_SET_REGS if n + sfx in rf } for sfx in ( "", ".1" ) ]
  vecs = [ { rf[ n + sfx ] for n in ( "scores", "probs" ) if n + sfx in rf }
           for sfx in ( "", ".1" ) ]
  kv = sorted( ( a, n ) for n, a in lay["hbm"]["kv"].items() )
  out_slices = { rf["a"] + ( core * Hc + j ) * hd // d: j for j in range( Hc ) }

  def kv_head( addr ):
    name = max( ( a, n ) for a, n in kv if a <= addr )[1]     # "h{layer}.k{j}"
    return int( name.split( "." )[1][1:] )

  events, set_of = [], {}
  for w in words:
    inst, op, kind = decoded( w )
    if kind == Kind.DMA and op in ( D.HBM_WRITE, D.HBM_READ ) and int( inst.addr ) >= kv[0][0]:
      events.append( ( "W" if op == D.HBM_WRITE else "R", kv_head( int( inst.addr ) ) ) )
    elif kind == Kind.COMPUTE and op == C.MASKEDMM:
      j = ( int( inst.src1 ) - rf["qkv"] ) * d // hd
      events.append( ( "S", j ) )
      set_of[ ( "S", j ) ] = next( k for k, s in enumerate( sets ) if int( inst.dst ) in s )
    elif kind == Kind.COMPUTE and op == C.MM and int( inst.dst ) in out_slices:
      j = out_slices[ int( inst.dst ) ]
      events.append( ( "P", j ) )
      set_of[ ( "P", j ) ] = next( k for k, s in enumerate( sets ) if int( inst.src1 ) in s )
    elif kind == Kind.COMPUTE and op.on_vpu:
      # the softmax reads a set's scores or probs, or its s1 (the RECIP;
      # LayerNorm also uses s0 and s1, but no RECIP)
      src = int( inst.src1 )
      k = next( ( k for k, s in enumerate( vecs ) if src in s ), None )
      if k is None and op == C.RECIP:
        k = next( ( k for k, s in enumerate( sets ) if src in s ), None )
      if k is not None and events[-1] != ( "X", k ):
        events.append( ( "X", k ) )
  return events, set_of


def matrices( events ):
  return [ e for e in events if e[0] in "SPX" ]


@pytest.mark.parametrize( "pos", [ 0, 7, T - 1 ] )
def test_pipelined_program_is_the_default_reordered( pos ):
  lay0, base, cls0 = programs( 0, pos )
  lay1, piped, cls1 = programs( 1, pos )
  rf0, rf1 = lay0["rf"], lay1["rf"]
  rename = { rf1[ n + ".1" ]: rf1[ n ] for n in HEAD_SET_REGS }
  rename.update( { rf1[ n + ".1" ] + e: rf1[ n ] + e for n in ( "scores", "probs" )
                   for e in range( 1, -( -T // lay1["d"] ) ) } )
  assert piped != base
  assert Counter( renamed( w, rename ) for w in piped ) == Counter( base )
  assert Counter( cls1 ) == Counter( cls0 )
  # everything outside the heads is in the default's place
  first = next( i for i, ( a, b ) in enumerate( zip( base, piped ) ) if a != b )
  assert base[ :first ] == piped[ :first ] and cls0[ first ] == "attention"


# (pos, FIFO entries): a head's V is ceil((pos + 1) / d) x (hd / l) tiles,
# 4 at pos 0 and 8 at pos T - 1
ORDERS = [ ( 0, 2, "adjacent" ), ( 0, 4, "in_wait" ), ( T - 1, 4, "adjacent" ),
           ( T - 1, 8, "in_wait" ) ]


@pytest.mark.parametrize( "pos,fifo,order", ORDERS )
def test_the_order_of_the_heads( pos, fifo, order ):
  Hc = 4
  events0, sets0 = head_events( *programs( 0, pos, fifo=fifo )[:2], 1 )
  events1, sets1 = head_events( *programs( 1, pos, fifo=fifo )[:2], 1 )
  today = [ e for j in range( Hc ) for e in ( ( "S", j ), ( "X", 0 ), ( "P", j ) ) ]
  piped = [ ( "S", 0 ) ]
  if order == "adjacent":
    for j in range( Hc ):
      piped += [ ( "S", j + 1 ) ] if j + 1 < Hc else []
      piped += [ ( "X", j % 2 ), ( "P", j ) ]
  else:                     # softmax(j) split around V(j)'s read and head j + 2's DMA
    piped += [ ( "S", 1 ) ]
    for j in range( Hc ):
      piped += [ ( "X", j % 2 ) ] * 2 + [ ( "P", j ) ]
      piped += [ ( "S", j + 2 ) ] if j + 2 < Hc else []
  assert matrices( events0 ) == today * GPT.n_layer
  assert matrices( events1 ) == piped * GPT.n_layer
  # the default uses one set; pipelined heads alternate, a head's score
  # and p V on the same set as its softmax
  assert set( sets0.values() ) == { 0 }
  assert sets1 == { ( m, j ): j % 2 for m in "SP" for j in range( Hc ) }
  # the default and the adjacent order: each matrix has its one hbm_read
  # mpu (its own head's K or V) right before it; a head's K/V writes right
  # before the read of its K
  for events in ( events0, events1 ) if order == "adjacent" else ( events0, ):
    for i, ( what, j ) in enumerate( events ):
      if what in "SP":
        assert events[ i - 1 ] == ( "R", j ), ( i, events[ i - 4: i + 1 ] )
      if what == "R" and events[ i + 1 ][0] == "S":
        assert events[ i - 2: i ] == [ ( "W", j ) ] * 2, events[ i - 3: i + 2 ]
  if order == "in_wait":
    # after the first two scores, the softmax of head j is split by V(j)'s
    # read, then head j + 2's K/V writes and K read; its scores follow p V(j)
    for layer in range( GPT.n_layer ):
      ev = events1[ len( events1 ) * layer // GPT.n_layer: len( events1 ) * ( layer + 1 ) // GPT.n_layer ]
      body = ev[ ev.index( ( "S", 1 ) ) + 1: ]
      want = []
      for j in range( Hc ):
        nxt = [ ( "W", j + 2 ), ( "W", j + 2 ), ( "R", j + 2 ) ] if j + 2 < Hc else []
        want += [ ( "X", j % 2 ), ( "R", j ) ] + nxt + [ ( "X", j % 2 ), ( "P", j ) ]
        want += [ ( "S", j + 2 ) ] if j + 2 < Hc else []
      assert body == want
  for events in ( events0, events1 ):
    assert sum( e[0] == "R" for e in events ) == 2 * Hc * GPT.n_layer
  # the FIFO holds what each DMA instruction needs: the adjacent orders need
  # nothing, the split one a head's V
  bound = fifo_bound( programs( 1, pos, fifo=fifo, insts=True )[1], 8 )
  assert bound == ( 0 if order == "adjacent" else -( -( pos + 1 ) // 32 ) * 4 )
  assert bound <= fifo


def test_the_default_layout_is_untouched():
  """The second set is the option's alone and lies after every other
  register: the rest of its layout is the default's, address for address
  (plus the FIFO depth the heads' order depends on)."""
  lay0 = plan_layout( GPT, cfg( 0 ), CORES, T )
  lay1 = plan_layout( GPT, cfg( 1 ), CORES, T )
  assert not any( n.endswith( ".1" ) for n in lay0["rf"] )
  second = { n: a for n, a in lay1["rf"].items() if n.endswith( ".1" ) }
  assert sorted( second ) == sorted( n + ".1" for n in HEAD_SET_REGS )
  assert min( second.values() ) == lay0["rf_entries"]
  ents = -( -T // lay1["d"] )
  assert lay1["rf_entries"] == lay0["rf_entries"] + 2 * ents + 2
  rest = dict( lay1, rf={ n: a for n, a in lay1["rf"].items() if n not in second },
               rf_entries=lay0["rf_entries"] )
  assert rest.pop( "weight_fifo_entries" ) == cfg( 1 ).weight_fifo_entries
  assert rest == lay0


def test_a_second_set_that_does_not_fit_names_the_option():
  """A register file that holds the default layout but not the second set."""
  small = GPT2Config( n_layer=1, n_embd=64, n_head=2, vocab_size=16, n_positions=512 )
  dfx = dict( d=32, l=8, cores=1, vreg_entries=64, mreg_entries=64 )
  fits = [ t for t in range( 1, 513 )
           if plan_layout( small, DFXConfig( **dfx ), 1, t )["rf_entries"] <= 64
           < plan_layout( small, DFXConfig( attn_head_pipeline=1, **dfx ), 1, t )["rf_entries"] ]
  assert fits
  plan( small, DFXConfig( **dfx ), 1, fits[0] )
  with pytest.raises( CompileError ) as e:
    plan( small, DFXConfig( attn_head_pipeline=1, **dfx ), 1, fits[0] )
  msg = str( e.value )
  assert "register file: attn_head_pipeline=1 needs a second set" in msg
  assert "vreg_entries=64 available" in msg and "set attn_head_pipeline=0" in msg
  # too large even without it: the general message, which says the option doubles it
  with pytest.raises( CompileError, match=r"register file: the layout needs .*twice with "
                                          r"attn_head_pipeline=1" ):
    plan( small, DFXConfig( attn_head_pipeline=1, **dfx ), 1, 512 )


def test_one_head_per_core_is_the_default_program():
  """With one head per core there is nothing to overlap: the same program."""
  gpt = GPT2Config( n_layer=1, n_embd=64, n_head=2, vocab_size=16, n_positions=8 )
  progs = [ StepEmitter( plan( gpt, DFXConfig( d=32, l=8, cores=2, attn_head_pipeline=p ), 2 ),
                         gpt ).step( 1, 3, 5, True )[0] for p in ( 0, 1 ) ]
  assert [ encode( i ) for i in progs[0] ] == [ encode( i ) for i in progs[1] ]
