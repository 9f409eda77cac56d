"""`dfx generate`: the JSON it prints, and clear errors for bad arguments."""

import json

import pytest

from pymtl_dfx.cli import main
from pymtl_dfx.config import DFXConfig, gpt2_preset
from pymtl_dfx.gpt2 import DFXForward, generate, random_weights


def run_json( capsys, *args ):
  assert main( [ "generate", "--json", *args ] ) == 0
  return json.loads( capsys.readouterr().out )


def test_generate_json_matches_the_reference( capsys ):
  out = run_json( capsys, "--model", "tiny", "--prompt-ids", "1,2,3", "--new-tokens", "4",
                  "--cores", "2", "--seed", "3" )
  w = random_weights( gpt2_preset( "tiny" ), 3 ).to_fp16()
  assert out["tokens"] == generate( DFXForward( w, DFXConfig() ), [ 1, 2, 3 ], 4 )
  assert ( out["level"], out["cores"], out["prompt_ids"] ) == ( "func", 2, [ 1, 2, 3 ] )
  per = out["per_op_class"]
  assert set( per ) == { "embedding", "layernorm", "attention", "ffn", "residual", "sync", "lm_head" }
  for cls in ( "attention", "ffn", "lm_head" ):
    assert per[ cls ]["flops"] > 0 and per[ cls ]["hbm_bytes"] > 0
  assert per["sync"]["ring_bytes"] > 0 and per["embedding"]["ddr_bytes"] > 0
  assert out["total"]["instructions"] == sum( v["instructions"] for v in per.values() )


def test_text_prompt_streams_text( capsys ):
  assert main( [ "generate", "--model", "tiny", "--prompt", "Hi", "--new-tokens", "2" ] ) == 0
  assert capsys.readouterr().out.startswith( "Hi" )


@pytest.mark.parametrize( "args,message", [
  ( [ "--model", "gpt5", "--prompt-ids", "1" ], "neither a checkpoint directory nor a preset" ),
  ( [ "--model", "tiny", "--prompt-ids", "1,x" ], "comma-separated integers" ),
  ( [ "--model", "tiny", "--prompt-ids", "999" ], "out of range: [999]" ),
  ( [ "--model", "tiny", "--prompt-ids", "1", "--cores", "0" ], "--cores 0 must be at least 1" ),
] )
def test_bad_arguments( args, message ):
  with pytest.raises( SystemExit ) as e:
    main( [ "generate", *args ] )
  assert message in str( e.value )
