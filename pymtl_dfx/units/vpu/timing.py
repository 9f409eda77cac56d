"""The VPU engine's timing: `VPURTL`'s control (element-wise pipe,
reduction-tree pipe, accumulator pipe, the command register) on Python
values, without data.

The one definition of when the engine takes and gives a message: `VPUCL`
is this class plus the values (the hooks `ew_values`, `tree_value` and
`combine` return None here), and `pymtl_dfx.perf` runs it as is.

Per cycle: `out_val()` (state only), `decide(cmd_val, a_val, b_val,
out_rdy)` for the handshakes, then `advance(now, cmd, a_msg, b_msg)` with
the decision made on the ports' final values.  `cmd` needs op, len, bcast.

With `cfg.reduce_partials` = P > 1 the accumulator keeps P interleaved
partials (`VPUAccumPartialsRTL`, whose docstring states the rule): a chunk
enters when its partial's previous addition has left the adder (forwarded in
the cycle it leaves), so one chunk a cycle once P >= the adder's latency;
after the last chunk the live partials are combined pairwise, in order,
through the same adder, and the final addition's result leaves.

With `cfg.vpu_max_tree` = 1 the max reductions have their own comparator
tree pipe (`max_pipe`) and accumulator (`max_acc_pipe`, one running value,
as the sum's with one partial) whose steps take `fp_max_latency`; the sum
reductions keep the pipes above.  To keep results in order a reduction chunk
also waits until reductions of the other kind have drained (`red_max` is the
kind of the reductions in flight).

With `cfg.vpu_gelu` = 1 the op GELU has its own pipe (`gelu_pipe`, of
`vpu_gelu_latency`), as deep as the GELU table where the element-wise pipe
is its operators' depth.  A GELU chunk enters only once the element-wise
and reduction results in flight have left, and any other chunk only once
the GELU results have, so at most one pipe holds results at a time and
they leave in instruction order.
"""

from types import SimpleNamespace

from ...isa import ComputeOp
from ...lib.pipeline import StallPipeCL
from .msgs import BINARY, MAX_REDUCTIONS, REDUCTIONS

GELU = ComputeOp.GELU


class VPUTiming:

  def __init__( s, d, cfg ):
    s.d, s.cfg = d, cfg
    s.reset()

  def reset( s ):
    cfg = s.cfg
    s.ew_pipe   = StallPipeCL( cfg.vpu_elementwise_latency )
    s.tree_pipe = StallPipeCL( cfg.vpu_tree_latency )   # (value, is_max, first, last)
    s.acc_pipe  = StallPipeCL( cfg.vpu_accum_latency )  # (value, last)
    s.acc_busy, s.acc_val = False, 0
    # the interleaved partials (reduce_partials > 1): their values, which
    # have an addition in the adder's pipe, the next chunk's partial, whether
    # every partial holds a chunk, and the combine passes' position
    P = cfg.reduce_partials
    s.part_val, s.part_pending = [ None ] * P, [ False ] * P
    s.slot, s.wrapped, s.is_max = 0, False, False
    s.combining, s.c_stride, s.c_pair, s.c_live = False, 1, 0, 0
    s.busy, s.op, s.bcast, s.left, s.first = False, None, 0, 0, False
    s.scalar = None
    s.ew_inflight = s.red_inflight = 0
    if cfg.vpu_max_tree:     # the max reductions' own pipes
      s.max_pipe     = StallPipeCL( cfg.vpu_max_tree_latency )   # (value, is_max, first, last)
      s.max_acc_pipe = StallPipeCL( cfg.vpu_max_accum_latency )  # (value, last)
      s.max_acc_busy, s.max_acc_val, s.red_max = False, 0, False
    if cfg.vpu_gelu:         # the GELU op's own pipe
      s.gelu_pipe = StallPipeCL( cfg.vpu_gelu_latency )
      s.gelu_inflight = 0

  # -- the values' hooks (VPUCL); no data here ----------------------------------

  def ew_values( s, n, a_msg, b_msg ):
    """An element-wise chunk's result (the entry that leaves the pipe)."""
    return True

  def tree_value( s, n, a_msg ):
    return None

  def combine( s, is_max, operand, value ):
    return None

  # -- timing ------------------------------------------------------------------------

  def red_head( s ):
    """The accumulator pipe's head whose result may leave (the max
    reductions' own with `vpu_max_tree`, when it holds one)."""
    if s.cfg.vpu_max_tree:
      head = s.max_acc_pipe.head()
      if head is not None and head[-1]:
        return head
    return s.acc_pipe.head()

  def ew_head( s ):
    """The element-wise result that may leave: the element-wise pipe's
    head, or with `vpu_gelu` the GELU pipe's (never both at once)."""
    head = s.ew_pipe.head()
    if head is None and s.cfg.vpu_gelu:
      return s.gelu_pipe.head()
    return head

  def out_val( s ):
    acc_head = s.red_head()
    return s.ew_head() is not None or ( acc_head is not None and acc_head[-1] )

  def _partials_decide( s, now, out_rdy ):
    """The interleaved accumulator's handshakes (P > 1): which operation
    enters the adder this cycle (a chunk, a combine pass, or none)."""
    head = s.acc_pipe.head()
    now.acc_send_rdy = head is None or not head[2] or out_rdy
    now.leaving = head is not None and now.acc_send_rdy
    now.write_slot = head[1] if now.leaving and not head[2] else None

    def ready( j ):
      return not s.part_pending[j] or now.write_slot == j

    tree_head = s.tree_pipe.head()
    first = tree_head is not None and tree_head[2]
    now.chunk_slot = 0 if first else s.slot
    now.identity = first or not s.wrapped
    now.accum_rdy = ( not s.combining and now.acc_send_rdy
                      and ( now.identity or ready( now.chunk_slot ) ) )
    now.acc_enter = tree_head is not None and now.accum_rdy
    a = s.c_pair * 2 * s.c_stride
    now.pass_a, now.pass_b = a, a + s.c_stride
    now.pass_enter = ( s.combining and now.acc_send_rdy
                       and ready( now.pass_a ) and ready( now.pass_b ) )

  def _partials_advance( s, now ):
    head = s.acc_pipe.head()

    def value( j ):
      return head[0] if now.write_slot == j else s.part_val[j]

    entry = None
    if now.acc_enter:
      v, is_max, first, last = s.tree_pipe.head()
      j = now.chunk_slot
      operand = None if now.identity else value( j )
      entry = ( s.combine( is_max, operand, v ), j, first and last )
      if last and not first:       # the combine passes over the live partials
        s.combining, s.c_stride, s.c_pair = True, 1, 0
        s.c_live = s.cfg.reduce_partials if s.wrapped and not first else j + 1
      s.is_max = is_max
      s.wrapped = ( s.wrapped and not first ) or j == s.cfg.reduce_partials - 1
      s.slot = ( j + 1 ) % s.cfg.reduce_partials
    elif now.pass_enter:
      final = s.c_live == 2
      entry = ( s.combine( s.is_max, value( now.pass_a ), value( now.pass_b ) ), now.pass_a, final )
      if s.c_pair == s.c_live // 2 - 1:          # the level's last pair
        s.c_live, s.c_stride, s.c_pair = ( s.c_live + 1 ) // 2, s.c_stride * 2, 0
        s.combining = not final
      else:
        s.c_pair += 1
    if now.write_slot is not None:
      s.part_val[ now.write_slot ] = head[0]
      s.part_pending[ now.write_slot ] = False
    if entry is not None and not entry[2]:
      s.part_pending[ entry[1] ] = True
    s.acc_pipe.tick( now.acc_send_rdy, entry )

  def decide( s, cmd_val, a_val, b_val, out_rdy ):
    now = SimpleNamespace()
    cmd_val, a_val, b_val, out_rdy = bool( cmd_val ), bool( a_val ), bool( b_val ), bool( out_rdy )
    now.out_rdy = out_rdy
    # results
    ew_head, acc_head, red_head = s.ew_head(), s.acc_pipe.head(), s.red_head()
    acc_out_val = red_head is not None and red_head[-1]
    now.out_val = ew_head is not None or acc_out_val
    now.ew_done = s.ew_pipe.head() is not None and out_rdy
    now.red_done = acc_out_val and out_rdy
    # accumulator
    if s.cfg.reduce_partials > 1:
      s._partials_decide( now, out_rdy )
    else:
      now.acc_send_rdy = acc_head is None or not acc_head[1] or out_rdy
      now.leaving = acc_head is not None and now.acc_send_rdy
      now.accum_rdy = not s.acc_busy or now.leaving
      now.acc_enter = s.tree_pipe.head() is not None and now.accum_rdy
    if s.cfg.vpu_max_tree:   # the comparator accumulator: one running value
      head = s.max_acc_pipe.head()
      now.max_send_rdy = head is None or not head[1] or out_rdy
      now.max_leaving = head is not None and now.max_send_rdy
      now.max_accum_rdy = not s.max_acc_busy or now.max_leaving
      now.max_enter = s.max_pipe.head() is not None and now.max_accum_rdy
    # control
    is_red = s.op in REDUCTIONS
    now.need_b = s.op in BINARY and ( not s.bcast or s.first )
    now.last = s.left <= s.d
    if is_red and s.cfg.vpu_max_tree:
      is_max = s.op in MAX_REDUCTIONS
      pipe_rdy = ( s.max_pipe.can_accept( now.max_accum_rdy ) if is_max
                   else s.tree_pipe.can_accept( now.accum_rdy ) )
      room = pipe_rdy and s.ew_inflight == 0 and ( s.red_inflight == 0 or s.red_max == is_max )
    elif is_red:
      room = s.tree_pipe.can_accept( now.accum_rdy ) and s.ew_inflight == 0
    else:
      room = s.ew_pipe.can_accept( out_rdy ) and s.red_inflight == 0
    now.is_gelu = s.cfg.vpu_gelu and s.op == GELU
    if s.cfg.vpu_gelu:       # one pipe's results in flight at a time
      now.gelu_done = s.gelu_pipe.head() is not None and out_rdy
      if now.is_gelu:
        room = ( s.gelu_pipe.can_accept( out_rdy ) and s.ew_inflight == 0
                 and s.red_inflight == 0 )
      else:
        room = room and s.gelu_inflight == 0
    now.issue = s.busy and a_val and ( not now.need_b or b_val ) and room
    now.is_red = is_red
    now.cmd_rdy = not s.busy or ( now.issue and now.last )
    now.take = cmd_val and now.cmd_rdy
    return now

  def advance( s, now, cmd=None, a_msg=None, b_msg=None ):
    d = s.d
    # the chunk that issues this cycle
    ew_entry = tree_entry = gelu_entry = None
    if now.issue:
      n = min( s.left, d )
      if now.is_red:
        tree_entry = ( s.tree_value( n, a_msg ), s.op in MAX_REDUCTIONS, s.first, now.last )
      elif now.is_gelu:
        gelu_entry = s.ew_values( n, a_msg, b_msg )
      else:
        ew_entry = s.ew_values( n, a_msg, b_msg )
    # the accumulator
    if s.cfg.reduce_partials > 1:
      s._partials_advance( now )
    else:
      acc_entry = None
      acc_head = s.acc_pipe.head()
      if now.acc_enter:
        value, is_max, first, last = s.tree_pipe.head()
        operand = None if first else acc_head[0] if now.leaving else s.acc_val
        acc_entry = ( s.combine( is_max, operand, value ), last )
      if now.leaving:
        s.acc_val = acc_head[0]
      s.acc_busy = now.acc_enter or ( s.acc_busy and not now.leaving )
      s.acc_pipe.tick( now.acc_send_rdy, acc_entry )
    sum_entry = tree_entry
    if s.cfg.vpu_max_tree:   # a max chunk enters its own tree pipe
      max_entry = None
      if tree_entry is not None:
        s.red_max = tree_entry[1]
        if s.red_max:
          sum_entry, max_entry = None, tree_entry
      # the comparator accumulator, as the sum's with one running value
      acc_entry = None
      head = s.max_acc_pipe.head()
      if now.max_enter:
        value, is_max, first, last = s.max_pipe.head()
        operand = None if first else head[0] if now.max_leaving else s.max_acc_val
        acc_entry = ( s.combine( is_max, operand, value ), last )
      if now.max_leaving:
        s.max_acc_val = head[0]
      s.max_acc_busy = now.max_enter or ( s.max_acc_busy and not now.max_leaving )
      s.max_acc_pipe.tick( now.max_send_rdy, acc_entry )
      s.max_pipe.tick( now.max_accum_rdy, max_entry )
    s.tree_pipe.tick( now.accum_rdy, sum_entry )
    s.ew_pipe.tick( now.out_rdy, ew_entry )
    s.ew_inflight += ( ew_entry is not None ) - now.ew_done
    if s.cfg.vpu_gelu:
      s.gelu_pipe.tick( now.out_rdy, gelu_entry )
      s.gelu_inflight += ( gelu_entry is not None ) - now.gelu_done
    s.red_inflight += ( tree_entry is not None and s.first ) - now.red_done
    # the command register
    if now.take:
      s.busy, s.op = True, ComputeOp( int( cmd.op ) )
      s.bcast, s.left, s.first = int( cmd.bcast ), int( cmd.len ), True
    elif now.issue:
      s.left -= d
      s.first = False
      if now.last:
        s.busy = False
