"""Each point's latency: one generation step at a chosen context (the logits
wanted, as every generated token's step), and optionally a whole I:O
generation (`perf.sampled.estimate`), timed through the step cache.

A point whose every step is in the cache is read here, in this process;
the others run in parallel, on local processes (`jobs`) or on an existing
Dask cluster (`dask`: its address, or a `distributed.Client`).  The
workers write the steps they time into the same cache directory, so with
a cluster on other machines the cache should be on a file system they
share (otherwise a rerun times those points again).

A point whose timing raises (on any of these) is one failed point: its
record is `{"error": "Type: message"}` and the other points go on."""

from concurrent.futures import as_completed

from ..perf.summary import record
from ..perf.sampled import NotCached, StepCache, estimate, time_many, worker_pool


class DaskMissing( ValueError ):
  """--dask without Dask's distributed scheduler installed."""


class DaskUnreachable( ValueError ):
  """No Dask scheduler answers at the --dask address."""


# Seconds to wait for the scheduler: a cluster that is up answers at once.
DASK_CONNECT_S = 5


def latency( model, context, io=None, samples=4, cache_dir=None, jobs=1, cache=None,
             compute=True ):
  """{step: the step at position context - 1 with logits, generation: the
  I:O generation's `perf` record or None} of one planned model
  (`compute=False`: from the cache only, else `NotCached`)."""
  cache = cache or StepCache( cache_dir )
  dfx, pos = model.dfx, context - 1
  ms = dfx.ms
  rec = time_many( [ ( model, pos % model.gpt.vocab_size, pos, True ) ], cache, jobs,
                   compute=compute )[0]
  out = dict( step=dict( context=context, pos=pos, cycles=rec["cycles"], ms=ms( rec["cycles"] ),
                         classes=rec["classes"] ), generation=None )
  if io:
    n_in, n_out = io
    res = estimate( model, n_in, n_out, samples, cache=cache, jobs=jobs, compute=compute )
    gen = record( res, dfx, n_in, n_out )
    gen["breakdown"] = dict( per_op_class=gen["breakdown"]["per_op_class"],
                             per_stage=gen["breakdown"]["per_stage"] )
    out["generation"] = dict( n_in=n_in, n_out=n_out, **gen )
  return out


def _latency_args( args ):
  return latency( *args )


def failed( e ):
  """The record of a point whose timing raised `e`: its one-line error."""
  return dict( error=f"{type( e ).__name__}: {' '.join( str( e ).split() )}".rstrip( ": " ) )


def _guarded( f, *args, **kw ):
  """f(...) or, if it raises, the failed-point record (one point's error
  must not lose the others' results)."""
  try:
    return f( *args, **kw )
  except Exception as e:
    return failed( e )


def run_all( models, context, io=None, samples=4, cache_dir=None, jobs=1, dask=None,
             on_done=None, on_start=None ):
  """[latency(model) for each model] (None models stay None), each point
  computed once: from the cache here, or on the local processes / the Dask
  cluster; a point that raised is `failed(e)`.  on_done(k, n) after each
  point."""
  out = [ None ] * len( models )
  todo = []
  live = [ i for i, m in enumerate( models ) if m is not None ]
  done = 0

  def keep( i, rec ):
    nonlocal done
    out[i] = rec
    done += 1
    if on_done:
      on_done( done, len( live ) )
  cache = StepCache( cache_dir ) if cache_dir is not None else None
  for i in live:
    try:
      if cache is None:
        raise NotCached( "no cache" )
      keep( i, latency( models[i], context, io, samples, cache=cache, compute=False ) )
    except NotCached:
      todo.append( i )
    except Exception as e:
      keep( i, failed( e ) )
  if not todo:
    return out
  if on_start:
    on_start( [ models[i] for i in todo ] )
  args = [ ( models[i], context, io, samples, cache_dir ) for i in todo ]
  if dask is not None:
    for i, rec in _on_dask( dask, args ):
      keep( todo[i], rec )
  elif jobs > 1 and len( todo ) > 1:
    with worker_pool( min( jobs, len( todo ) ) ) as pool:
      futures = { pool.submit( _latency_args, a ): i for i, a in zip( todo, args ) }
      for f in as_completed( futures ):
        keep( futures[f], _guarded( f.result ) )
  else:
    # one point (its steps on `jobs` processes) or one process
    for i, a in zip( todo, args ):
      keep( i, _guarded( latency, *a, jobs=jobs ) )
  return out


def dask_client( address ):
  """A `distributed.Client` for an existing cluster's scheduler address."""
  try:
    from dask.distributed import Client
  except ImportError:
    raise DaskMissing( "--dask needs Dask's distributed scheduler: "
                       "pip install 'pymtl_dfx[sweep]'" ) from None
  try:
    return Client( address, timeout=f"{DASK_CONNECT_S}s" )
  except Exception as e:   # OSError (refused, timed out), ValueError (a bad address), ...
    reason = " ".join( str( e ).split() ) or type( e ).__name__
    raise DaskUnreachable( f"--dask {address}: no Dask scheduler answers there "
                           f"({reason})" ) from None


def _on_dask( dask, args ):
  """(index into args, latency record) as the cluster finishes each point."""
  from dask.distributed import as_completed as dask_completed
  client = dask_client( dask ) if isinstance( dask, str ) else dask
  try:
    futures = client.map( _latency_args, args, pure=False )
    index = { f.key: i for i, f in enumerate( futures ) }
    for f in dask_completed( futures ):
      yield index[ f.key ], _guarded( f.result )
  finally:
    if isinstance( dask, str ):
      client.close()
