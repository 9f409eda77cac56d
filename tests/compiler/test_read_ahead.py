"""`weight_read_ahead`: the compiler moves each matrix's weight read up
(`compiler.read_ahead`).  On emitted programs (1 and 4 cores, the heads
one after another and pipelined, with and without the logits) the pass
keeps the instructions (a permutation), the weight FIFO's order, every DMA
instruction's order against the others and against the MPU instructions,
the other instructions' order, and what the FIFO must hold for each DMA
instruction to issue (`pending_tiles`: nothing, or with the pipelined
heads a head's V); it moves a
read past vector work (the programs differ) and no move stops at a
register conflict.  Hand-made programs show the stops: a DDR read does not
pass an instruction that reads or writes what it writes, nor lands between
a chain producer and its consumer."""

import pytest

from pymtl_dfx.compiler.build import plan
from pymtl_dfx.compiler.emit import StepEmitter
from pymtl_dfx.compiler.read_ahead import ( is_barrier, is_ddr_read, is_mpu, is_weight_read,
                                            pending_tiles, read_ahead )
from pymtl_dfx.config import DFXConfig, GPT2Config
from pymtl_dfx.isa import ComputeOp as C, DmaOp as D, Kind, encode, make, op_of

GPT = GPT2Config( n_layer=2, n_embd=128, n_head=4, vocab_size=64, n_positions=16 )
D_, L_ = 32, 8


def emitted( cores, pipeline, on, pos=5, want=True, core=0 ):
  dfx = DFXConfig( d=D_, l=L_, cores=cores, attn_head_pipeline=pipeline, weight_read_ahead=on )
  return StepEmitter( plan( GPT, dfx, cores, 16 ), GPT ).step( core, 3, pos, want )


def is_dma( inst ):
  return int( inst.hdr.kind ) == Kind.DMA


CASES = [ ( cores, pipeline, want ) for cores in ( 1, 4 ) for pipeline in ( 0, 1 )
          for want in ( False, True ) ]


@pytest.mark.parametrize( "cores,pipeline,want", CASES )
def test_the_pass_keeps_the_fifo_order_and_the_dma_order( cores, pipeline, want ):
  for core in range( cores ):
    before, cls0 = emitted( cores, pipeline, 0, want=want, core=core )
    stops = []
    after, cls1 = read_ahead( before, cls0, D_, cores, stops )
    # the emitter with the option on gives the pass's program
    emit1, emit_cls = emitted( cores, pipeline, 1, want=want, core=core )
    assert [ encode( i ) for i in emit1 ] == [ encode( i ) for i in after ] and emit_cls == cls1
    # a permutation of the instructions (the pass moves the objects), each
    # with its op class
    where = { id( i ): pc for pc, i in enumerate( before ) }
    perm = [ where[ id( i ) ] for i in after ]
    assert sorted( perm ) == list( range( len( before ) ) )
    assert cls1 == [ cls0[ pc ] for pc in perm ]
    assert perm != sorted( perm )                       # something moved

    def kept( keep ):
      """True when the instructions `keep` selects keep their order."""
      pcs = [ pc for pc in perm if keep( before[ pc ] ) ]
      return pcs == sorted( pcs )
    # the FIFO: reads and matrices in the same order, as many of each
    assert kept( lambda i: is_weight_read( i ) or is_mpu( i ) )
    assert sum( map( is_weight_read, after ) ) == sum( map( is_mpu, after ) )
    # a read passes no DMA write and no MPU instruction: every DMA
    # instruction keeps its order against the others and against the MPU
    assert kept( lambda i: is_dma( i ) or is_mpu( i ) )
    # the rest keep theirs
    assert kept( lambda i: not is_dma( i ) )
    # each DMA instruction's pending tiles are the emitter's (the pass
    # passes no MPU instruction): none, or a head's V in the pipelined
    # heads' reduction wait (`emit.StepEmitter.heads_in_reduction_wait`)
    pend0, pend1 = pending_tiles( before, L_ ), pending_tiles( after, L_ )
    assert sorted( pend0.values() ) == sorted( pend1.values() )
    # V at pos 5: 1 x 32 / 8 tiles; more than two heads per core to reorder
    assert max( pend1.values() ) == ( 4 if pipeline and cores == 1 else 0 )
    # reads sit right after a barrier (or the step's start) or after the
    # DDR reads moved with them
    for pc, inst in enumerate( after ):
      if is_weight_read( inst ):
        j = pc - 1
        while j >= 0 and is_ddr_read( after[j] ):
          j -= 1
        assert j < 0 or is_barrier( after[j] ) or is_mpu( after[j] ), ( pc, j )
    # no register conflict stopped a move on the emitted programs
    assert stops == []


@pytest.mark.parametrize( "pipeline", [ 0, 1 ] )
def test_with_a_dma_queue_reads_pass_matrices_the_fifo_holds( pipeline ):
  """With `dma_inst_queue` the pass also moves reads over MPU instructions
  while the FIFO holds the tiles they have not taken: some read passes a
  matrix, the reads keep their order, and every DMA instruction's pending
  tiles fit in the FIFO (of 64 tiles, and of 4)."""
  for fifo in ( 64, 4 ):
    dfx = DFXConfig( d=D_, l=L_, cores=1, attn_head_pipeline=pipeline, weight_read_ahead=1,
                     weight_fifo_entries=fifo, dma_inst_queue=2 )
    lay = plan( GPT, dfx, 1, 16 )
    after, _ = StepEmitter( lay, GPT ).step( 0, 3, 5, True )
    before, _ = StepEmitter( plan( GPT, dfx.replace( weight_read_ahead=0 ), 1, 16 ),
                             GPT ).step( 0, 3, 5, True )
    def mpus_before_reads( prog ):
      """Per weight read (by its word), the MPU instructions before it."""
      return { encode( i ): sum( map( is_mpu, prog[ :pc ] ) )
               for pc, i in enumerate( prog ) if is_weight_read( i ) }
    assert [ encode( i ) for i in after if is_weight_read( i ) ] == \
           [ encode( i ) for i in before if is_weight_read( i ) ]
    assert max( pending_tiles( after, L_ ).values() ) <= fifo
    b, a = mpus_before_reads( before ), mpus_before_reads( after )
    passed = any( a[w] < b[w] for w in b )
    assert passed or fifo < 64, "no read passed a matrix"


def test_a_read_moves_over_the_layernorm():
  """The c_fc read (and ln_2's parameter reads) sit right after the
  attention projection, before the residual and the LayerNorm."""
  prog, cls = emitted( 1, 0, 1, want=False )
  pcs = [ pc for pc, i in enumerate( prog ) if is_mpu( i ) and op_of( i ) == C.CONV1D ]
  proj = pcs[1]                           # c_attn, attn c_proj, c_fc, mlp c_proj
  assert is_ddr_read( prog[ proj + 1 ] ) and cls[ proj + 1 ] == "layernorm"
  ahead = next( pc for pc in range( proj + 1, len( prog ) ) if not is_dma( prog[ pc ] ) )
  assert is_weight_read( prog[ ahead - 1 ] ) and cls[ ahead - 1 ] == "ffn"
  assert pcs[2] - ahead > 16              # the LayerNorm's vector work now runs beside it


def _hand( middle ):
  """matrix; `middle`; the bias's DDR read (into v40); the weight read; the
  matrix using the bias."""
  return ( [ make( C.MM, dst=0, src1=8, rows=32, cols=8 ) ] + middle +
           [ make( D.DDR_READ, rf=40, addr=0, vecs=1 ),
             make( D.HBM_READ, mpu=1, addr=64, vecs=8, rows=32 ),
             make( C.CONV1D, dst=50, src1=8, rows=32, cols=8, bias=40 ) ] )


def _moved( middle ):
  prog = _hand( middle )
  stops = []
  out, _ = read_ahead( prog, [ "x" ] * len( prog ), D_, 1, stops )
  where = { id( i ): pc for pc, i in enumerate( prog ) }
  return [ where[ id( i ) ] for i in out ], stops


def test_a_ddr_read_passes_vector_work_it_does_not_touch():
  free = [ make( C.ADD, dst=20 + k, src1=21, len=32, src2=22 ) for k in range( 2 ) ]
  order, stops = _moved( free )
  assert order == [ 0, 3, 4, 1, 2, 5 ] and stops == []


@pytest.mark.parametrize( "middle", [
  make( C.ADD, dst=40, src1=21, len=32, src2=22 ),     # writes the bias register (WAW)
  make( C.ADD, dst=20, src1=40, len=32, src2=22 ),     # reads it (WAR)
  make( C.MUL, dst=20, src1=21, len=32, src2=40, bcast=1 ),
  make( D.DDR_WRITE, rf=40, addr=8, vecs=1 ),           # a DMA write: a barrier
  make( C.ADD, dst=20, src1=21, len=32, src2=22, wait_dma=1 ),   # waits for the DMA
] )
def test_a_ddr_read_stops_below_what_uses_its_register( middle ):
  after = make( C.ADD, dst=20, src1=21, len=32, src2=22 )
  order, stops = _moved( [ middle, after ] )
  # it passes the free instruction, not the one touching v40
  assert order == [ 0, 1, 3, 4, 2, 5 ]
  assert stops == ( [] if is_barrier( middle ) else [ ( 4, 1 ) ] )


def test_a_moved_read_does_not_split_a_chain():
  """A stop right below a chain producer would put the DMA instructions
  between it and its consumer: they go after the consumer."""
  producer = make( C.MUL, dst=24, src1=40, len=32, src2=22, chain=1 )   # reads v40
  consumer = make( C.ACCUM, dst=23, src1=24, len=32 )
  order, stops = _moved( [ producer, consumer ] )
  assert stops == [ ( 4, 1 ) ]
  assert order == [ 0, 1, 2, 3, 4, 5 ]


def test_an_image_keeps_the_option( tmp_path ):
  """The layout carries the option (`weight_read_ahead` only when on, so
  the default's layout and images are today's): a saved and loaded model
  emits the read-ahead program."""
  from pymtl_dfx.compiler.build import compile_model, load_compiled
  from pymtl_dfx.gpt2 import random_weights
  gpt = GPT2Config( n_layer=1, n_embd=64, n_head=2, vocab_size=32, n_positions=4 )
  w = random_weights( gpt, 3 ).to_fp16()
  for on in ( 0, 1 ):
    c = compile_model( w, DFXConfig( d=D_, l=L_, weight_read_ahead=on ), 1, max_tokens=4 )
    assert ( "weight_read_ahead" in c.layout ) == bool( on )
    c.save( tmp_path / f"m{on}.dfx" )
    back = load_compiled( tmp_path / f"m{on}.dfx" )
    assert back.dfx.weight_read_ahead == on
    prog = [ encode( i ) for i in back.emitter().step( 0, 1, 2, True )[0] ]
    assert prog == [ encode( i ) for i in c.emitter().step( 0, 1, 2, True )[0] ]
    plain = StepEmitter( plan( gpt, DFXConfig( d=D_, l=L_ ), 1, 4 ), gpt ).step( 0, 1, 2, True )
    assert ( prog != [ encode( i ) for i in plain[0] ] ) == bool( on )
