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

import re
from concurrent.futures import as_completed

from ..perf.summary import record
from ..perf.sampled import NotCached, StepCache, estimate, time_many, worker_pool
from ..printable import shown


class DaskMissing( ValueError ):
  """--dask without Dask's distributed scheduler installed."""


class DaskUnreachable( ValueError ):
  """No Dask scheduler answers at the --dask address."""


class DaskAddressError( ValueError ):
  """A --dask address that is no scheduler address at all."""


# A scheduler's address as `dask scheduler` prints it: [PROTOCOL://]HOST:PORT
# (tcp://10.0.0.5:8786), an IPv6 host in brackets; Dask defaults to tcp.
_DASK_ADDRESS = re.compile( r"(?:(?:tcp|tls|ws|wss|ucx)://)?"
                            r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})" )


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
             on_done=None, on_start=None, plan=None ):
  """[latency(model) for each model] (None models stay None), each point
  computed once: from the cache here, or on the local processes / the Dask
  cluster; a point that raised is `failed(e)`.  on_done(k, n) after each
  point.  With `plan`, the models are `perf.unplanned` ones, looked up in
  the cache and estimated (on_start) as they are, and only then planned
  (`plan(model)`, ~2 ms each); a point the compiler refuses is
  `{"reason": its one-line CompileError}`."""
  models = list( models )       # planned in place of the caller's unplanned ones
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
  if plan is not None:
    todo = [ i for i in todo if _plan( i, models, plan, keep ) ]
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


def _plan( i, models, plan, keep ):
  """Plan models[i] (True), or keep its point as not fitting."""
  from ..compiler.limits import CompileError
  try:
    models[i] = plan( models[i] )
    return True
  except CompileError as e:
    keep( i, dict( reason=" ".join( str( e ).split() ) ) )
    return False


def dask_client( address ):
  """A `distributed.Client` for an existing cluster's scheduler address."""
  # a malformed address is said to be one, not tried: Dask would answer
  # "no scheduler there" for a typo
  m = _DASK_ADDRESS.fullmatch( address )
  if not m or not 1 <= int( m.group( 1 ) ) <= 65535:
    raise DaskAddressError( f"--dask {shown( address )}: not a scheduler address; expected "
                            f"tcp://HOST:PORT, as `dask scheduler` prints it (e.g. "
                            f"tcp://10.0.0.5:8786)" )
  try:
    from dask.distributed import Client
  except ImportError:
    raise DaskMissing( "--dask needs Dask's distributed scheduler: "
                       "pip install 'pymtl_dfx[sweep]'" ) from None
  _probe( address )
  try:
    return Client( address, timeout=f"{DASK_CONNECT_S}s" )
  except Exception as e:   # OSError (refused, timed out), ValueError (a bad address), ...
    reason = " ".join( str( e ).split() ) or type( e ).__name__
    raise DaskUnreachable( f"--dask {address}: no Dask scheduler answers there "
                           f"({reason})" ) from None


# The longest first message of a scheduler the probe accepts: its handshake
# is a small dict (58 bytes from distributed 2026.8), and a banner read as a
# length is ~10**18 (distributed then tried to allocate "2.82 EiB" for SSH's).
DASK_HANDSHAKE_MAX_BYTES = 2**16


def _probe( address ):
  """Raise DaskUnreachable unless a tcp:// address (Dask's default) answers
  as a scheduler does: it speaks first, its handshake (`distributed.comm.tcp`:
  8 bytes of length, then that many), within DASK_CONNECT_S.  distributed's
  Client bounds only the connection, not the handshake, so a server that
  accepts and says nothing (HTTP, a database) held it for ever.  Other
  protocols (tls, ws, ucx) are left to the Client."""
  import socket
  import struct
  scheme, sep, where = address.rpartition( "://" )
  host, _, port = where.rpartition( ":" )
  if ( sep and scheme != "tcp" ) or not port.isdigit():
    return

  def fail( why ):
    return DaskUnreachable( f"--dask {shown( address )}: {why}" )
  try:
    conn = socket.create_connection( ( host.strip( "[]" ), int( port ) ), timeout=DASK_CONNECT_S )
  except socket.timeout:
    raise fail( f"no Dask scheduler answers there (no connection in {DASK_CONNECT_S} s)" ) from None
  except OSError as e:
    raise fail( f"no Dask scheduler answers there ({e.strerror or e})" ) from None
  with conn:
    got, want = b"", 8
    try:
      while len( got ) < want:
        chunk = conn.recv( want - len( got ) )
        if not chunk:
          break
        got += chunk
        if want == 8 and len( got ) == 8:
          size = struct.unpack( "Q", got )[0]
          if not 0 < size <= DASK_HANDSHAKE_MAX_BYTES:
            conn.settimeout( 0.2 )
            got += conn.recv( 64 )      # the rest of a banner, to show it
            break
          want = 8 + size
    except socket.timeout:
      pass
    except OSError as e:
      raise fail( f"not a Dask scheduler (the connection failed: {e.strerror or e})" ) from None
  if not got:
    raise fail( f"not a Dask scheduler (it accepted the connection and sent nothing in "
                f"{DASK_CONNECT_S} s; a scheduler sends its handshake at once)" )
  size = struct.unpack( "Q", got[:8] )[0] if len( got ) >= 8 else 0
  if not ( 0 < size <= DASK_HANDSHAKE_MAX_BYTES and len( got ) == 8 + size ):
    raise fail( f"not a Dask scheduler (it sent '{shown( got[:40].decode( 'latin-1' ) )}', "
                f"not Dask's handshake)" )


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
