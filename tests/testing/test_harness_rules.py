"""The harness's shared rules: the CL rerun of an RTL test, the recording
sink and the report of what sinks received."""

import pytest
from pymtl3 import *

from pymtl_dfx.testing.harness import run_until_done
from pymtl_dfx.testing.levels import run_matching_cl
from pymtl_dfx.testing.src_sink import (CheckSinkRTL, DelaySourceRTL, RecordSinkRTL,
                                        StreamSinkError, received)


def test_cl_rerun_only_at_rtl_and_asserts_equal():
  calls = []

  def run( lv, opts ):
    calls.append( ( lv, opts ) )
    return dict( cycles=10, level=lv )

  assert run_matching_cl( "cl", { "x": 1 }, run )["level"] == "cl"
  assert calls == [ ( "cl", { "x": 1 } ) ]
  calls.clear()
  r = run_matching_cl( "rtl", { "test_verilog": "zeros" }, run, key=lambda r: r["cycles"] )
  assert r["level"] == "rtl"
  assert calls == [ ( "rtl", { "test_verilog": "zeros" } ), ( "cl", {} ) ]


def test_cl_rerun_fails_on_a_cycle_difference():
  def run( lv, opts ):
    return { "rtl": 10, "cl": 11 }[ lv ]

  with pytest.raises( AssertionError, match="CL and RTL differ" ):
    run_matching_cl( "rtl", {}, run )
  with pytest.raises( AssertionError, match="program 7" ):
    run_matching_cl( "rtl", {}, run, why="program 7" )
  # cl_run replaces the CL side only
  assert run_matching_cl( "rtl", {}, run, cl_run=lambda lv, opts: 10 ) == 10
  with pytest.raises( AssertionError ):
    run_matching_cl( "rtl", {}, lambda lv, opts: 10, cl_run=run )


class _Pair( Component ):

  def construct( s, msgs, sink ):
    s.src = DelaySourceRTL( Bits8, msgs, max_delay=2, seed=3 )
    s.sink = sink
    s.src.send //= s.sink.recv

  def done( s ):
    return s.src.done() and s.sink.done()


def _run( msgs, sink ):
  th = _Pair( msgs, sink )
  th.apply( DefaultPassGroup() )
  run_until_done( th, 200, "pair", lambda: received( { "out": th.sink } ) )
  return th.sink


def test_record_sink_keeps_any_messages_with_their_cycles():
  msgs = [ Bits8( x ) for x in ( 5, 3, 9, 3 ) ]
  sink = _run( msgs, RecordSinkRTL( Bits8, 4, max_delay=2, seed=4 ) )
  assert sink.got == msgs
  assert len( sink.arrivals ) == 4 and sink.arrivals == sorted( set( sink.arrivals ) )
  # the checking sink takes the same messages in the same cycles
  check = _run( msgs, CheckSinkRTL( Bits8, msgs, max_delay=2, seed=4 ) )
  assert check.arrivals == sink.arrivals and check.got == []


def test_check_sink_refuses_a_wrong_message_and_received_reports_counts():
  with pytest.raises( StreamSinkError, match="message #1 is wrong" ):
    _run( [ Bits8( 1 ), Bits8( 2 ) ], CheckSinkRTL( Bits8, [ Bits8( 1 ), Bits8( 7 ) ] ) )
  with pytest.raises( AssertionError, match=r"no progress: pair .*out: 2/3" ):
    _run( [ Bits8( 1 ), Bits8( 2 ) ], RecordSinkRTL( Bits8, 3 ) )
