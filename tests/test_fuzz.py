"""Fuzz: Hypothesis damages every file `dfx` reads and draws its argument values.

Each case runs the CLI in-process on a copy of a small checkpoint folder
(config.json, model.safetensors, tokenizer.json or vocab.json + merges.txt),
a compiled image or a step cache with one thing changed, and must end in one
of two ways:

  - refused: exit 1 or 2, exactly one line on stderr, no traceback, the
    JSON error object on stdout (every case runs with --json), and nothing
    written or changed on disk;
  - run: exit 0 with the same tokens as the undamaged input whenever the
    damage cannot change what the run computes (the same config, the same
    prompt ids, the same loaded weights, an image that still reads, a cache
    entry that is ignored and recomputed).

The cases are derandomised, so every CI run tries the same ones;
DFX_FUZZ_EXAMPLES=N multiplies them and DFX_FUZZ_SEED=K draws others.  The
number of cases per category is printed at the end of the run
(tests/conftest.py's summary of the `fuzz_cases` property).
"""

import collections
import contextlib
import io
import json
import os
import shutil
import signal
import struct
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from pymtl_dfx.cli import main
from pymtl_dfx.config import DFXConfig, GPT2Config
from pymtl_dfx.gpt2 import load_checkpoint, random_weights, save_checkpoint
from pymtl_dfx.models import TINY_ENGLISH
from pymtl_dfx.testing.disk import tree

# Small enough that one generation is about a second, with the shipped
# model's real GPT-2 tokenizer files (vocabulary 4096).
FUZZ_GPT2 = GPT2Config( n_layer=1, n_embd=64, n_head=1, vocab_size=4096, n_positions=32,
                        name="fuzz" )
TOKENIZER_FILES = ( "tokenizer.json", "vocab.json", "merges.txt" )
PROMPT = "He went up to"
NEW_TOKENS = "2"
HUNG_SECONDS = 60      # a case still running then is a hang, not a slow machine

SCALE = max( 1, int( os.environ.get( "DFX_FUZZ_EXAMPLES", "1" ) ) )
SEED = os.environ.get( "DFX_FUZZ_SEED" )


def fuzz_settings( n ):
  s = settings( max_examples=n * SCALE, deadline=None, derandomize=SEED is None,
                database=None, suppress_health_check=list( HealthCheck ) )
  return ( lambda f: seed( int( SEED ) )( s( f ) ) ) if SEED is not None else s


# -- running the CLI -------------------------------------------------------------------

class Hung( BaseException ):
  pass


def _alarm( signum, frame ):
  raise Hung()


def run_cli( argv, cwd ):
  """(exit code, stdout, stderr) of `dfx ARGV` run in `cwd`."""
  out, err = io.StringIO(), io.StringIO()
  old_cwd = os.getcwd()
  old = signal.signal( signal.SIGALRM, _alarm )
  signal.alarm( HUNG_SECONDS )
  try:
    os.chdir( cwd )
    with contextlib.redirect_stdout( out ), contextlib.redirect_stderr( err ):
      try:
        code = main( argv )
      except SystemExit as e:       # argparse's usage errors and --help
        code = e.code if isinstance( e.code, int ) else 1
  except Hung:
    pytest.fail( f"dfx {' '.join( argv )} still ran after {HUNG_SECONDS} s" )
  finally:
    signal.alarm( 0 )
    signal.signal( signal.SIGALRM, old )
    os.chdir( old_cwd )
  return code, out.getvalue(), err.getvalue()




def assert_refused( code, out, err, before, after, what ):
  lines = err.strip().splitlines()
  assert code in ( 1, 2 ), f"{what}: exit {code}, stderr {err!r}"
  assert len( lines ) == 1 and lines[0].startswith( "dfx " ), f"{what}: stderr {err!r}"
  assert "Traceback" not in err, what
  error = json.loads( out.strip().splitlines()[ -1 ] )["error"]
  assert error["exit_code"] == code and error["message"], what
  assert after == before, f"{what}: a refused run changed " \
    f"{sorted( set( after.items() ) ^ set( before.items() ) )[:4]}"


def outcome( code, out, err, before, after, what ):
  """'refused' after checking the refusal, or the run's JSON result."""
  assert "Traceback" not in err, f"{what}: {err}"
  if code != 0:
    assert_refused( code, out, err, before, after, what )
    return "refused"
  return json.loads( out )


# -- the undamaged inputs -----------------------------------------------------------------

@pytest.fixture( scope="module" )
def base():
  """The undamaged folder, image and step cache, and their results."""
  top = tempfile.mkdtemp( prefix="dfx-fuzz-" )
  model = os.path.join( top, "model" )
  save_checkpoint( model, random_weights( FUZZ_GPT2, seed=11 ) )
  for name in TOKENIZER_FILES:
    shutil.copy( os.path.join( TINY_ENGLISH, name ), model )
  image = os.path.join( top, "fuzz.dfx" )
  code, out, err = run_cli( generate_args( model ) + [ "--save-image", image ], top )
  assert code == 0, err
  cache = os.path.join( top, "cache" )
  code, perf_out, err = run_cli( perf_args( cache ), top )
  assert code == 0, err
  b = dict( top=top, model=model, image=image, cache=cache, result=json.loads( out ),
            perf=json.loads( perf_out ), weights=load_checkpoint( model ) )
  yield b
  shutil.rmtree( top, ignore_errors=True )


def generate_args( model, *extra ):
  return [ "generate", "--model", model, "--prompt", PROMPT, "--new-tokens", NEW_TOKENS,
           "--json", *extra ]


def perf_args( cache ):
  return [ "perf", "--model", "tiny", "--cores", "2", "--in", "3", "--out", "2",
           "--cache", cache, "--json" ]


def perf_result( rec ):
  """What a perf run computes (not how long the host took to compute it)."""
  drop = { "seconds", "wall_seconds", "cache", "timed_steps", "cached_steps" }
  return { k: v for k, v in rec.items() if k not in drop }


@contextlib.contextmanager
def workspace( base, what=( "model", ) ):
  """A fresh copy of the base inputs named in `what`."""
  top = tempfile.mkdtemp( prefix="dfx-fuzz-case-" )
  try:
    for name in what:
      src, dst = base[ name ], os.path.join( top, os.path.basename( base[ name ] ) )
      ( shutil.copytree if os.path.isdir( src ) else shutil.copy )( src, dst )
    yield top
  finally:
    shutil.rmtree( top, ignore_errors=True )


# -- damage ---------------------------------------------------------------------------------

JUNK = st.sampled_from( [ b"", b"\x00" * 16, b"[" * 100_000, b'{"a":' * 50_000, b"null",
                          b"\xff\xfe\x00\x01", "{\"é\": 1}".encode( "utf-16" ), b"{}",
                          b"[]", b"1e999", b"NaN", b'"' + b"x" * 100_000 + b'"' ] )


@st.composite
def byte_damage( draw, data ):
  """`data` (bytes) truncated, with bytes flipped, inserted or deleted, or
  replaced by junk."""
  n = len( data )
  kind = draw( st.sampled_from( [ "truncate", "flip", "insert", "delete", "junk" ] ) )
  if kind == "truncate":
    return kind, data[ : draw( st.integers( 0, max( 0, n - 1 ) ) ) ]
  if kind == "flip":
    b = bytearray( data )
    for _ in range( draw( st.integers( 1, 4 ) ) ):
      i = draw( st.integers( 0, n - 1 ) )
      b[ i ] ^= draw( st.integers( 1, 255 ) )
    return kind, bytes( b )
  if kind == "insert":
    i = draw( st.integers( 0, n ) )
    return kind, data[ :i ] + draw( st.binary( min_size=1, max_size=16 ) ) + data[ i: ]
  if kind == "delete":
    i = draw( st.integers( 0, n - 1 ) )
    return kind, data[ :i ] + data[ i + draw( st.integers( 1, 64 ) ): ]
  return kind, draw( JUNK )


ODD_VALUES = st.one_of(
  st.none(), st.booleans(), st.integers( -2**70, 2**70 ), st.just( 10**400 ),
  st.sampled_from( [ 0, -1, 1, 2**31, 2**64 ] ),
  st.floats( allow_nan=True, allow_infinity=True ), st.text( max_size=12 ),
  st.lists( st.integers( -3, 3 ), max_size=3 ),
  st.dictionaries( st.text( max_size=4 ), st.integers( 0, 3 ), max_size=2 ) )


def json_paths( obj, path=(), limit=20_000 ):
  """Every path into a JSON value (keys and indexes), breadth-first."""
  out, todo = [], [ ( obj, path ) ]
  while todo and len( out ) < limit:
    node, p = todo.pop( 0 )
    out.append( p )
    items = node.items() if isinstance( node, dict ) else \
      enumerate( node ) if isinstance( node, list ) else ()
    todo.extend( ( v, p + ( k, ) ) for k, v in items )
  return out


@st.composite
def json_damage( draw, obj ):
  """A copy of the JSON value `obj` with one value replaced by an odd one,
  one key or item deleted, an unknown key added or a value wrapped in a
  list, or the whole thing written with other spacing and key order (the
  one harmless kind)."""
  import copy
  kind = draw( st.sampled_from( [ "replace", "replace", "delete", "add", "wrap", "respace" ] ) )
  if kind == "respace":
    return kind, json.dumps( obj, indent=draw( st.sampled_from( [ None, 1, 4 ] ) ),
                             sort_keys=True, ensure_ascii=draw( st.booleans() ) ).encode()
  obj = copy.deepcopy( obj )
  paths = json_paths( obj )
  p = draw( st.sampled_from( paths[ 1: ] if kind == "delete" and len( paths ) > 1 else paths ) )
  parent = obj
  for k in p[ :-1 ]:
    parent = parent[ k ]
  if kind == "add":
    node = parent[ p[ -1 ] ] if p else obj
    if isinstance( node, dict ):
      node[ draw( st.text( min_size=1, max_size=8 ) ) ] = draw( ODD_VALUES )
    elif isinstance( node, list ):
      node.append( draw( ODD_VALUES ) )
    else:
      kind = "replace"
  if kind == "replace" or kind == "wrap":
    value = draw( ODD_VALUES ) if kind == "replace" else [ parent[ p[ -1 ] ] if p else obj ]
    if p:
      parent[ p[ -1 ] ] = value
    else:
      obj = value
  elif kind == "delete" and p:
    del parent[ p[ -1 ] ]
  return kind, json.dumps( obj, allow_nan=True ).encode()


@st.composite
def file_damage( draw, path ):
  """(kind, apply): damage to the file at `path` as bytes, as JSON where it
  is JSON, or to the file itself (removed, a folder, a FIFO, a symlink loop)."""
  with open( path, "rb" ) as f:
    data = f.read()
  kinds = [ "bytes", "bytes" ]
  if path.endswith( ".json" ):
    kinds += [ "json", "json", "json" ]
  if draw( st.integers( 0, 9 ) ) == 0:
    what = draw( st.sampled_from( [ "missing", "folder", "fifo", "loop" ] ) )
    return what, lambda: replace_file( path, what )
  if draw( st.sampled_from( kinds ) ) == "json":
    kind, new = draw( json_damage( json.loads( data ) ) )
  else:
    kind, new = draw( byte_damage( data ) )
  return kind, lambda: write( path, new )


def write( path, data ):
  with open( path, "wb" ) as f:
    f.write( data )


def replace_file( path, what ):
  os.unlink( path )
  if what == "folder":
    os.mkdir( path )
  elif what == "fifo":
    os.mkfifo( path )
  elif what == "loop":
    os.symlink( os.path.basename( path ), path )


@st.composite
def safetensors_damage( draw, path ):
  """model.safetensors with its JSON header damaged (and its length field
  kept right, so the reader gets as far as the JSON), its length field
  changed, or its bytes damaged (headers and tensors alike)."""
  with open( path, "rb" ) as f:
    data = f.read()
  n = struct.unpack( "<Q", data[ :8 ] )[0]
  header, rest = data[ 8 : 8 + n ], data[ 8 + n: ]
  kind = draw( st.sampled_from( [ "header", "header", "length", "file" ] ) )
  if kind == "header":
    what, new = draw( json_damage( json.loads( header ) ) )
    return f"header {what}", lambda: write( path, struct.pack( "<Q", len( new ) ) + new + rest )
  if kind == "length":
    m = draw( st.sampled_from( [ 0, 1, n - 1, n + 1, len( data ), 2**63, 2**64 - 1 ] ) )
    return "length", lambda: write( path, struct.pack( "<Q", m ) + data[ 8: ] )
  return draw( file_damage( path ) )


# -- the cases --------------------------------------------------------------------------------

def check_model_case( base, data, which, record ):
  """One damaged file of the checkpoint folder, then `dfx generate`."""
  with workspace( base ) as top:
    model = os.path.join( top, "model" )
    if which in ( "vocab.json", "merges.txt" ):
      os.unlink( os.path.join( model, "tokenizer.json" ) )
    path = os.path.join( model, which )
    strategy = safetensors_damage( path ) if which == "model.safetensors" else file_damage( path )
    kind, damage = data.draw( strategy )
    damage()
    before = tree( top )
    got = outcome( *run_cli( generate_args( model ), top ), before, tree( top ),
                   f"{which} ({kind})" )
    record( which, got )
    if got == "refused":
      return
    want = base["result"]
    if got["prompt_ids"] != want["prompt_ids"]:
      return               # a changed vocabulary or merge: another prompt
    same_model = which in TOKENIZER_FILES
    if which == "config.json" or which == "model.safetensors":
      w = load_checkpoint( model )
      same_model = w.config == base["weights"].config and all(
        np.array_equal( w.tensors[ k ], v, equal_nan=True )
        for k, v in base["weights"].tensors.items() )
    if same_model:
      assert got["tokens"] == want["tokens"], f"{which} ({kind}) changed the tokens"


@pytest.mark.spread
@pytest.mark.parametrize( "which, n", [ ( "config.json", 40 ), ( "model.safetensors", 40 ),
                                        ( "tokenizer.json", 30 ), ( "vocab.json", 12 ),
                                        ( "merges.txt", 12 ) ] )
def test_damaged_checkpoint_folder( base, record_property, which, n ):
  counts = collections.Counter()

  def record( what, got ):
    counts[ "refused" if got == "refused" else "ran" ] += 1

  @fuzz_settings( n )
  @given( data=st.data() )
  def case( data ):
    check_model_case( base, data, which, record )

  case()
  record_property( "fuzz_cases", { which: dict( counts ) } )


@pytest.mark.spread
def test_damaged_image( base, record_property ):
  """A damaged compiled image (--image): refused, or the undamaged tokens
  (the image's CRCs cover everything that matters; padding does not)."""
  counts = collections.Counter()

  @fuzz_settings( 30 )
  @given( data=st.data() )
  def case( data ):
    with workspace( base, ( "model", "image" ) ) as top:
      image = os.path.join( top, "fuzz.dfx" )
      kind, damage = data.draw( file_damage( image ) )
      damage()
      before = tree( top )
      got = outcome( *run_cli( generate_args( os.path.join( top, "model" ), "--image", image ),
                               top ), before, tree( top ), f"image ({kind})" )
      counts[ "refused" if got == "refused" else "ran" ] += 1
      if got != "refused":
        assert got["tokens"] == base["result"]["tokens"], f"image ({kind}) changed the tokens"

  case()
  record_property( "fuzz_cases", { "image": dict( counts ) } )


def same_shape( a, b ):
  """Whether two JSON values have the same keys and value types throughout
  (a damaged cache entry that still looks like one may be taken as one)."""
  if isinstance( a, dict ):
    return isinstance( b, dict ) and a.keys() == b.keys() and \
      all( same_shape( a[ k ], b[ k ] ) for k in a )
  if isinstance( a, list ):
    return isinstance( b, list ) and len( a ) == len( b ) and \
      all( same_shape( x, y ) for x, y in zip( a, b ) )
  return type( a ) is type( b )


@pytest.mark.spread
def test_damaged_step_cache( base, record_property ):
  """A damaged step-cache entry is never fatal: it is ignored with a warning
  and the step recomputed, so the result is the undamaged one (unless the
  damage left a well-formed entry, which the cache cannot tell apart)."""
  counts = collections.Counter()
  entries = sorted( os.listdir( base["cache"] ) )

  @fuzz_settings( 20 )
  @given( data=st.data() )
  def case( data ):
    with workspace( base, ( "cache", ) ) as top:
      cache = os.path.join( top, "cache" )
      entry = os.path.join( cache, data.draw( st.sampled_from( entries ) ) )
      with open( entry, "rb" ) as f:
        original = f.read()
      kind, damage = data.draw( file_damage( entry ) )
      damage()
      plausible = False
      try:
        if os.path.isfile( entry ):     # not a FIFO: reading one would wait
          with open( entry, "rb" ) as f:
            plausible = same_shape( json.loads( f.read() ), json.loads( original ) )
      except ( OSError, ValueError, RecursionError ):
        pass
      code, out, err = run_cli( perf_args( cache ), top )
      assert code == 0 and "Traceback" not in err, f"cache entry ({kind}): exit {code}: {err}"
      counts[ "used" if plausible else "recomputed" ] += 1
      if not plausible:
        assert perf_result( json.loads( out ) ) == perf_result( base["perf"] ), \
          f"cache entry ({kind}) changed the result"

  case()
  record_property( "fuzz_cases", { "step cache entry": dict( counts ) } )


# -- argument values -------------------------------------------------------------------------

# Mostly small legal values (a run of seconds), so that runs get past the
# argument checks as often as they stop at them; and odd ones.
ODD_NUMBERS = st.sampled_from( [ "0", "-1", "1e3", "1.5", "nan", "inf", "", " 2", "0x10",
                                 str( 10**40 ), "٣", "40" ] )
NUMBERS = st.one_of( st.integers( 1, 3 ), st.integers( 1, 3 ), st.integers( -3, 12 ), ODD_NUMBERS )
JOBS = st.sampled_from( [ "0", "1", "-1", "x", "2" ] )
TEXT = st.text( st.characters( codec="utf-8" ), max_size=30 )
DFX_FIELDS = sorted( DFXConfig().to_dict() )


@st.composite
def set_option( draw ):
  key = draw( st.one_of( st.sampled_from( DFX_FIELDS ), st.sampled_from( DFX_FIELDS ), TEXT ) )
  value = draw( st.one_of( st.sampled_from( [ "0", "1", "2", "3", "16", "32", "64", "-5", "1e9",
                                              "nan", "true", "", str( 10**30 ), "2.5" ] ), TEXT ) )
  return [ "--set", f"{key}={value}" ]


@st.composite
def generate_argv( draw, model, top ):
  argv = [ "generate", "--json", "--model",
           draw( st.sampled_from( [ model, model, model, "tiny", "nonesuch", "", top ] ) ) ]
  if draw( st.booleans() ):
    argv += [ "--prompt", draw( st.one_of( st.just( PROMPT ), TEXT ) ) ]
  else:
    argv += [ "--prompt-ids", draw( st.one_of( st.just( "1,2" ), TEXT,
                                               st.sampled_from( [ "4096", "-1", "1,,2" ] ) ) ) ]
  options = {
    "--new-tokens": NUMBERS, "--cores": NUMBERS, "--seed": NUMBERS,
    "--temperature": st.one_of( NUMBERS, st.sampled_from( [ "0.7", "1e-30", "1e30" ] ) ),
    "--top-k": NUMBERS, "--unit-levels": st.one_of( TEXT, st.just( "mpu=rtl" ) ),
    "--level": st.sampled_from( [ "func", "nope", "" ] ),
    "--save-image": st.sampled_from( [ "out.dfx", "", ".", "model/config.json",
                                       "missing/out.dfx" ] ),
  }
  for name in draw( st.lists( st.sampled_from( sorted( options ) ), max_size=4, unique=True ) ):
    argv += [ name, str( draw( options[ name ] ) ) ]
  for _ in range( draw( st.sampled_from( [ 0, 0, 1, 2 ] ) ) ):
    argv += draw( set_option() )
  return argv


@st.composite
def perf_argv( draw, cache ):
  argv = [ "perf", "--json", "--model", draw( st.sampled_from( [ "tiny", "gpt2", "" ] ) ),
           "--in", str( draw( NUMBERS ) ), "--out", str( draw( NUMBERS ) ) ]
  options = { "--cores": NUMBERS, "--samples": NUMBERS, "--jobs": JOBS,
              "--cache": st.sampled_from( [ cache, "", "model/config.json", "/dev/null" ] ) }
  for name in draw( st.lists( st.sampled_from( sorted( options ) ), max_size=3, unique=True ) ):
    argv += [ name, str( draw( options[ name ] ) ) ]
  for flag in draw( st.lists( st.sampled_from( [ "--exact", "--no-cache" ] ), unique=True ) ):
    argv.append( flag )
  for _ in range( draw( st.integers( 0, 2 ) ) ):
    argv += draw( set_option() )
  return argv


def cheap( argv ):
  """Leave out the legal runs that are long by design (a full-size model
  timed or generated on this machine), which the fuzz has no need of."""
  model = argv[ argv.index( "--model" ) + 1 ]
  return model not in ( "gpt2", ) or argv[0] == "generate"


@pytest.mark.spread
@pytest.mark.parametrize( "command, n", [ ( "generate", 60 ), ( "perf", 30 ) ] )
def test_argument_values( base, record_property, command, n ):
  """Drawn argument values: each run ends in a result or one clear line,
  and a refused run writes nothing (not even a partial image or cache)."""
  counts = collections.Counter()

  @fuzz_settings( n )
  @given( data=st.data() )
  def case( data ):
    with workspace( base ) as top:
      model, cache = os.path.join( top, "model" ), os.path.join( top, "cache" )
      argv = data.draw( generate_argv( model, top ) if command == "generate"
                        else perf_argv( cache ) )
      if command == "perf" and not cheap( argv ):
        argv[ argv.index( "--model" ) + 1 ] = "tiny"
      before = tree( top )
      got = outcome( *run_cli( argv, top ), before, tree( top ), " ".join( argv ) )
      counts[ "refused" if got == "refused" else "ran" ] += 1

  case()
  record_property( "fuzz_cases", { f"{command} arguments": dict( counts ) } )
