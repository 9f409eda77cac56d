"""The model cache's key: the same Verilog hashes alike wherever the
checkout is (pymtl3's comments name the source's absolute path), and any
change to the code changes it."""

from pymtl_dfx.hdl import verilated_cache as vc

CODE = "module M (\n  input logic a\n);\n  // At {where}/pymtl_dfx/units/x.py:12\n  assign b = {what};\nendmodule\n"


def _hash( tmp_path, name, where, what="a" ):
  f = tmp_path / name
  f.write_text( CODE.format( where=where, what=what ) )
  return vc._verilog_hash( f )


def test_the_key_ignores_where_the_checkout_is( tmp_path ):
  assert _hash( tmp_path, "a.v", "/tmp/clone1" ) == _hash( tmp_path, "b.v", "/work/main" )


def test_the_key_follows_the_code( tmp_path ):
  assert _hash( tmp_path, "a.v", "/x" ) != _hash( tmp_path, "b.v", "/x", what="~a" )
