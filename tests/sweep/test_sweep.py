"""`dfx sweep` on the tiny model: the grid, the files, the latency (perf's,
unchanged), the cache, points that do not compile, the resource estimate
against docs/resources.md, the Pareto front, and Dask against local
processes."""

import contextlib
import json
import pathlib
import re
import socket
import threading
import time

import pytest

from pymtl_dfx import perf
from pymtl_dfx.cli import main
from pymtl_dfx.config import DFXConfig, gpt2_preset
from pymtl_dfx.perf import sampled
from pymtl_dfx.resources import estimate as resources
from pymtl_dfx.sweep import run
from pymtl_dfx.sweep.grid import GridError, parse_grid, points
from pymtl_dfx.sweep.pareto import pareto

ROOT = pathlib.Path( __file__ ).resolve().parents[2]
GRID = [ "--grid", "cores=1,2", "--grid", "psum_entries=64,1024" ]
CONTEXT, IO = 3, ( 2, 2 )   # the context step is the generation's last: shared
ARGS = [ "sweep", "--model", "tiny", *GRID, "--context", str( CONTEXT ), "--io", "2:2",
         "--samples", "2" ]


@pytest.fixture( scope="module" )
def swept( tmp_path_factory ):
  out = tmp_path_factory.mktemp( "sweep" )
  cache = tmp_path_factory.mktemp( "cache" )
  assert main( ARGS + [ "--jobs", "2", "--cache", str( cache ), "--out", str( out ) ] ) == 0
  return out, cache, json.loads( ( out / "sweep.json" ).read_text() )


# -- the grid -------------------------------------------------------------------

def test_grid_is_the_product_in_order():
  grid = parse_grid( [ "d=32,64", " l = 8,16 ", "cores=2" ] )
  assert grid == { "d": [ "32", "64" ], "l": [ "8", "16" ], "cores": [ "2" ] }
  pts = points( grid, [ "clock_mhz=250" ] )
  assert [ ( p.dfx.d, p.dfx.l, p.dfx.cores, p.dfx.clock_mhz ) for p in pts ] == [
    ( 32, 8, 2, 250 ), ( 32, 16, 2, 250 ), ( 64, 8, 2, 250 ), ( 64, 16, 2, 250 ) ]
  assert pts[1].label == "d=32, l=16, cores=2" and pts[1].grid == dict( d=32, l=16, cores=2 )
  assert points( parse_grid( [ "hbm_latency_ns=150.5" ] ) )[0].dfx.hbm_latency_ns == 150.5


@pytest.mark.parametrize( "grid, sets, words", [
  ( [ "nope=1,2" ], [], "'nope' is not a DFXConfig field" ),
  ( [ "d=32,3" ], [], "d=3" ),
  ( [ "d=32,x" ], [], "must be an integer" ),
  ( [ "d=32,32" ], [], "repeated" ),
  ( [ "d=32,032" ], [], "the same config" ),
  ( [ "d=32," ], [], "empty value" ),
  ( [ "d" ], [], "expected key=v1,v2" ),
  ( [ "d=32", "d=64" ], [], "given twice" ),
  ( [ "d=32" ], [ "d=64" ], "both in --grid and in --set" ),
  ( [ "l=8" ], [ "nope=1" ], "'nope' is not a DFXConfig field" ),
] )
def test_bad_grids_name_the_culprit( grid, sets, words ):
  with pytest.raises( GridError, match=re.escape( words ) ):
    points( parse_grid( grid ), sets )


@pytest.mark.parametrize( "extra, words", [
  ( [ "--grid", "d=3" ], "--grid d=3" ),
  ( [ "--grid", "d=32", "--io", "4" ], "--io '4'" ),
  ( [ "--grid", "d=32", "--context", "500" ], "n_positions=128" ),
  ( [ "--grid", "d=32", "--io", "100:100" ], "n_positions=128" ),
] )
def test_cli_usage_errors_are_one_line( extra, words, capsys, tmp_path ):
  assert main( [ "sweep", "--model", "tiny", "--out", str( tmp_path / "o" ), *extra ] ) == 2
  err = capsys.readouterr().err.strip()
  assert err.startswith( "dfx sweep: error:" ) and words in err and "\n" not in err
  assert not ( tmp_path / "o" ).exists()


def test_cli_usage_error_as_json( capsys, tmp_path ):
  assert main( [ "sweep", "--model", "tiny", "--grid", "nope=1", "--out", str( tmp_path / "o" ),
                 "--json" ] ) == 2
  e = json.loads( capsys.readouterr().out )["error"]
  assert e["kind"] == "usage" and "'nope' is not a DFXConfig field" in e["message"]


# -- the sweep --------------------------------------------------------------------

def test_every_file_is_written_whole( swept ):
  out, _, rec = swept
  assert sorted( p.name for p in out.iterdir() ) == [ "pareto.png", "pareto.svg", "sweep.json",
                                                      "sweep.md" ]
  assert all( p.stat().st_size > 0 for p in out.iterdir() )
  assert [ p["label"] for p in rec["points"] ] == [
    "cores=1, psum_entries=64", "cores=1, psum_entries=1024", "cores=2, psum_entries=64",
    "cores=2, psum_entries=1024" ]
  page = ( out / "sweep.md" ).read_text()
  assert "](pareto.png)" in page
  for p in rec["points"]:
    r = p["resources"]
    assert ( f"| {p['label']} | {p['config']['cores']} | 200 | {p['step']['ms']:.4f} | "
             f"{p['generation']['ms']:.3f} | {p['generation']['tokens_per_s']:.1f} | "
             f"{r['totals']['LUT']:,} ({r['percent']['LUT']:.1f} %) |" ) in page


def test_latency_is_perfs_own( swept ):
  # each point's step and generation, timed again directly without a cache
  _, _, rec = swept
  gpt = gpt2_preset( "tiny" )
  for p in rec["points"]:
    dfx = DFXConfig.from_dict( p["config"] )
    m = perf.planned( gpt, dfx, dfx.cores, max( CONTEXT, sum( IO ) ) )
    step = sampled.time_many( [ ( m, CONTEXT - 1, CONTEXT - 1, True ) ] )[0]
    assert p["step"]["cycles"] == step["cycles"] and p["step"]["classes"] == step["classes"]
    assert p["step"]["ms"] == step["cycles"] / ( dfx.clock_mhz * 1e3 )
    gen = sampled.estimate( m, *IO, samples=2 )
    assert p["generation"]["cycles"] == gen["cycles"]
  # two cards are faster than one here, and the psum depth changes only BRAM
  a, b, c, d = rec["points"]
  assert c["step"]["cycles"] < a["step"]["cycles"]
  assert a["resources"]["totals"]["LUT"] == b["resources"]["totals"]["LUT"]
  assert a["resources"]["totals"]["BRAM36"] < b["resources"]["totals"]["BRAM36"]


def test_a_rerun_times_nothing( swept, monkeypatch, tmp_path ):
  _, cache, rec = swept

  def no_timing( task ):
    raise AssertionError( "a cached step was timed again" )
  monkeypatch.setattr( sampled, "_time_one", no_timing )
  assert main( ARGS + [ "--jobs", "2", "--cache", str( cache ), "--out", str( tmp_path ) ] ) == 0
  again = json.loads( ( tmp_path / "sweep.json" ).read_text() )
  assert again["points"] == rec["points"]


def test_a_point_that_does_not_compile_is_reported( swept, tmp_path, capsys ):
  _, cache, _ = swept
  assert main( [ "sweep", "--model", "tiny", "--grid", "vreg_entries=64,2048", "--context",
                 str( CONTEXT ), "--jobs", "1", "--cache", str( cache ), "--out",
                 str( tmp_path ) ] ) == 0
  lines = capsys.readouterr().out.splitlines()
  assert lines[0].startswith( "vreg_entries=64: does not fit: cannot compile for DFX: register file" )
  assert lines[1].startswith( "vreg_entries=2048: " ) and "ms per step" in lines[1]
  rec = json.loads( ( tmp_path / "sweep.json" ).read_text() )
  bad, good = rec["points"]
  assert bad["step"] is None and "vreg_entries=64 available" in bad["reason"]
  assert not bad["pareto_lut"] and good["pareto_lut"] and good["pareto_dsp"]
  assert "| vreg_entries=64 | 1 | 200 | - |" in ( tmp_path / "sweep.md" ).read_text()


# -- the resource estimate --------------------------------------------------------

def _docs_rows():
  """{block: (DSP, LUT, FF)} of docs/resources.md's module-by-module table,
  the 'a / b / c' rows split."""
  text = ( ROOT / "docs" / "resources.md" ).read_text()
  text = text[ text.index( "## MFU lane, MPU and VPU" ): ]
  end = text.find( "\n## " )                 # that section only
  text = text if end < 0 else text[ :end ]
  out = {}
  for line in text.splitlines():
    cells = [ c.strip().strip( "*" ) for c in line.strip( "|" ).split( "|" ) ]
    if len( cells ) < 4 or not re.match( r"[\d,]", cells[1] ):
      continue
    cols = [ [ int( x.replace( ",", "" ) ) for x in c.split( " / " ) ] for c in cells[1:4] ]
    if cells[0].startswith( "FP16 " ):
      names = cells[0][ 5: ].split( " / " )
      for i, n in enumerate( names ):
        out[ "FP16 " + n.lower().replace( "inv_pow2", "invpow2" ) ] = tuple( c[i] for c in cols )
    else:
      out[ cells[0] ] = tuple( c[0] for c in cols )
  return out


def test_synthesised_rows_are_the_docs_numbers():
  docs = _docs_rows()
  for name, ( dsp, lut, ff, by ) in resources.SYNTHESISED.items():
    assert docs[ name ] == ( dsp, lut, ff ), name
    assert by == "python reports/unit_resources.py"
  est = resources.estimate_resources( DFXConfig() )
  part = lambda unit: tuple( sum( r[k] for r in est["rows"] if r["name"].startswith( unit ) )   # noqa: E731
                             for k in ( "DSP", "LUT", "FF" ) )
  assert part( "MPU:" ) == docs[ "MPU, d=64, l=16" ]
  assert part( "VPU:" ) == docs[ "VPU, d=64" ]
  assert all( r["source"] == "synthesised" for r in est["rows"] if r["name"][ :4 ] in ( "MPU:", "VPU:" ) )
  # docs/resources.md: the partial-sum buffer at 1,024 x 16 lanes x 16 bits is 8 RAMB36
  assert next( r for r in est["rows"] if r["name"] == "partial-sum buffer" )["BRAM36"] == 8


def test_resources_grow_with_d_and_l_and_say_what_is_extrapolated():
  for field, values in ( ( "d", ( 8, 16, 32, 64, 128 ) ), ( "l", ( 4, 8, 16, 32 ) ) ):
    totals = [ resources.estimate_resources( DFXConfig( **{ field: v } ) )["totals"]
               for v in values ]
    for k in ( "LUT", "FF", "DSP", "BRAM36" ):
      assert all( a[k] < b[k] for a, b in zip( totals, totals[1:] ) ), ( field, k )
  est = resources.estimate_resources( DFXConfig( d=32 ) )
  lanes = est["rows"][0]
  assert lanes["source"] == "extrapolated" and lanes["DSP"] == 32 * 16
  assert all( r["source"] == "extrapolated" for r in est["rows"] if r["BRAM36"] )
  # the lane line passes through both synthesised lanes
  assert resources.mfu_lane( 4 ) == ( resources.unit( "MFU lane, d=4" ), True )
  assert resources.mfu_lane( 34 )[0]["LUT"] == pytest.approx( ( 2_407 + 42_772 ) / 2 )
  over = resources.estimate_resources( DFXConfig( d=128, l=32 ) )
  assert not over["within_budget"] and "LUT" in over["over"]
  assert resources.estimate_resources( DFXConfig() )["within_budget"]


def test_bram_shapes():
  assert resources.bram36( 1024, 256 ) == 8      # 1K x 36: 8 wide
  assert resources.bram36( 2048, 1024 ) == 57    # 2K x 18: 57 wide
  assert resources.bram36( 4, 16384 ) == 228     # 512 x 72: bandwidth-bound
  assert resources.bram36( 32768, 1 ) == 1 and resources.bram36( 32769, 1 ) == 2


# -- Pareto -----------------------------------------------------------------------

def test_pareto_front_by_hand():
  pts = [ dict( x=1, y=9 ), dict( x=2, y=5 ), dict( x=3, y=6 ), dict( x=4, y=2 ),
          dict( x=4, y=3 ), dict( x=6, y=2 ), dict( x=2, y=5 ), dict( x=None, y=0 ),
          dict( x=7, y=1 ) ]
  # (3, 6) is beaten by (2, 5); (4, 3) by (4, 2); (6, 2) by (4, 2); the two (2, 5) tie
  assert pareto( pts, "x", "y" ) == [ 0, 1, 6, 3, 8 ]
  assert pareto( [], "x", "y" ) == []


# -- Dask --------------------------------------------------------------------------

def test_dask_gives_the_local_results( swept, tmp_path, monkeypatch ):
  distributed = pytest.importorskip( "dask.distributed", reason="pip install 'pymtl_dfx[sweep]'" )
  _, _, local = swept
  on_dask = []
  real = run._on_dask

  def spy( dask, args ):
    for got in real( dask, args ):
      on_dask.append( got[0] )
      yield got
  monkeypatch.setattr( run, "_on_dask", spy )
  # tcp, as a real cluster's address (and the handshake probe, `run._probe`, reads it)
  with distributed.LocalCluster( n_workers=1, threads_per_worker=1, processes=False,
                                 protocol="tcp", dashboard_address=None ) as cluster:
    # a fresh cache: every point is computed on the cluster
    assert main( ARGS + [ "--dask", cluster.scheduler_address, "--cache", str( tmp_path / "c" ),
                          "--out", str( tmp_path / "o" ) ] ) == 0
  assert sorted( on_dask ) == [ 0, 1, 2, 3 ]
  got = json.loads( ( tmp_path / "o" / "sweep.json" ).read_text() )
  assert got["points"] == local["points"]


def test_without_dask_the_error_says_what_to_install( monkeypatch ):
  import builtins
  real_import = builtins.__import__

  def no_dask( name, *a, **k ):
    if name.startswith( "dask" ):
      raise ImportError( name )
    return real_import( name, *a, **k )
  monkeypatch.setattr( builtins, "__import__", no_dask )
  with pytest.raises( run.DaskMissing, match=r"pip install 'pymtl_dfx\[sweep\]'" ):
    run.dask_client( "tcp://127.0.0.1:1" )


@contextlib.contextmanager
def _listening( banner ):
  """tcp://ADDRESS of a server that is not Dask's: it accepts, sends
  `banner` (maybe nothing), and holds the connection open."""
  srv = socket.socket()
  srv.bind( ( "127.0.0.1", 0 ) )
  srv.listen()
  srv.settimeout( 0.05 )
  conns, stop = [], threading.Event()

  def serve():
    while not stop.is_set():
      try:
        c, _ = srv.accept()
      except socket.timeout:
        continue
      conns.append( c )
      c.sendall( banner )
  t = threading.Thread( target=serve, daemon=True )
  t.start()
  try:
    yield f"tcp://127.0.0.1:{srv.getsockname()[1]}"
  finally:
    stop.set()
    t.join()
    for c in conns:
      c.close()
    srv.close()


@pytest.mark.parametrize( "banner, says", [
  # issue #38: distributed waited for ever on a server that says nothing ...
  ( b"", "not a Dask scheduler (it accepted the connection and sent nothing in 0.5 s; a "
         "scheduler sends its handshake at once)" ),
  # ... and read SSH's banner as a length: "Unable to allocate 2.82 EiB"
  ( b"SSH-2.0-x\r\n", "not a Dask scheduler (it sent 'SSH-2.0-x\\r\\n', not Dask's "
                       "handshake)" ),
] )
def test_a_server_that_is_not_dask_is_one_line( banner, says, monkeypatch, capsys, tmp_path ):
  pytest.importorskip( "dask.distributed", reason="pip install 'pymtl_dfx[sweep]'" )
  monkeypatch.setattr( run, "DASK_CONNECT_S", 0.5 )
  with _listening( banner ) as address:
    t0 = time.monotonic()
    assert main( [ "sweep", "--model", "tiny", "--grid", "cores=1", "--context", "3",
                   "--no-cache", "--dask", address, "--out", str( tmp_path / "o" ) ] ) == 1
    took = time.monotonic() - t0
  out, err = capsys.readouterr()
  assert out == "" and err == f"dfx sweep: --dask {address}: {says}\n", err
  assert took < 3, f"{took:.1f} s"
  assert not ( tmp_path / "o" ).exists()
