"""GPT-2 on the modelled appliance equals the DFX-numerics reference, bit for bit.

Partitioning over 1, 2 or 4 cores must not change a single bit of the
logits, so the tokens and the final logits are compared exactly.
"""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.appliance.host import Host
from pymtl_dfx.compiler.build import compile_model
from pymtl_dfx.compiler.stats import CLASSES
from pymtl_dfx.config import DFXConfig, GPT2Config, gpt2_preset
from pymtl_dfx.gpt2 import DFXForward, generate, random_weights
from pymtl_dfx.isa import Kind


def run_both( weights16, dfx, cores, prompt, n_new, level="func" ):
  host = Host( compile_model( weights16, dfx, cores, max_tokens=len( prompt ) + n_new ), level )
  got = host.generate( prompt, n_new )
  ref = DFXForward( weights16, dfx )
  want = generate( ref, prompt, n_new )
  # the reference's logits after its last step = the host's last logits
  return got, want, host, ref


def prompt_of( length, vocab, seed ):
  return [ int( t ) for t in np.random.default_rng( seed ).integers( 0, vocab, length ) ]


@pytest.mark.parametrize( "cores", [ 1, 2, 4 ] )
@pytest.mark.parametrize( "seed", [ 0, 1, 2 ] )
@pytest.mark.parametrize( "prompt_len", [ 1, 5, 17 ] )
def test_tiny_bit_identical( cores, seed, prompt_len ):
  cfg = gpt2_preset( "tiny" )
  w = random_weights( cfg, seed ).to_fp16()
  prompt = prompt_of( prompt_len, cfg.vocab_size, seed + 100 )
  dfx = DFXConfig( cores=cores )
  host = Host( compile_model( w, dfx, cores, max_tokens=prompt_len + 4 ) )
  ref = DFXForward( w, dfx )
  tokens = list( prompt )
  for k in range( prompt_len + 3 ):
    want_logits = k >= prompt_len - 1
    got = host.step( tokens[k], want_logits )
    want = ref.step( tokens[k], logits=want_logits )
    if want_logits:
      assert np.array_equal( N.bits( got ), N.bits( want ) ), f"logits differ at step {k}"
      if k + 1 >= len( tokens ):
        tokens.append( int( np.argmax( N.order_key( got ) ) ) )


@pytest.mark.parametrize( "cores", [ 1, 2, 4 ] )
def test_small_dfx_config_splits_heads_and_tiles( cores ):
  """d=32, l=8: two row chunks per head, zigzag V tiles, uneven splits."""
  cfg = GPT2Config( n_layer=2, n_embd=192, n_head=3, vocab_size=301, n_positions=64, name="odd" )
  w = random_weights( cfg, 5 ).to_fp16()
  got, want, host, _ = run_both( w, DFXConfig( d=32, l=8, cores=cores ), cores,
                                 prompt_of( 6, 301, 1 ), 5 )
  assert got == want


def test_124m_shapes_on_four_cores():
  cfg = gpt2_preset( "gpt2" )
  w = random_weights( cfg, 0 ).to_fp16()
  got, want, host, _ = run_both( w, DFXConfig( cores=4 ), 4, prompt_of( 2, cfg.vocab_size, 0 ), 2 )
  assert got == want
  assert host.model.layout["padding"]["vocab"]["padded"] == 4 * 12608


def per_layer_program( cores ):
  cfg = gpt2_preset( "tiny" )
  w = random_weights( cfg, 0 ).to_fp16()
  cm = compile_model( w, DFXConfig( cores=cores ), cores, max_tokens=8 )
  return cm, cm.emitter().step( 0, 3, 5, want_logits=False )


@pytest.mark.parametrize( "cores", [ 1, 2, 4 ] )
def test_four_syncs_per_decoder_layer( cores ):
  cm, ( prog, classes ) = per_layer_program( cores )
  syncs = [ i for i in prog if int( i.hdr.kind ) == Kind.ROUTER ]
  assert len( syncs ) == 4 * cm.gpt.n_layer
  assert all( c == "sync" for i, c in zip( prog, classes ) if int( i.hdr.kind ) == Kind.ROUTER )


def test_every_instruction_has_an_op_class():
  _, ( prog, classes ) = per_layer_program( 2 )
  assert len( prog ) == len( classes ) and set( classes ) <= set( CLASSES )


def test_chained_results_feed_the_next_instruction_only():
  """A chained result is read by the next instruction (as src1) and by no
  later one before being rewritten: the hardware never writes it back."""
  _, ( prog, _ ) = per_layer_program( 2 )
  for k, inst in enumerate( prog ):
    if int( inst.hdr.chain ):
      nxt = prog[ k + 1 ]
      assert int( nxt.hdr.kind ) == Kind.COMPUTE and int( nxt.src1 ) == int( inst.dst )
      if int( nxt.dst ) == int( inst.dst ):
        continue                        # the consumer overwrites it
      for later in prog[ k + 2: ]:
        srcs = [ int( getattr( later, f ) ) for f in ( "src1", "src2", "bias", "rf" )
                 if hasattr( later, f ) ]
        if int( inst.dst ) in srcs:
          raise AssertionError( f"chained v{int( inst.dst )} read again at {later}" )
        if int( getattr( later, "dst", -1 ) ) == int( inst.dst ):
          break


def test_the_host_refuses_a_generation_past_the_compiled_context():
  """The one context rule (`gpt2.decoding.context_problem`) against the
  compiled context, before any step runs."""
  cfg = gpt2_preset( "tiny" )
  host = Host( compile_model( random_weights( cfg, 0 ).to_fp16(), DFXConfig( cores=1 ), 1,
                              max_tokens=4 ) )
  with pytest.raises( ValueError, match=r"2 prompt tokens \+ 3 new tokens = 5 positions, but the "
                                        r"compiled model has max_tokens=4; use n_new <= 2" ):
    host.generate( [ 1, 2 ], 3 )
  with pytest.raises( ValueError, match="a prompt of at least one token" ):
    host.generate( [], 1 )
  assert host.step_cycles == [] and host.pos == 0
  assert host.generate( [ 1, 2 ], 2 ) and len( host.step_cycles ) == 3
