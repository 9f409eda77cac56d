"""Full-size generations from sampled steps, and a cache of timed steps.

A full-size generation is hundreds of steps of up to a million cycles;
replaying each exactly takes minutes per step (docs/perf.md, "Speed").
A step's program depends on its position only through the attention
lengths and the K/V and position-embedding addresses, so its cycles are a
smooth function of the position (measured: constant over each block of l
positions on the small model, a few cycles more per block, a larger step
where a new register entry of d scores begins).  `estimate` therefore
times exactly (`steps.time_step`, CL's cycles) the steps at a few
positions of each kind (prompt steps without logits; steps with logits:
the last prompt token and every generated one), and takes every other
step's cycles, per op class and per unit, by linear interpolation between
the timed steps of its kind.  With `samples=None` every step is timed and
the result is `steps.run`'s exactly.  The result says which steps were
timed and which interpolated.

Timed steps are kept in a cache (one JSON file per step, keyed by the
model, the configuration, the position, the token and a hash of the
timing code), so a rerun or another figure that needs the same step only
reads it.  Missing steps run in parallel on local processes.
"""

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import pathlib
import re
import sys
from concurrent.futures import ProcessPoolExecutor

from .. import atomic
from ..files import InputFileError, load_json, short_repr, type_name
from ..outputs import cache_home
from ..printable import shown
from .steps import add_step, empty_result, time_step
from .appliance import ApplianceTiming

# The code a step's cycles depend on: every pymtl_dfx module that the
# module timing the steps imports, directly or through others (found from
# the source, so the key does not depend on what else a process imported);
# a change to any of them invalidates the cache.
TIMING_ROOT = "pymtl_dfx.perf.sampled"


def _package_root():
  return pathlib.Path( __file__ ).resolve().parent.parent


def _module_file( root, name ):
  """The source file of module `name` (dotted, under pymtl_dfx), or None."""
  parts = name.split( "." )
  if parts[0] != root.name:
    return None
  base = root.joinpath( *parts[ 1: ] )
  for f in ( base / "__init__.py", base.with_suffix( ".py" ) ):
    if f.is_file():
      return f
  return None


# import statements, lazy ones in functions included (a match in a
# docstring only adds a module to hash)
_FROM = re.compile( r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)", re.M )
_IMPORT = re.compile( r"^[ \t]*import[ \t]+([^\n#]*)", re.M )


def _imports( name, f ):
  """The pymtl_dfx modules `f` (module `name`) imports, with their packages."""
  package = name if f.name == "__init__.py" else name.rpartition( "." )[0]
  text = f.read_text()
  out = [ a.split()[0] for m in _IMPORT.finditer( text ) for a in m.group( 1 ).split( "," )
          if a.strip() ]
  for m in _FROM.finditer( text ):
    dots, module = len( m.group( 1 ) ) - len( m.group( 1 ).lstrip( "." ) ), m.group( 1 ).lstrip( "." )
    base = module
    if dots:
      base = package.rsplit( ".", dots - 1 )[0] if dots > 1 else package
      base = f"{base}.{module}" if module else base
    out.append( base )
    names = m.group( 2 ).strip( "()" ).replace( "\\", " " ).split( "," )
    out += [ f"{base}.{a.split()[0]}" for a in names if a.strip() ]   # `from pkg import submodule`
  mods = set()
  for m in out:
    parts = m.split( "." )
    mods |= { ".".join( parts[ :i ] ) for i in range( 1, len( parts ) + 1 ) }   # packages run first
  return mods


def timing_modules( root_module=TIMING_ROOT ):
  """Name -> source file of every pymtl_dfx module in the import closure of
  `root_module`."""
  root = _package_root()
  seen, todo = {}, [ root_module ]
  while todo:
    name = todo.pop()
    f = _module_file( root, name )
    if name in seen or f is None:
      continue
    seen[ name ] = f
    todo += _imports( name, f )
  return seen


def code_hash( modules=None ):
  """A hash of the timing code: the sources of `timing_modules()` (or of
  `modules`, name -> file)."""
  if modules is None:
    return _running_code_hash()
  h = hashlib.sha256()
  for name in sorted( modules ):
    h.update( name.encode() + b"\0" )
    h.update( pathlib.Path( modules[ name ] ).read_bytes() )
  return h.hexdigest()[ :16 ]


@functools.lru_cache( maxsize=None )
def _running_code_hash():
  # once per process: the modules it runs do not change while it runs
  return code_hash( timing_modules() )


def default_cache_dir():
  return pathlib.Path( os.environ.get( "DFX_PERF_CACHE" ) or cache_home() / "perf" )


# Corrupt entries warned about in this process: once each, however often asked for.
_WARNED = set()


class StepCache:
  """Timed steps on disk; `None` as the directory keeps nothing."""

  def __init__( s, directory=None ):
    s.dir = pathlib.Path( directory ) if directory is not None else None
    s.code = code_hash()

  def key( s, model, token, pos, want ):
    what = dict( gpt=dataclasses.asdict( model.gpt ), dfx=dataclasses.asdict( model.dfx ),
                 cores=model.cores, max_tokens=model.layout["max_tokens"], token=int( token ),
                 pos=pos, want=bool( want ), code=s.code )
    return hashlib.sha256( json.dumps( what, sort_keys=True, default=str ).encode() ).hexdigest()

  def entry( s, key ):
    return s.dir / f"{key}.json"

  def get( s, key, cores=None ):
    """The record kept under `key`, or None.  A corrupt entry (not JSON, not
    a step record of `cores` cores, not a regular file) is ignored with one
    warning on stderr: the step is timed again and the entry rewritten."""
    if s.dir is None:
      return None
    f = s.entry( key )
    if not os.path.lexists( f ):
      return None
    try:
      rec = load_json( f )
      problem = record_problem( rec, cores )
    except InputFileError as e:
      problem = str( e ).removeprefix( f"{shown( f )}: " )
    if problem is None:
      return rec
    if f in _WARNED:
      return None
    _WARNED.add( f )
    if os.path.isfile( f ) and not os.path.islink( f ):
      # removed, so that a second look (a sweep's compute pass, a worker)
      # finds it missing, not corrupt: one warning, and put() writes it anew
      try:
        os.unlink( f )
      except OSError:
        pass
      again = "timing the step again"
    else:
      again = "timing the step again; it stays, as it is not a file"
    print( f"warning: ignoring the corrupt step-cache entry {shown( f )} ({problem}); "
           f"{again}", file=sys.stderr, flush=True )
    return None

  def put( s, key, record ):
    if s.dir is None:
      return
    s.dir.mkdir( parents=True, exist_ok=True )
    f = s.entry( key )
    if os.path.lexists( f ) and not os.path.isfile( f ):
      return    # a directory or FIFO in its place: get() said so, and it is not ours to remove
    atomic.write_text( f, json.dumps( record ) )


def _record_template( cores ):
  """What a step record of `cores` cores holds: `time_step`'s record (the
  cache keeps it without folded / skipped), zeros where it has counts."""
  res = empty_result( cores )
  return dict( cycles=0, classes=res["class_cycles"], busy=res["unit_busy"],
               stalls=res["unit_stalls"] )


def _shape_problem( value, like, where ):
  if isinstance( like, dict ):
    if not isinstance( value, dict ):
      return f"{where + ': ' if where else ''}expected an object, found {type_name( value )}"
    if set( value ) != set( like ):
      extra, missing = sorted( set( value ) - set( like ) ), sorted( set( like ) - set( value ) )
      return ( f"{where}: " if where else "" ) + "; ".join(
        ( [ f"unexpected key(s) {', '.join( map( short_repr, extra[:4] ) )}" ] if extra else [] )
        + ( [ f"missing key(s) {', '.join( missing[:4] )}" ] if missing else [] ) )
    for k in like:
      problem = _shape_problem( value[k], like[k], f"{where}.{k}" if where else k )
      if problem:
        return problem
    return None
  if isinstance( like, list ):
    if not isinstance( value, list ) or len( value ) != len( like ):
      return ( f"{where}: expected a list of {len( like )}, found "
               + ( f"{len( value )}" if isinstance( value, list ) else type_name( value ) ) )
    for i, ( v, l ) in enumerate( zip( value, like ) ):
      problem = _shape_problem( v, l, f"{where}[{i}]" )
      if problem:
        return problem
    return None
  if not isinstance( value, int ) or isinstance( value, bool ) or value < 0:
    return f"{where}: expected a count (an integer >= 0), found {short_repr( value )}"
  return None


def record_problem( rec, cores=None ):
  """What makes `rec` not a step record (of `cores` cores when given), or
  None.  A record's cycles are the sum of its op classes' cycles."""
  if cores is None:
    cores = len( rec["busy"] ) if isinstance( rec, dict ) and isinstance( rec.get( "busy" ), list ) \
      and rec["busy"] else 1
  problem = _shape_problem( rec, _record_template( cores ), "" )
  if problem is None and rec["cycles"] != sum( rec["classes"].values() ):
    problem = ( f"cycles={rec['cycles']}, but its classes add up to "
                f"{sum( rec['classes'].values() )}" )
  return problem


def sample_positions( lo, hi, n ):
  """n positions spread evenly over lo..hi (both ends included)."""
  if hi < lo:
    return []
  if n is None or hi - lo + 1 <= n:
    return list( range( lo, hi + 1 ) )
  return sorted( { lo + round( i * ( hi - lo ) / ( n - 1 ) ) for i in range( n ) } )


def _time_one( args ):
  model, token, pos, want = args
  app = ApplianceTiming( model.dfx, model.cores )
  rec = time_step( model, app, model.emitter(), token, pos, want )
  rec.pop( "folded" )
  rec.pop( "skipped" )
  return rec


@contextlib.contextmanager
def worker_pool( n ):
  """A ProcessPoolExecutor of n workers that, when the block ends in an
  exception (Ctrl-C, or SIGTERM sent to dfx alone, as `kill` and `timeout`
  do), stops its workers at once instead of waiting out their running steps
  (minutes each at full size)."""
  pool = ProcessPoolExecutor( n )
  try:
    yield pool
  except BaseException:
    workers = list( ( getattr( pool, "_processes", None ) or {} ).values() )
    pool.shutdown( wait=False, cancel_futures=True )
    for w in workers:
      w.terminate()
    for w in workers:
      w.join( 10 )
    raise
  pool.shutdown()


class NotCached( LookupError ):
  pass


def time_many( tasks, cache=None, jobs=1, on_done=None, compute=True, on_start=None ):
  """Times [(model, token, pos, want logits)] (the ones not in the cache,
  on `jobs` local processes) and returns their records in order;
  `compute=False`: only read the cache (`NotCached` if a step is missing);
  on_start(tasks): called with the tasks to time, before any is."""
  cache = cache or StepCache( None )
  keys = [ cache.key( *t ) for t in tasks ]
  recs = [ cache.get( k, t[0].cores ) for k, t in zip( keys, tasks ) ]
  todo = [ i for i, r in enumerate( recs ) if r is None ]
  if todo and not compute:
    raise NotCached( f"{len( todo )} of {len( tasks )} steps are not in the cache" )
  if on_start:
    on_start( [ tasks[i] for i in todo ] )
  done = len( tasks ) - len( todo )

  def keep( i, rec ):
    nonlocal done
    recs[i] = rec
    cache.put( keys[i], rec )
    done += 1
    if on_done:
      on_done( done, len( tasks ) )
  if jobs > 1 and len( todo ) > 1:
    with worker_pool( min( jobs, len( todo ) ) ) as pool:
      for i, rec in zip( todo, pool.map( _time_one, [ tasks[i] for i in todo ] ) ):
        keep( i, rec )
  else:
    for i in todo:
      keep( i, _time_one( tasks[i] ) )
  return recs


def timed_steps( model, wanted, cache=None, jobs=1, on_done=None, compute=True, on_start=None ):
  """{(token, pos, want): the step's record} for every wanted step."""
  recs = time_many( [ ( model, *w ) for w in wanted ], cache, jobs, on_done, compute, on_start )
  return dict( zip( wanted, recs ) )


def _between( a, b, f ):
  """a + f (b - a) on numbers, dicts of numbers and lists of them."""
  if isinstance( a, dict ):
    return { k: _between( a[k], b[k], f ) for k in a }
  if isinstance( a, list ):
    return [ _between( x, y, f ) for x, y in zip( a, b ) ]
  return a + f * ( b - a )


def _rounded( x ):
  if isinstance( x, dict ):
    return { k: _rounded( v ) for k, v in x.items() }
  if isinstance( x, list ):
    return [ _rounded( v ) for v in x ]
  return round( x )


def plan_steps( n_in, n_out, vocab ):
  """Every step of an n_in:n_out generation as `dfx perf` runs it: (token,
  pos, want logits, stage).  The token of position k is k mod the
  vocabulary (the prompt is ids 0, 1, ...; the "generated" ones go on
  counting), so a step is the same wherever it is used."""
  steps = [ ( k % vocab, k, k == n_in - 1, "summarization" ) for k in range( n_in ) ]
  steps += [ ( k % vocab, k, True, "generation" ) for k in range( n_in, n_in + n_out - 1 ) ]
  return steps


def estimate( model, n_in, n_out, samples=4, positions=None, cache=None, jobs=1, on_done=None,
              compute=True, on_start=None ):
  """`steps.run`'s result for an n_in:n_out generation, with the steps at
  `samples` positions of each kind (or at `positions`: {want logits:
  positions}, which must bracket the steps of that kind; several
  generations then share their timed steps) timed and the others
  interpolated (`samples=None`: every step timed, `run` exactly).  Adds
  `timed_steps` (the positions used, some maybe past the generation's
  ends) and `interpolated_steps`."""
  steps = plan_steps( n_in, n_out, model.gpt.vocab_size )
  kinds = { want: [ st[1] for st in steps if st[2] == want ] for want in ( False, True ) }
  timed = {}
  for want, ps in kinds.items():
    if not ps:
      timed[ want ] = []
    elif positions is not None:
      given = sorted( set( positions[ want ] ) )
      if not given or given[0] > ps[0] or given[-1] < ps[-1]:
        raise ValueError( f"positions {given} do not bracket the "
                          f"{'logits' if want else 'prompt'} steps {ps[0]}..{ps[-1]}" )
      # the timed positions that the steps need: their own, or the nearest on each side
      timed[ want ] = sorted( { p for p in given if ps[0] <= p <= ps[-1] }
                              | { max( p for p in given if p <= ps[0] ),
                                  min( p for p in given if p >= ps[-1] ) } )
    else:
      timed[ want ] = sample_positions( ps[0], ps[-1], samples )
  vocab = model.gpt.vocab_size
  wanted = [ ( p % vocab, p, want ) for want, ps in timed.items() for p in ps ]
  recs = timed_steps( model, wanted, cache, jobs, on_done, compute, on_start )
  res = empty_result( model.cores )
  interpolated = []
  for tok, pos, want, stage in steps:
    rec = recs.get( ( tok, pos, want ) )
    if rec is None:
      ps = timed[ want ]
      hi = next( p for p in ps if p > pos )
      lo = max( p for p in ps if p < pos )
      rec = _rounded( _between( recs[ ( lo % vocab, lo, want ) ], recs[ ( hi % vocab, hi, want ) ],
                                ( pos - lo ) / ( hi - lo ) ) )
      rec["cycles"] = sum( rec["classes"].values() )
      interpolated.append( pos )
    add_step( res, rec, stage )
  res["timed_steps"] = sorted( { p for ps in timed.values() for p in ps } )
  res["interpolated_steps"] = interpolated
  return res
