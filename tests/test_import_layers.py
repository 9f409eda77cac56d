"""The package's layers (`testing.import_graph.LAYERS`): every import runs
downward, no module circle, every room placed."""

import textwrap

from pymtl_dfx.testing import import_graph as G


def test_the_package_keeps_its_layers():
  found = G.problems()
  assert not found, "\n".join( found )


def _package( tmp_path, files ):
  root = tmp_path / "pkg"
  for name, text in files.items():
    path = root / name
    path.parent.mkdir( parents=True, exist_ok=True )
    path.write_text( textwrap.dedent( text ) )
  return root


def test_the_check_sees_an_upward_import_a_circle_and_an_unplaced_room( tmp_path ):
  """A function-local import counts, a package's __init__ imports what it
  names, and a room of the same layer is refused as a higher one is."""
  root = _package( tmp_path, {
    "__init__.py": "",
    "low.py": "def f():\n  from .high import g\n",
    "high.py": "from . import low\n",
    "mid/__init__.py": "from .a import x\n",
    "mid/a.py": "x = 1\n",
    "peer.py": "from .mid import x\n",
    "new.py": "from pkg import low\n" } )
  layers = { "pkg": 0, "low": 0, "mid": 1, "peer": 1, "high": 2 }
  found = G.problems( root, layers )
  assert "pkg.low imports pkg.high: high is in a higher layer than low" in found
  assert "pkg.peer imports pkg.mid: mid is in the same layer as peer" in found
  assert "import circle: pkg.high -> pkg.low" in found
  assert any( line.startswith( "room new is in no layer" ) for line in found )
  assert not any( "pkg.high imports" in line for line in found )     # downward
