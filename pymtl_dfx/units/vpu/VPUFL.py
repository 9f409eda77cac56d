"""The vector processing unit, untimed, behind the stream boundary of
`streams.py`: a command's a (and b) messages are gathered, the instruction
is executed by its FL semantics (`streams.execute`) and its out messages
leave one per cycle; then the next command is taken."""

from collections import deque

from pymtl3 import *

from ...isa import ComputeOp
from .streams import execute, n_b_msgs, n_chunks
from .ports import declare_ports


def _clone( msg ):
  # a port's value object changes with the port: keep a copy
  return msg.clone()


class VPUFL( Component ):

  def construct( s, d, cfg=None ):  # untimed; cfg gives the reduction order
    declare_ports( s, d )
    s.d = d
    s.partials = cfg.reduce_partials if cfg else 1
    s.reset_state()

    @update_once
    def up_vpu_fl_ports():
      s.out.val @= len( s.results ) > 0
      if s.results:
        s.out.msg @= s.results[0]
      s.cmd.rdy @= ( s.current is None ) & ( len( s.results ) == 0 )
      s.a.rdy @= ( s.current is not None ) and len( s.a_got ) < s.n_a
      s.b.rdy @= ( s.current is not None ) and len( s.b_got ) < s.n_b

    @update_ff
    def up_vpu_fl_state():
      if s.reset:
        s.reset_state()
        return
      if s.out.val & s.out.rdy:
        s.results.popleft()
      if s.cmd.val & s.cmd.rdy:
        op = ComputeOp( int( s.cmd.msg.op ) )
        s.current = _clone( s.cmd.msg )
        s.n_a = n_chunks( s.cmd.msg.len, s.d )
        s.n_b = n_b_msgs( op, s.cmd.msg.len, s.cmd.msg.bcast, s.d )
      if s.a.val & s.a.rdy:
        s.a_got.append( _clone( s.a.msg ) )
      if s.b.val & s.b.rdy:
        s.b_got.append( _clone( s.b.msg ) )
      if s.current is not None and len( s.a_got ) == s.n_a and len( s.b_got ) == s.n_b:
        c = s.current
        s.results.extend( execute( c.op, c.len, c.bcast, s.a_got, s.b_got, s.d, s.partials ) )
        s.current, s.a_got, s.b_got = None, [], []

  def reset_state( s ):
    s.current, s.n_a, s.n_b = None, 0, 0
    s.a_got, s.b_got = [], []
    s.results = deque()

  def line_trace( s ):
    return f"{s.cmd}|{s.a}|{s.b}(){s.out}"
