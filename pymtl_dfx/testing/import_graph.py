"""The package's layers, ground up, and the check that each imports only below itself.

`LAYERS` is the one statement of the contract: a room (a top-level module
or package of `pymtl_dfx`) may import its own modules and the rooms of
lower layers, never a room of its own layer or of a higher one.  Every
import counts, a function-local one too: an import deferred to run time is
still a dependency, and importing a package runs its `__init__`, which
imports what it names.  `problems()` lists each arrow that breaks the
contract, each module circle and each room the contract does not place;
tests/test_import_layers.py fails on any.  `python -m
pymtl_dfx.testing.import_graph` prints the graph's size and its problems.
"""

import ast
import pathlib
import sys
from collections import defaultdict

PACKAGE = pathlib.Path( __file__ ).resolve().parent.parent

# (what the layer is, its rooms), the lowest first
LAYERS = (
  ( "the package's name and how values are shown",    ( "pymtl_dfx", "printable", "models" ) ),
  ( "reading files",                                   ( "files", ) ),
  ( "where outputs may go",                            ( "outputs", ) ),
  ( "writing them atomically",                         ( "atomic", ) ),
  ( "the configuration",                               ( "config", ) ),
  ( "the ISA, building blocks, translation, resources", ( "isa", "lib", "hdl", "resources",
                                                         "calibration" ) ),
  ( "numerics, bounds and profiles",                   ( "numerics", "bounds", "profiles" ) ),
  ( "the units",                                       ( "units", ) ),
  ( "the compiler (layout, program, images)",          ( "compiler", ) ),
  ( "the GPT-2 model: checkpoints, reference, decoding", ( "gpt2", ) ),
  ( "the core and the functional cores",               ( "core", "funcsim" ) ),
  ( "the appliance, its backends and host",            ( "appliance", ) ),
  ( "the timing model and the U280 kernel",            ( "perf", "kernel" ) ),
  ( "every level by name",                             ( "levels", ) ),
  ( "reports and sweeps",                              ( "report", "sweep" ) ),
  ( "the demo",                                        ( "demo", ) ),
  ( "the command line and the test support",           ( "cli", "testing" ) ),
)
LAYER_OF = { room: k for k, ( _, rooms ) in enumerate( LAYERS ) for room in rooms }


def modules( root=PACKAGE ):
  """{dotted name: (path, is a package)} of every module under `root`."""
  out = {}
  for path in sorted( root.rglob( "*.py" ) ):
    parts = list( path.relative_to( root.parent ).with_suffix( "" ).parts )
    is_pkg = parts[-1] == "__init__"
    out[ ".".join( parts[:-1] if is_pkg else parts ) ] = ( path, is_pkg )
  return out


def _targets( name, is_pkg, node, mods, top ):
  """The modules of `mods` an import statement names."""
  here = name.split( "." ) if is_pkg else name.split( "." )[:-1]
  if isinstance( node, ast.Import ):
    wanted = [ a.name for a in node.names ]
  else:
    if node.level:
      base = ".".join( here[ :len( here ) - node.level + 1 ] + ( [ node.module ] if node.module else [] ) )
    else:
      base = node.module or ""
    wanted = [ f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names ]
  out = set()
  for t in wanted:
    if t.split( "." )[0] != top:
      continue
    while t not in mods and "." in t:
      t = t.rsplit( ".", 1 )[0]
    if t in mods and t != name:
      out.add( t )
  return out


def arrows( root=PACKAGE ):
  """{module: the modules it imports} over the package at `root`."""
  mods = modules( root )
  graph = {}
  for name, ( path, is_pkg ) in mods.items():
    tree = ast.parse( path.read_text(), str( path ) )
    graph[ name ] = set()
    for node in ast.walk( tree ):
      if isinstance( node, ( ast.Import, ast.ImportFrom ) ):
        graph[ name ] |= _targets( name, is_pkg, node, mods, root.name )
  return graph


def room( name ):
  parts = name.split( "." )
  return parts[1] if len( parts ) > 1 else parts[0]


def circles( graph ):
  """The strongly connected sets of more than one module (Tarjan's)."""
  index, low, stack, on, found = {}, {}, [], set(), []

  def visit( v ):
    index[ v ] = low[ v ] = len( index )
    stack.append( v )
    on.add( v )
    for w in sorted( graph.get( v, () ) ):
      if w not in index:
        visit( w )
        low[ v ] = min( low[ v ], low[ w ] )
      elif w in on:
        low[ v ] = min( low[ v ], index[ w ] )
    if low[ v ] == index[ v ]:
      comp = []
      while True:
        w = stack.pop()
        on.discard( w )
        comp.append( w )
        if w == v:
          break
      if len( comp ) > 1:
        found.append( sorted( comp ) )

  limit = sys.getrecursionlimit()
  sys.setrecursionlimit( max( limit, 10 * len( graph ) + 100 ) )
  try:
    for v in sorted( graph ):
      if v not in index:
        visit( v )
  finally:
    sys.setrecursionlimit( limit )
  return found


def problems( root=PACKAGE, layer_of=None ):
  """One line per break of the contract: an arrow to the same or a higher
  layer, a module circle, a room no layer holds."""
  layer_of = LAYER_OF if layer_of is None else layer_of
  graph = arrows( root )
  out = []
  for r in sorted( { room( m ) for m in graph } - set( layer_of ) ):
    out.append( f"room {r} is in no layer: place it in LAYERS ({__name__})" )
  for a in sorted( graph ):
    for b in sorted( graph[ a ] ):
      ra, rb = room( a ), room( b )
      if ra != rb and ra in layer_of and rb in layer_of and layer_of[ rb ] >= layer_of[ ra ]:
        how = "the same layer as" if layer_of[ rb ] == layer_of[ ra ] else "a higher layer than"
        out.append( f"{a} imports {b}: {rb} is in {how} {ra}" )
  for c in circles( graph ):
    out.append( "import circle: " + " -> ".join( c ) )
  return out


def summary( root=PACKAGE ):
  """The graph's size: modules, module arrows, room arrows, and how many
  room arrows run to the same or a higher layer."""
  graph = arrows( root )
  rooms = defaultdict( set )
  for a, bs in graph.items():
    for b in bs:
      if room( a ) != room( b ):
        rooms[ room( a ) ].add( room( b ) )
  up = sum( 1 for a, bs in rooms.items() for b in bs
            if a in LAYER_OF and b in LAYER_OF and LAYER_OF[ b ] >= LAYER_OF[ a ] )
  return dict( modules=len( graph ), arrows=sum( map( len, graph.values() ) ),
               room_arrows=sum( map( len, rooms.values() ) ), upward_room_arrows=up,
               circles=len( circles( graph ) ) )


if __name__ == "__main__":
  print( ", ".join( f"{k.replace( '_', ' ' )} {v}" for k, v in summary().items() ) )
  for k, ( what, rooms ) in enumerate( LAYERS ):
    print( f"  layer {k:2}: {', '.join( rooms ):28} {what}" )
  found = problems()
  print( "\n".join( found ) if found else "the contract holds" )
  sys.exit( 1 if found else 0 )
