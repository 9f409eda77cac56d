"""The MPU engine at FL: the tile streams in, the finished columns out.

Untimed: a tile is multiplied and accumulated the cycle it arrives; a
finished column tile waits only for its bias.  Values come from `golden`
(numerics), in the tile order of `lib.tiling`.
"""

from collections import deque

import numpy as np
from pymtl3 import *

from ...isa import ComputeOp as C, PostOp
from ...lib.arith import ceil_div
from .golden import accumulate, finish, tile_max, tile_sums, to_array, to_fields
from .ports import declare_ports
from .streams import order_of

F16 = np.float16


class MPUFL( Component ):

  def construct( s, cfg ):
    T = declare_ports( s, cfg )
    d, l = cfg.d, cfg.l

    s.active = None          # the command being executed
    s.order = ()
    s.taken = 0              # tiles received
    s.psum = {}
    s.finished = deque()     # column tiles waiting for their bias
    s.biases = deque()
    s.bias_taken = 0
    s.outq = deque()
    s.top = None
    s.done_tiles = 0

    def n_tiles():
      return ceil_div( int( s.active.cols ), l )

    def start( msg ):
      s.active = msg.clone()     # the port's value object is reused next cycle
      s.order = order_of( s.active, cfg )
      s.taken = s.bias_taken = s.done_tiles = 0
      s.psum = {}
      s.top = None

    def want_bias():
      return s.active is not None and int( s.active.op ) == C.CONV1D and \
             s.bias_taken < n_tiles()

    # x and w are taken together (x.rdy needs w.val and w.rdy x.val); every
    # other output comes from state only.  Two blocks, so a neighbour whose
    # w.val depends on our w.rdy (an RTL weight FIFO's one block) forms no
    # loop with the state outputs; the pairing block is @update, a pure
    # function pymtl3 may iterate inside such a block-level cycle.
    @update
    def up_mpu_fl_pair():
      tiles_left = s.active is not None and s.taken < len( s.order )
      s.x.rdy    @= tiles_left & s.w.val
      s.w.rdy    @= tiles_left & s.x.val

    @update_once
    def up_mpu_fl_ports():
      s.cmd.rdy  @= s.active is None
      s.bias.rdy @= want_bias()
      s.out.val  @= len( s.outq ) > 0
      if s.outq:
        s.out.msg @= s.outq[0]

    @update_ff
    def up_mpu_fl_state():
      if s.reset:
        s.active = None
        s.outq.clear()
        return
      if s.out.val & s.out.rdy:
        s.outq.popleft()
      if s.cmd.val & s.cmd.rdy:
        start( s.cmd.msg )
      if s.active is None:
        return
      if s.x.val & s.x.rdy:
        r, c = s.order[ s.taken ]
        sums = tile_sums( to_array( s.x.msg.v ), to_array( s.w.msg.v ),
                          int( s.active.rows ) - r * d )
        acc = accumulate( s.psum.pop( c, None ), sums )
        if r == ceil_div( int( s.active.rows ), d ) - 1:
          s.finished.append( ( c, acc ) )
        else:
          s.psum[ c ] = acc
        s.taken += 1
      if s.bias.val & s.bias.rdy:
        s.biases.append( to_array( s.bias.msg.v ) )
        s.bias_taken += 1
      conv = int( s.active.op ) == C.CONV1D
      while s.finished and ( s.biases or not conv ):
        c, acc = s.finished.popleft()
        y = finish( s.active, c, acc, s.biases.popleft() if conv else None, l )
        s.outq.append( T["Out"]( c, 0, to_fields( y ) ) )
        if int( s.active.post ) == PostOp.REDMAX:
          s.top = tile_max( s.top, y, c, int( s.active.cols ) )
        s.done_tiles += 1
      if s.done_tiles == n_tiles():
        if int( s.active.post ) == PostOp.REDMAX:
          s.outq.append( T["Out"]( 0, 1, to_fields( np.r_[ s.top, np.zeros( l - 1, F16 ) ] ) ) )
        s.active = None

  def line_trace( s ):
    state = "idle" if s.active is None else f"{s.taken}/{len( s.order )}"
    return f"{s.x}{s.w}({state}){s.out}"
