"""Tiling order, model-parallel splits, layout and the compiled image file."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.compiler.build import compile_model, load_compiled, plan
from pymtl_dfx.compiler.image_file import ImageFormatError
from pymtl_dfx.compiler.layout import plan_layout
from pymtl_dfx.compiler.partition import Partition
from pymtl_dfx.lib.tiling import from_stream, tile_order, to_stream
from pymtl_dfx.config import ConfigError, DFXConfig, GPT2Config, gpt2_preset
from pymtl_dfx.gpt2 import random_weights


@pytest.mark.parametrize( "rows,cols,d,l,band", [ ( 64, 16, 64, 16, 1 ), ( 200, 37, 32, 8, 3 ),
                                                  ( 5, 70, 8, 4, 100 ), ( 96, 24, 32, 8, 2 ) ] )
def test_stream_round_trip_and_zigzag( rows, cols, d, l, band ):
  w = np.random.default_rng( rows ).standard_normal( ( rows, cols ) ).astype( np.float16 )
  assert np.array_equal( N.bits( from_stream( to_stream( w, d, l, band ), rows, cols, d, l, band ) ),
                         N.bits( w ) )
  order = tile_order( rows, cols, d, l, band )
  assert sorted( order ) == sorted( set( order ) )          # every tile once
  for c in { c for _, c in order }:                          # chunks ascend per column
    rs = [ r for r, cc in order if cc == c ]
    assert rs == sorted( rs )
  # within a band the direction alternates between row chunks
  first_band = [ ( r, c ) for r, c in order if c < band ]
  if len( { r for r, _ in first_band } ) > 1 and band > 1:
    r0 = [ c for r, c in first_band if r == 0 ]
    r1 = [ c for r, c in first_band if r == 1 ]
    assert r1 == r0[::-1]


def test_head_and_column_padding_for_gpt2_xl():
  """gpt2-xl has 25 heads of 64 on 1600 channels: pad instead of rejecting."""
  cfg = GPT2Config( n_layer=48, n_embd=1600, n_head=25, vocab_size=50257, name="gpt2-xl" )
  p = Partition( cfg, DFXConfig(), 4 )
  assert p.heads_per_core == 7
  assert [ len( p.real_heads( c ) ) for c in range( 4 ) ] == [ 7, 7, 7, 4 ]
  rep = p.padding_report()
  assert rep["heads"] == { "real": 25, "padded": 28, "overhead": 0.12 }
  assert rep["vocab"]["padded"] == 4 * 12608 and rep["vocab"]["padded"] >= 50257
  for split in ( p.attn_proj, p.fc, p.mlp_proj, p.vocab ):
    assert split.seg % 64 == 0
    # real columns are contiguous from 0: padding only at the end
    ends = [ split.real( c ) for c in range( 4 ) ]
    assert ends[0][0] == 0 and all( a[1] == b[0] or b[1] == b[0] for a, b in zip( ends, ends[1:] ) )


def test_gpt2_xl_dfx_1600_on_4_cores():
  """The residual and the MLP 1600 wide, the attention 24 x 64 = 1536: the
  heads split evenly (6 a core), attention's c_proj reads 1536 rows, and
  the 1600 residual columns (400 a core, 6.25 entries) pad to 448 a core."""
  lay = plan_layout( gpt2_preset( "gpt2-xl-dfx-1600" ), DFXConfig( cores=4 ), 4 )
  mats = lay["hbm"]["matrices"]
  assert ( mats["h0.c_attn"]["rows"], mats["h0.c_attn"]["cols"] ) == ( 1600, 3 * 6 * 64 )
  assert ( mats["h0.attn_proj"]["rows"], mats["h0.attn_proj"]["cols"] ) == ( 1536, 448 )
  assert ( mats["h0.c_fc"]["rows"], mats["h0.c_fc"]["cols"] ) == ( 1600, 1600 )
  assert ( mats["h0.mlp_proj"]["rows"], mats["h0.mlp_proj"]["cols"] ) == ( 6400, 448 )
  assert lay["split"]["attn"] == 384 and lay["padding"]["attn"]["padded"] == 1536
  assert lay["padding"]["heads"] == { "real": 24, "padded": 24, "overhead": 0.0 }
  assert lay["padding"]["attn_proj"] == { "real": 1600, "padded": 1792, "overhead": 0.12 }
  assert lay["row_words"] == 25 * DFXConfig().entry_words        # wte rows: 25 entries


def test_unsupported_shapes_are_named():
  with pytest.raises( ConfigError, match="head_dim=16.*multiple of d=64" ):
    Partition( GPT2Config( n_embd=32, n_head=2 ), DFXConfig(), 1 )
  # a given head_dim is the config's, not n_embd / n_head
  with pytest.raises( ConfigError, match=r"head_dim=48 needs to be a multiple of d=64" ):
    Partition( GPT2Config( n_embd=128, n_head=2, head_dim=48 ), DFXConfig(), 1 )


@pytest.mark.parametrize( "d,l,elems", [ ( 4, 4, 4 ), ( 8, 4, 8 ), ( 16, 8, 16 ), ( 64, 16, 32 ) ] )
def test_memory_word_below_d32_is_one_entry( d, l, elems ):
  """A memory word is 32 elements, or one register entry when d is smaller:
  every vector in the layout and the images is whole words."""
  dfx = DFXConfig( d=d, l=l )
  assert dfx.mem_word_elems == elems
  w = random_weights( gpt2_preset( "tiny" ), 0 ).to_fp16()
  cm = compile_model( w, dfx, 1, max_tokens=8 )
  assert cm.layout["vec_words"] == d // elems
  hbm, ddr = cm.images[0]
  assert hbm.shape == ( cm.layout["hbm"]["words"], elems )
  assert ddr.shape == ( cm.layout["ddr"]["words"], elems )
  # the first tile of layer 0's c_attn (one core: columns in model order) is
  # its first l columns of d rows, column after column, in l*d/E words
  m = cm.layout["hbm"]["matrices"]["h0.c_attn"]
  tile = hbm[ m["addr"]: m["addr"] + l * d // elems ].reshape( -1 )
  want = np.asarray( w.layer( 0, "attn.c_attn.weight" ), np.float16 )[ :d, :l ].T.reshape( -1 )
  assert np.array_equal( tile.view( np.uint16 ), want.view( np.uint16 ) )


def test_layout_fits_and_overflows_clearly():
  lay = plan_layout( gpt2_preset( "gpt2-medium" ), DFXConfig(), 4 )
  assert lay["rf_entries"] <= DFXConfig().vreg_entries
  assert lay["hbm"]["words"] * 64 <= DFXConfig().hbm_bytes
  with pytest.raises( ConfigError, match="register file: the layout needs 1256 entries" ):
    plan( gpt2_preset( "gpt2-medium" ), DFXConfig( vreg_entries=256 ), 1 )


def test_compiled_image_round_trip( tmp_path ):
  w = random_weights( gpt2_preset( "tiny" ), 0 ).to_fp16()
  cm = compile_model( w, DFXConfig( cores=2 ), 2, max_tokens=16 )
  path = tmp_path / "tiny.dfx"
  cm.save( path )
  back = load_compiled( path )
  assert back.layout == cm.layout and back.gpt == cm.gpt and back.dfx == cm.dfx
  for ( h0, d0 ), ( h1, d1 ) in zip( cm.images, back.images ):
    assert np.array_equal( N.bits( h0 ), N.bits( h1 ) ) and np.array_equal( N.bits( d0 ), N.bits( d1 ) )
  # a DFX variant's head_dim travels in the image's config
  narrow = GPT2Config( n_layer=1, n_embd=192, n_head=2, head_dim=64, vocab_size=64,
                       n_positions=16, name="narrow-attn" )
  cm2 = compile_model( random_weights( narrow, 0 ).to_fp16(), DFXConfig( cores=2 ), 2 )
  cm2.save( tmp_path / "narrow.dfx" )
  back2 = load_compiled( tmp_path / "narrow.dfx" )
  assert back2.gpt == narrow and back2.gpt.attn_dim == 128 and back2.layout == cm2.layout
  data = path.read_bytes()
  ( tmp_path / "cut.dfx" ).write_bytes( data[ : len( data ) // 2 ] )
  with pytest.raises( ImageFormatError, match="cut.dfx" ):
    load_compiled( tmp_path / "cut.dfx" )
