"""DFXConfig.done_latency_cycles = D: a done token taken in cycle t frees its
scoreboard entry at the end of cycle t + D (0: of cycle t), so an
instruction waiting for it issues D cycles later; the done handshakes
themselves are not delayed (done_rdy counts the tokens not yet taken), and
the unit is idle only once every release has happened.  CL (IssueTiming,
which perf runs) and RTL, cycle for cycle; FL is untimed."""

import pytest

from pymtl_dfx.cli import main
from pymtl_dfx.config import ConfigError, DFXConfig
from pymtl_dfx.isa import assemble, encode
from pymtl_dfx.testing.levels import run_matching_cl
from pymtl_dfx.units.control.ControlUnitCL import Candidate, stall_reasons
from pymtl_dfx.units.control.timing import IssueTiming

from control_harness import CASE_LATENCY, CFG, check_sequential, run_control
from test_control import PROGRAM

# (program, issue cycles, done cycles) at D = 0 with every unit's latency
# CASE_LATENCY = 5 (test_control's EXPECTED), and the instructions that wait
# for an entry freed by a done token
LATE = {
  # exp reads v0 that ddr_read writes (RAW): exp waits for the read's entry
  "raw":  ( "ddr_read v0, 0, vecs=1\nexp v4, v0, len=4",
            [ 2, 8 ], [ 7, 13 ], [ 1 ] ),
  # five independent reads, four entries: the fifth waits for the first's
  # entry, while the four tokens leave back to back as at D = 0
  "full": ( "\n".join( f"ddr_read v{i}, {i}, vecs=1" for i in range( 5 ) ),
            [ 2, 3, 4, 5, 8 ], [ 7, 8, 9, 10, 13 ], [ 4 ] ),
}


def _timed( level ):
  if level == "fl":
    pytest.skip( "FL is untimed: done_latency_cycles is a CL/RTL timing" )


def run_late( case, D, level, cmdline_opts ):
  text = LATE[ case ][0]
  words = [ encode( i ) for i in assemble( text ) ]
  cfg = CFG.replace( done_latency_cycles=D )

  def run( lv, opts ):
    w = run_control( words, lv, opts, cfg=cfg, latency=CASE_LATENCY, until_idle=True )
    check_sequential( words, w )
    return w
  return run_matching_cl( level, cmdline_opts, run,
                          key=lambda w: ( w.issue_cycle, w.done_cycle, w.idle_cycle ),
                          why=f"CL and RTL differ at done_latency_cycles={D}" )


@pytest.mark.parametrize( "case", list( LATE ) )
@pytest.mark.parametrize( "D", [ 0, 3 ] )
def test_a_waiting_instruction_issues_d_cycles_later( level, cmdline_opts, D, case ):
  _timed( level )
  _, issue0, done0, waiting = LATE[ case ]
  w = run_late( case, D, level, cmdline_opts )
  # exactly D cycles later: the waiting instruction (and so its done
  # token); every other issue and done token as at D = 0.  Idle: the cycle
  # after the last token's release, D cycles after that token.
  want_issue = [ c + D if pc in waiting else c for pc, c in enumerate( issue0 ) ]
  want_done = [ c + D if pc in waiting else c for pc, c in enumerate( done0 ) ]
  assert ( w.issue_cycle, w.done_cycle ) == ( want_issue, want_done )
  assert w.idle_cycle == max( want_done ) + D + 1


def test_done_latency_with_random_units( level, cmdline_opts ):
  """test_control's program on units with random latencies and not-ready
  cycles (several tokens in one unit's delay line at once): sequential
  values, and CL == RTL cycle for cycle."""
  _timed( level )
  words = [ encode( i ) for i in assemble( PROGRAM ) ]
  cfg = CFG.replace( done_latency_cycles=2 )
  for seed in range( 2 ):
    def run( lv, opts ):
      w = run_control( words, lv, opts, seed=seed, src_delay=1, rf_entries=32, cfg=cfg,
                       until_idle=True )
      check_sequential( words, w )
      return w
    w = run_matching_cl( level, cmdline_opts, run,
                         key=lambda w: ( w.issue_cycle, w.done_cycle, w.idle_cycle ) )
    assert w.idle_cycle >= max( w.done_cycle ) + 3


@pytest.mark.parametrize( "D", [ 0, 1, 4 ] )
def test_issue_timing_releases_d_cycles_after_the_token( D ):
  """IssueTiming on its own: one DMA read issued, its token taken; the
  unit is ready for no further token at once, holds the entry D more
  cycles and only then is idle and lets a WAW-dependent read issue."""
  t = IssueTiming( CFG.replace( done_latency_cycles=D ), True, Candidate, stall_reasons )
  t.buf = [ encode( i ) for i in assemble( "ddr_read v0, 0, vecs=1\nddr_read v0, 1, vecs=1" ) ]
  none = [ False ] * 4
  assert t.offer()[1]
  t.tick( True, none, None )
  assert t.done_rdy( 0 ) and not t.offer()[1]           # WAW with the first read
  t.tick( False, [ True, False, False, False ], None )  # its token taken
  assert not t.done_rdy( 0 )
  for _ in range( D ):
    assert not t.offer()[1] and sum( e is not None for e in t.entries ) == 1
    t.tick( False, none, None )
  assert t.offer()[1]
  t.tick( True, none, None )
  t.tick( False, [ True, False, False, False ], None )
  for _ in range( D ):
    assert not t.is_idle()
    t.tick( False, none, None )
  assert t.is_idle()


# -- bad values ----------------------------------------------------------------

@pytest.mark.parametrize( "value, why", [
  ( -1, "must be an integer >= 0" ),
  ( 1.5, "must be an integer >= 0" ),
  ( True, "must be an integer >= 0" ),
  ( "2", "must be an integer >= 0" ),
] )
def test_bad_done_latency( value, why ):
  with pytest.raises( ConfigError ) as e:
    DFXConfig( done_latency_cycles=value )
  assert f"done_latency_cycles={value!r} ({why})" in str( e.value )


@pytest.mark.parametrize( "text", [ "-1", "1.5" ] )
def test_bad_done_latency_on_the_command_line( text, capsys ):
  with pytest.raises( ConfigError, match=f"done_latency_cycles='?{text}" ):
    DFXConfig().with_overrides( [ f"done_latency_cycles={text}" ] )
  # the command line: a usage error, one line naming the field
  argv = [ "perf", "--model", "tiny", "--in", "1", "--out", "1",
           "--set", f"done_latency_cycles={text}" ]
  assert main( argv ) == 2
  err = capsys.readouterr().err
  assert err.count( "\n" ) == 1 and "done_latency_cycles=" in err, err
