"""The compiler refuses every model a CL/RTL core would run wrongly or could
not run (`compiler.limits`): one case per limit, each checking that the
error names the limit, the value needed and the value available; and the
presets compile at the paper's DFXConfig."""

import pytest

from pymtl_dfx.compiler.build import plan
from pymtl_dfx.compiler.limits import CompileError
from pymtl_dfx.config import GPT2_PRESETS, ConfigError, DFXConfig, GPT2Config, gpt2_preset
from pymtl_dfx.isa.fields import VECS

TINY = gpt2_preset( "tiny" )            # n_embd 128, 2 heads of 64, 128 positions


def refused( gpt, dfx, cores=None, max_tokens=None ):
  cores = dfx.cores if cores is None else cores
  with pytest.raises( CompileError ) as e:
    plan( gpt, dfx, cores, max_tokens )
  return str( e.value )


def has( msg, *parts ):
  for p in parts:
    assert p in msg, f"{p!r} not in: {msg}"


def test_head_dim():
  gpt = GPT2Config( n_embd=96, n_head=3, vocab_size=64, n_positions=32 )
  has( refused( gpt, DFXConfig() ), "head_dim", "head_dim=32", "multiple of d=64" )


def test_core_count_ring():
  has( refused( TINY, DFXConfig( cores=256 ) ), "core count", "256", "1..255" )
  has( refused( TINY, DFXConfig(), cores=0 ), "core count", "0", "1..255" )


def test_core_count_matches_config():
  has( refused( TINY, DFXConfig( cores=2 ), cores=4 ), "core count", "compiled for 4 cores",
       "DFXConfig.cores=2" )


def test_l_at_most_d():
  has( refused( TINY, DFXConfig( d=32, l=64 ) ), "l <= d", "l=64 > d=32", "lower l or raise d" )


def test_x_buffer_weights():
  # an x buffer of 4 entries of 64 = 256 rows; mlp_proj has n_inner = 512
  has( refused( TINY, DFXConfig( mreg_entries=8 ) ), "x buffer", "mlp_proj (512 x",
       "needs 8 x-buffer entries", "holds 4", "raise mreg_entries" )


def test_x_buffer_attention_context():
  # p V has one row per token: 1024 tokens need 16 entries, 8 available
  gpt = GPT2Config( n_layer=1, n_embd=128, n_head=2, vocab_size=64, n_positions=1024 )
  has( refused( gpt, DFXConfig( mreg_entries=16 ) ), "x buffer", "attention p V (1024 x 64)",
       "needs 16 x-buffer entries", "holds 8", "max_tokens" )
  plan( gpt, DFXConfig( mreg_entries=16 ), 1, max_tokens=512 )   # a shorter context fits


def test_register_file():
  has( refused( TINY, DFXConfig( vreg_entries=64 ) ), "register file", "needs 68 entries",
       "vreg_entries=64" )


def test_context_positions():
  has( refused( TINY, DFXConfig(), max_tokens=129 ), "context", "max_tokens=129",
       "n_positions=128" )


def test_context_pos_field():
  gpt = GPT2Config( n_layer=1, n_embd=128, n_head=2, vocab_size=64, n_positions=70000 )
  has( refused( gpt, DFXConfig( vreg_entries=4096, mreg_entries=4096 ), max_tokens=65537 ),
       "context", "position 65536", "POS_BITS=16" )


def test_dma_transfer_length():
  # gpt2-xl-dfx's LM head on one core: 24 row chunks x 3144 tiles x 16
  has( refused( gpt2_preset( "gpt2-xl-dfx" ), DFXConfig() ), "DMA transfer", "lm_head",
       "vecs=1207296", f"holds {VECS.max}", "more cores" )


def test_hbm_capacity():
  has( refused( gpt2_preset( "gpt2" ), DFXConfig( hbm_channel_mb=1 ) ), "HBM capacity",
       "need 4451328 words", "holds 524288" )


def test_ddr_capacity():
  # 2^30 vocabulary rows of 4 words fill DDR's 2^32-word address space
  gpt = GPT2Config( n_layer=1, n_embd=128, n_head=2, vocab_size=1 << 30, n_positions=32 )
  has( refused( gpt, DFXConfig( cores=4 ) ), "DDR capacity", "need 4303356074 words",
       "holds 4294967296" )


def test_isa_field_widths():
  has( refused( TINY, DFXConfig( vreg_entries=8192 ) ), "ISA field widths", "VREG_BITS=12",
       "8191" )


def test_psum_entries_are_the_configs():
  """The MPU's sequencer assumes a power-of-two partial-sum buffer; DFXConfig
  refuses anything else, and one entry (one column tile per band) compiles."""
  for bad in ( 0, 3 ):
    with pytest.raises( ConfigError, match=f"psum_entries={bad}" ):
      DFXConfig( psum_entries=bad )
  plan( TINY, DFXConfig( psum_entries=1 ), 1 )


PRESET_CASES = [ ( name, cores ) for name in GPT2_PRESETS for cores in ( 1, 2, 4 ) ]


@pytest.mark.parametrize( "name,cores", PRESET_CASES )
def test_presets_compile_at_the_papers_config( name, cores ):
  """Every preset at the paper's DFXConfig on 1, 2 and 4 cores, except
  the 1.5B ones on one core: the LM head (1.2M vectors) is one hbm_read
  longer than the ISA's vecs field (the paper runs it on 4 cards)."""
  gpt, dfx = gpt2_preset( name ), DFXConfig( cores=cores )
  too_long = { "gpt2-xl-dfx": 1207296, "gpt2-xl-dfx-1600": 1257600 }   # 24 or 25 row chunks
  if cores == 1 and name in too_long:
    has( refused( gpt, dfx ), "DMA transfer", f"vecs={too_long[ name ]}" )
    return
  lay = plan( gpt, dfx, cores )
  assert lay["max_tokens"] == gpt.n_positions


def test_ddr_capacity_of_the_card():
  """Within the DDR address space, but past the U280's 2 x 16 GB of DDR4:
  2^27 vocabulary rows of 4 words of 64 bytes are 32 GiB of embeddings."""
  gpt = GPT2Config( n_layer=1, n_embd=128, n_head=2, vocab_size=1 << 27, n_positions=32 )
  has( refused( gpt, DFXConfig( cores=4 ) ), "DDR capacity", "a U280's two DDR4 channels hold",
       "536870912 (32.000 GiB)" )
