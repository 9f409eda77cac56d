"""`proj_row_split`: the compiler splits the two c_proj matrices by rows
(`emit.StepEmitter.row_slice`).  On more than one core a layer has two
syncs instead of four, each of the full-width partials (a whole number of
register entries per core), followed by the VPU's sum in core order and the
bias; every core's c_proj weights are its own rows (its heads', its c_fc
columns') at every column, zero-padded; on one core the layout and every
program are the default's.  A model with uneven splits (a padding head, a
c_fc segment whose padding rows make a whole chunk, a residual that is not a
whole number of entries) runs at the functional level bit for bit as the
DFX-numerics reference at its config, and its numbers are not the column
split's.  Registers that do not fit are a CompileError naming the option."""

import numpy as np
import pytest

from pymtl_dfx import numerics as N
from pymtl_dfx.appliance.host import Host
from pymtl_dfx.compiler.build import compile_model, plan
from pymtl_dfx.compiler.emit import StepEmitter
from pymtl_dfx.compiler.limits import CompileError
from pymtl_dfx.lib.tiling import to_grid
from pymtl_dfx.config import DFXConfig, GPT2Config
from pymtl_dfx.gpt2 import DFXForward, generate, random_weights
from pymtl_dfx.isa import ComputeOp as C, Kind, RouterOp as R, encode
from pymtl_dfx.testing.core_mixing import dfx_config
from pymtl_dfx.units.control.decode_cache import decoded

# 3 heads of 32 in an 80-wide residual (3 entries of d=32: its partials
# pad to 96), n_inner 320: on 4 cores one head each (core 3's is padding)
# and c_fc segments of 96 columns, the last core's [288, 320) + 64 padding
GPT = GPT2Config( n_layer=2, n_embd=80, n_head=3, head_dim=32, vocab_size=64, n_positions=8,
                  name="uneven" )
PROMPT, NEW, T = [ 3, 9 ], 2, 4


def cfg( cores, split=1 ):
  # the default's 320-row mlp c_proj needs x buffers of 10 entries
  return dfx_config( cores ).replace( mreg_entries=32, proj_row_split=split )


def program( lay, core, pos=1 ):
  prog, _ = StepEmitter( lay, GPT ).step( core, 5, pos, want_logits=True )
  return [ decoded( encode( i ) ) for i in prog ]


@pytest.mark.parametrize( "cores", [ 2, 4 ] )
def test_row_split_layout_and_program( cores ):
  lay, base = plan( GPT, cfg( cores ), cores, T ), plan( GPT, cfg( cores, 0 ), cores, T )
  d, ents = lay["d"], -( -GPT.n_embd // lay["d"] )
  rf, mats = lay["rf"], lay["hbm"]["matrices"]
  seg_a, seg_f = lay["split"]["attn"], lay["split"]["fc"]
  assert ( mats["h0.attn_proj"]["rows"], mats["h0.attn_proj"]["cols"] ) == ( seg_a, GPT.n_embd )
  assert ( mats["h0.mlp_proj"]["rows"], mats["h0.mlp_proj"]["cols"] ) == ( seg_f, GPT.n_embd )
  # after every default region, which keep their places
  assert rf["parts"] == base["rf_entries"] and rf["b_proj"] == rf["parts"] + cores * ents
  assert { k: v for k, v in rf.items() if k in base["rf"] } == base["rf"]
  for core in range( cores ):
    insts = program( lay, core )
    syncs = [ i for i, op, kind in insts if kind == Kind.ROUTER and op == R.SYNC ]
    assert len( syncs ) == 2 * GPT.n_layer
    assert all( ( int( i.rf ), int( i.len ) ) == ( rf["parts"], ents * d ) for i in syncs )
    mms = [ i for i, op, kind in insts if kind == Kind.COMPUTE and op == C.MM
            and int( i.dst ) == rf["parts"] + core * ents ]
    assert [ ( int( i.src1 ), int( i.rows ), int( i.cols ) ) for i in mms ] == [
      ( rf["a"] + core * seg_a // d, seg_a, GPT.n_embd ),
      ( rf["f"] + core * seg_f // d, seg_f, GPT.n_embd ) ] * GPT.n_layer
    # after each sync: the partials in core order, then the bias
    k = next( n for n, ( i, op, kind ) in enumerate( insts ) if kind == Kind.ROUTER )
    adds = [ ( int( i.dst ), int( i.src1 ), int( i.src2 ) ) for i, op, _ in insts[ k + 1:k + cores + 1 ] ]
    o, p = rf["o"], rf["parts"]
    assert adds == [ ( o, p, p + ents ) ] + [ ( o, o, p + j * ents ) for j in range( 2, cores ) ] \
      + [ ( o, o, rf["b_proj"] ) ]


def test_one_core_is_the_default_design():
  lay, base = plan( GPT, cfg( 1 ), 1, T ), plan( GPT, cfg( 1, 0 ), 1, T )
  assert lay == base
  assert program( lay, 0 ) == program( base, 0 )


def test_row_split_weights_are_the_cores_rows():
  """mlp c_proj: core k's 96 rows of c_fc columns [96k, 96k + 96), the
  last core's 32 real ones and 64 +0 rows; attn c_proj: its head's 32 rows
  (+0 for core 3's padding head); every core the whole bias."""
  w = random_weights( GPT, 3 ).to_fp16()
  cm = compile_model( w, cfg( 4 ), 4, max_tokens=T )
  regions = cm.layout["ddr"]["regions"]

  def stored( mem, addr, n ):
    return N.bits( mem.reshape( -1 )[ addr * cm.dfx.mem_word_elems:][ :n ] )

  for name, wname, seg, bias in ( ( "mlp_proj", "mlp.c_proj", 96, "b_m" ),
                                  ( "attn_proj", "attn.c_proj", 32, "b_o" ) ):
    full = w.layer( 1, wname + ".weight" )
    m = cm.layout["hbm"]["matrices"][ f"h1.{name}" ]
    for core in range( 4 ):
      rows = np.zeros( ( seg, GPT.n_embd ), np.float16 )
      part = full[ core * seg:( core + 1 ) * seg ]
      rows[ :len( part ) ] = part
      grid = to_grid( rows, cm.dfx.d, cm.dfx.l ).reshape( -1 )
      hbm, ddr = cm.images[ core ]
      assert np.array_equal( stored( hbm, m["addr"], grid.size ), N.bits( grid ) ), ( name, core )
      assert np.array_equal( stored( ddr, regions[ f"h1.{bias}" ], GPT.n_embd ),
                             N.bits( w.layer( 1, wname + ".bias" ) ) ), ( name, core )


@pytest.mark.parametrize( "cores", [ 2, 4 ] )
def test_uneven_row_split_is_its_reference( cores ):
  w = random_weights( GPT, 11 ).to_fp16()
  cm = compile_model( w, cfg( cores ), cores, max_tokens=T )
  host = Host( cm, "func" )
  tokens = host.generate( PROMPT, NEW )
  ref = DFXForward( w, cm.dfx )
  assert tokens == generate( ref, PROMPT, NEW )
  ref.reset()
  for tok in PROMPT + tokens[ :-1 ]:
    logits = ref.step( tok )
  assert np.array_equal( N.bits( logits ), N.bits( host.last_logits ) )
  col = DFXForward( w, cm.dfx.replace( proj_row_split=0 ) )
  for tok in PROMPT + tokens[ :-1 ]:
    other = col.step( tok )
  assert not np.array_equal( N.bits( logits ), N.bits( other ) ), "the split changed no logit"


def test_row_split_registers_that_do_not_fit():
  """vreg_entries=128 holds the default layout at a context of 800 (scores
  and probs 25 entries each) but not the 4 cores' partials and the bias
  (15 entries more): the error names the option, the entries it needs and
  what to change."""
  gpt = GPT2Config( n_layer=2, n_embd=80, n_head=3, head_dim=32, vocab_size=64,
                    n_positions=1024 )
  small = DFXConfig( d=32, l=8, cores=4, hbm_channels=4, mreg_entries=64, psum_entries=16,
                     vreg_entries=128, proj_row_split=1 )
  assert plan( gpt, small.replace( proj_row_split=0 ), 4, 800 )["rf_entries"] <= 128
  with pytest.raises( CompileError, match=r"register file: proj_row_split=1 needs the 4 cores' "
                      r"full-width partials and the bias of the all-reduce \(15 entries.*"
                      r"set proj_row_split=0, raise vreg_entries" ):
    plan( gpt, small, 4, 800 )
