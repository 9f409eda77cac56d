"""Control unit at RTL: instruction buffer, footprint decode, scoreboard
(datapath) and the scheduler's control; the rules are ControlUnitCL's.

Ports: issue[4] / done[4] as at FL, and `inst`, the stream the program is
loaded through (a host or fetch engine writes it; the buffer holds
cfg.inst_buffer_entries words and the scheduler issues from its head).
"""

from pymtl3 import *
from pymtl3.stdlib.stream.queues import NormalQueueRTL

from ...config import DFXConfig
from .msgs import UNITS
from .FootprintRTL import FootprintRTL, end_bits
from .msgs import InstMsg
from .ports import declare_ports

NU = len( UNITS )


class ScoreboardRTL( Component ):
  """Datapath: the in-flight table, its comparators and sequence counters.

  alloc writes the candidate into entry alloc_idx (the lowest free one);
  free[u] clears the entry of unit u's oldest in-flight instruction.
  stall: the candidate has a hazard (unless check=False), meets a wait
  flag, or the table is full.  inflight[u]: unit u holds an entry.  With
  cfg.done_latency_cycles > 0 an entry is freed later than its done token
  is taken: take[u] counts the tokens, untaken[u] is unit u's issued
  instructions whose token is not taken yet (with 0 the two counts are one,
  inflight).
  """

  def construct( s, cfg, check=True ):
    N = cfg.scoreboard_entries
    EB = end_bits( cfg )
    E = mk_bits( EB )
    IB = max( 1, clog2( N ) )
    SB = clog2( N ) + 1          # per-unit sequence numbers, > N apart
    I, Sq = mk_bits( IB ), mk_bits( SB )
    FULL = ( 1 << N ) - 1

    # candidate
    s.c_unit = InPort( 2 )
    s.c_waits = InPort( NU )
    s.c_r0b = InPort( E )
    s.c_r0e = InPort( E )
    s.c_r1b = InPort( E )
    s.c_r1e = InPort( E )
    s.c_wb = InPort( E )
    s.c_we = InPort( E )
    s.chain_valid = InPort()
    s.chain_idx = InPort( I )
    # commands
    s.alloc = InPort()
    s.free = InPort( NU )
    # status
    s.alloc_idx = OutPort( I )
    s.stall = OutPort()
    s.inflight = OutPort( NU )
    if cfg.done_latency_cycles:
      s.take = InPort( NU )
      s.untaken = OutPort( NU )
      # tokens taken per unit: between done_seq (entries freed) and
      # issue_seq, so as wide as they are
      s.taken_seq = [ Wire( Sq ) for _ in range( NU ) ]

      @update
      def up_sb_untaken():
        for u in range( NU ):
          s.untaken[u] @= s.issue_seq[u] != s.taken_seq[u]

      @update_ff
      def up_sb_taken():
        if s.reset:
          for u in range( NU ):
            s.taken_seq[u] <<= 0
        else:
          for u in range( NU ):
            if s.take[u]:
              s.taken_seq[u] <<= s.taken_seq[u] + 1

    # the table
    s.valid = Wire( N )
    s.e_unit = [ Wire( 2 ) for _ in range( N ) ]
    s.e_seq = [ Wire( Sq ) for _ in range( N ) ]
    s.e_r0b = [ Wire( E ) for _ in range( N ) ]
    s.e_r0e = [ Wire( E ) for _ in range( N ) ]
    s.e_r1b = [ Wire( E ) for _ in range( N ) ]
    s.e_r1e = [ Wire( E ) for _ in range( N ) ]
    s.e_wb = [ Wire( E ) for _ in range( N ) ]
    s.e_we = [ Wire( E ) for _ in range( N ) ]
    s.issue_seq = [ Wire( Sq ) for _ in range( NU ) ]
    s.done_seq = [ Wire( Sq ) for _ in range( NU ) ]

    s.found = Wire()
    s.conflict = Wire( N )
    s.freeing = Wire( N )
    s.valid_next = Wire( N )
    s.c_r0_ne = Wire()
    s.c_r1_ne = Wire()
    s.c_w_ne = Wire()

    @update
    def up_sb_alloc_idx():
      s.alloc_idx @= 0
      s.found @= 0
      for i in range( N ):
        if ~s.valid[i] & ~s.found:
          s.alloc_idx @= i
          s.found @= 1

    @update
    def up_sb_inflight():
      for u in range( NU ):
        s.inflight[u] @= s.issue_seq[u] != s.done_seq[u]

    @update
    def up_sb_conflict():
      s.c_r0_ne @= s.c_r0b != s.c_r0e
      s.c_r1_ne @= s.c_r1b != s.c_r1e
      s.c_w_ne @= s.c_wb != s.c_we
      for i in range( N ):
        s.conflict[i] @= 0
        if s.valid[i]:
          if s.c_waits[ s.e_unit[i] ]:
            s.conflict[i] @= 1
          if check:
            # RAW on src1, unless i is the chain producer on the same unit
            if s.c_r0_ne & ( s.e_wb[i] != s.e_we[i] ) & ( s.c_r0b < s.e_we[i] ) & \
               ( s.e_wb[i] < s.c_r0e ) & \
               ~( s.chain_valid & ( s.chain_idx == i ) & ( s.e_unit[i] == s.c_unit ) ):
              s.conflict[i] @= 1
            # RAW on the second source
            if s.c_r1_ne & ( s.e_wb[i] != s.e_we[i] ) & ( s.c_r1b < s.e_we[i] ) & \
               ( s.e_wb[i] < s.c_r1e ):
              s.conflict[i] @= 1
            # WAR
            if s.c_w_ne & ( s.e_r0b[i] != s.e_r0e[i] ) & ( s.c_wb < s.e_r0e[i] ) & \
               ( s.e_r0b[i] < s.c_we ):
              s.conflict[i] @= 1
            if s.c_w_ne & ( s.e_r1b[i] != s.e_r1e[i] ) & ( s.c_wb < s.e_r1e[i] ) & \
               ( s.e_r1b[i] < s.c_we ):
              s.conflict[i] @= 1
            # WAW, unless chained
            if s.c_w_ne & ( s.e_wb[i] != s.e_we[i] ) & ( s.c_wb < s.e_we[i] ) & \
               ( s.e_wb[i] < s.c_we ) & \
               ~( s.chain_valid & ( s.chain_idx == i ) & ( s.e_unit[i] == s.c_unit ) ):
              s.conflict[i] @= 1
      s.stall @= ( s.conflict != 0 ) | ( s.valid == FULL )

    @update
    def up_sb_next():
      for i in range( N ):
        s.freeing[i] @= s.valid[i] & s.free[ s.e_unit[i] ] & \
                        ( s.e_seq[i] == s.done_seq[ s.e_unit[i] ] )
        s.valid_next[i] @= ( s.valid[i] & ~s.freeing[i] ) | \
                           ( s.alloc & ( s.alloc_idx == i ) )

    @update_ff
    def up_sb_regs():
      if s.reset:
        s.valid <<= 0
        for u in range( NU ):
          s.issue_seq[u] <<= 0
          s.done_seq[u] <<= 0
      else:
        s.valid <<= s.valid_next
        for u in range( NU ):
          if s.free[u]:
            s.done_seq[u] <<= s.done_seq[u] + 1
          if s.alloc & ( s.c_unit == u ):
            s.issue_seq[u] <<= s.issue_seq[u] + 1
        for i in range( N ):
          if s.alloc & ( s.alloc_idx == i ):
            s.e_unit[i] <<= s.c_unit
            s.e_seq[i] <<= s.issue_seq[ s.c_unit ]
            s.e_r0b[i] <<= s.c_r0b
            s.e_r0e[i] <<= s.c_r0e
            s.e_r1b[i] <<= s.c_r1b
            s.e_r1e[i] <<= s.c_r1e
            s.e_wb[i] <<= s.c_wb
            s.e_we[i] <<= s.c_we

  def line_trace( s ):
    return "".join( UNITS[ int( s.e_unit[i] ) ][0] if s.valid[i] else "."
                    for i in range( len( s.e_unit ) ) )


class SchedulerCtrlRTL( Component ):
  """Control: offers the head instruction, takes done tokens, remembers the
  chain producer.  With cfg.done_latency_cycles = D > 0 a token taken
  (`take`) frees its entry D cycles later, through a D-stage delay line of
  one bit per unit; with D = 0 it frees it in its own cycle."""

  def construct( s, cfg ):
    IB = max( 1, clog2( cfg.scoreboard_entries ) )
    D = cfg.done_latency_cycles
    s.head_val = InPort()
    s.c_unit = InPort( 2 )
    s.c_chain = InPort()
    s.stall = InPort()
    s.alloc_idx = InPort( IB )
    if D == 0:
      s.inflight = InPort( NU )      # at 0 an entry held is a token not taken
    s.issue_rdy = InPort( NU )
    s.done_val = InPort( NU )

    s.issue_val = OutPort( NU )
    s.issued = OutPort()
    s.free = OutPort( NU )
    s.done_rdy = OutPort( NU )
    s.chain_valid = OutPort()
    s.chain_idx = OutPort( IB )

    @update
    def up_sched_issue():
      s.issued @= 0
      for u in range( NU ):
        s.issue_val[u] @= s.head_val & ~s.stall & ( s.c_unit == u )
        s.issued @= s.issued | ( s.issue_val[u] & s.issue_rdy[u] )

    if D == 0:
      @update
      def up_sched_done():
        for u in range( NU ):
          s.done_rdy[u] @= s.inflight[u]
          s.free[u] @= s.done_val[u] & s.inflight[u]
    else:
      s.untaken = InPort( NU )
      s.take = OutPort( NU )
      s.delay = [ Wire( NU ) for _ in range( D ) ]   # delay[k]: taken k + 1 cycles ago

      # its own name: pymtl3 keeps one parsed block per class and name
      @update
      def up_sched_done_delayed():
        for u in range( NU ):
          s.done_rdy[u] @= s.untaken[u]
          s.take[u] @= s.done_val[u] & s.untaken[u]
        s.free @= s.delay[ D - 1 ]

      @update_ff
      def up_sched_delay():
        if s.reset:
          for k in range( D ):
            s.delay[k] <<= 0
        else:
          s.delay[0] <<= s.take
          for k in range( 1, D ):
            s.delay[k] <<= s.delay[ k - 1 ]

    @update_ff
    def up_sched_chain():
      if s.reset:
        s.chain_valid <<= 0
        s.chain_idx <<= 0
      elif s.issued:
        s.chain_valid <<= s.c_chain
        s.chain_idx <<= s.alloc_idx


class ControlUnitRTL( Component ):

  def construct( s, cfg=DFXConfig(), scoreboard=True ):
    declare_ports( s )

    s.ibuf = NormalQueueRTL( InstMsg, cfg.inst_buffer_entries )
    s.fp = FootprintRTL( cfg )
    s.sb = ScoreboardRTL( cfg, scoreboard )
    s.ctrl = SchedulerCtrlRTL( cfg )

    s.inst //= s.ibuf.recv
    s.fp.word //= s.ibuf.send.msg
    s.ctrl.head_val //= s.ibuf.send.val
    s.ibuf.send.rdy //= s.ctrl.issued

    s.sb.c_unit //= s.fp.unit
    s.sb.c_waits //= s.fp.waits
    s.sb.c_r0b //= s.fp.r0_base
    s.sb.c_r0e //= s.fp.r0_end
    s.sb.c_r1b //= s.fp.r1_base
    s.sb.c_r1e //= s.fp.r1_end
    s.sb.c_wb //= s.fp.w_base
    s.sb.c_we //= s.fp.w_end
    s.sb.chain_valid //= s.ctrl.chain_valid
    s.sb.chain_idx //= s.ctrl.chain_idx
    s.sb.alloc //= s.ctrl.issued
    s.sb.free //= s.ctrl.free

    s.ctrl.c_unit //= s.fp.unit
    s.ctrl.c_chain //= s.fp.chain
    s.ctrl.stall //= s.sb.stall
    s.ctrl.alloc_idx //= s.sb.alloc_idx
    if cfg.done_latency_cycles == 0:
      s.ctrl.inflight //= s.sb.inflight
    else:
      s.sb.take //= s.ctrl.take
      s.ctrl.untaken //= s.sb.untaken

    for u in range( NU ):
      s.issue[u].msg //= s.ibuf.send.msg
      s.issue[u].val //= s.ctrl.issue_val[u]
      s.ctrl.issue_rdy[u] //= s.issue[u].rdy
      s.ctrl.done_val[u] //= s.done[u].val
      s.done[u].rdy //= s.ctrl.done_rdy[u]

    # idle: no entry held, so no token nor delayed release pending either
    @update
    def up_ctrl_idle():
      s.idle @= ~s.ibuf.send.val & ( s.sb.inflight == 0 )

  def line_trace( s ):
    return f"[{s.sb.line_trace()}]"
