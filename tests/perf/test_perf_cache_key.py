"""The step cache's key hashes the timing code: every pymtl_dfx module the
module that times the steps imports (its import closure), so a change to
any of them, even one nobody listed, invalidates the cache."""

import json
import shutil
import subprocess
import sys

from pymtl_dfx.perf import sampled


def test_the_closure_holds_every_module_perf_loads():
  # what importing the timing code really loads, in a fresh process
  out = subprocess.run(
    [ sys.executable, "-c", "import json, sys, pymtl_dfx.perf.sampled; print( json.dumps( "
      "sorted( m for m, mod in sys.modules.items() if m.split( '.' )[0] == 'pymtl_dfx'"
      " and getattr( mod, '__file__', None ) ) ) )" ],   # a namespace package has no source
    capture_output=True, text=True, check=True ).stdout
  loaded = set( json.loads( out ) )
  closure = sampled.timing_modules()
  assert loaded <= set( closure ), sorted( loaded - set( closure ) )
  for name in ( "pymtl_dfx.perf.core", "pymtl_dfx.perf.appliance", "pymtl_dfx.perf.fold",
                "pymtl_dfx.units.vpu.timing", "pymtl_dfx.config", "pymtl_dfx.core.netlist" ):
    assert name in closure


def test_changing_any_module_perf_imports_changes_the_key( tmp_path ):
  modules = sampled.timing_modules()
  copies = {}
  for i, ( name, f ) in enumerate( sorted( modules.items() ) ):
    copies[ name ] = tmp_path / f"{i}.py"
    shutil.copyfile( f, copies[ name ] )
  base = sampled.code_hash( copies )
  assert base == sampled.code_hash( modules ) == sampled.code_hash()
  for name, f in copies.items():
    text = f.read_bytes()
    f.write_bytes( text + b"\n# changed\n" )
    assert sampled.code_hash( copies ) != base, name
    f.write_bytes( text )
  assert sampled.code_hash( copies ) == base


def test_the_cache_key_follows_the_code_hash( monkeypatch ):
  from test_perf_sampled import model
  m = model()
  key = sampled.StepCache( None ).key( m, 3, 1, True )
  monkeypatch.setattr( sampled, "_running_code_hash", lambda: "another version" )
  assert sampled.StepCache( None ).key( m, 3, 1, True ) != key
