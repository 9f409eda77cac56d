"""The MPU engine's timing: the RTL's three stall pipelines (MFU lanes,
accumulator, post-op), its accumulator hazard rule and its tile walk, on
Python values and without data.  The post-op pipe is as deep as the
current command's post-ops (`post_latency`).

The one definition of when the engine takes and gives a message: `MPUCL`
is this class plus the values (it overrides the `_values` hooks, which
return None here), and `pymtl_dfx.perf` runs it as is.

Per cycle: read `cmd_rdy()` / `out_val()` (state only), `decide(...)` with
this cycle's port values (the handshakes, output back to input, as
`MPUSeqRTL`/`MPURTL`), then `tick(cmd, x, w, bias)`.  `cmd` needs op,
post, rows and cols (an `MPUCmd` or anything with those fields).
"""

from ...lib.arith import ceil_div
from ...isa import ComputeOp as C, PostOp
from ...lib.pipeline import StallPipeCL
from ...lib.tile_walker import TileWalkerCL


def post_latency( cfg, op, post ):
  """The post-op depth a matrix command's tiles pass (`op` a matrix
  ComputeOp, `post` a PostOp, as ints): `cfg.mpu_post_latency` for every
  command, or with `mpu_post_bypass` only the stages the command uses
  (the bias adder for CONV1D, the scale multiplier for MASKEDMM, the GELU
  table for post-op GELU), one register when it uses none.  The causal
  mask, the zeros past the last column, REDMAX's running maximum and
  VECTORIZE are selects and regrouping, no stage of their own."""
  if not cfg.mpu_post_bypass:
    return cfg.mpu_post_latency
  depth = ( ( cfg.fp_add_latency if op == C.CONV1D else 0 )
            + ( cfg.fp_mul_latency if op == C.MASKEDMM else 0 )
            + ( cfg.fp_gelu_latency if post == PostOp.GELU else 0 ) )
  return max( 1, depth )


def tile_latency( cfg, op, post ):
  """`cfg.mpu_tile_latency` of one command: its own post-op depth
  (`post_latency`) in place of the deepest."""
  return cfg.mpu_tile_latency - cfg.mpu_post_latency + post_latency( cfg, op, post )


class Tile:
  """What travels down the pipelines with a tile's values (`s`)."""
  __slots__ = ( "entry", "first", "last", "tile", "s" )

  def __init__( s, entry, first, last, tile, values ):
    s.entry, s.first, s.last, s.tile, s.s = entry, first, last, tile, values


class MPUTiming:

  def __init__( s, cfg ):
    s.cfg = cfg
    s.reset()

  def reset( s ):
    cfg = s.cfg
    s.cur = None
    s.active = s.issuing = s.max_pending = False
    s.walk, s.n_c = None, 0
    s.taken = s.outs = 0
    s.mfu = StallPipeCL( cfg.mfu_lane_latency )
    s.acc = StallPipeCL( cfg.fp_add_latency )
    s.post = StallPipeCL( cfg.mpu_post_latency )
    s.go = {}
    s.reset_values()

  # -- the values' hooks (MPUCL); no data here -----------------------------------

  def reset_values( s ):
    pass

  def keep_cmd( s, cmd ):
    return cmd

  def issue_values( s, r, x_msg, w_msg ):
    return None

  def acc_values( s, m ):
    return None

  def post_values( s, head, bias_msg ):
    return None

  def psum_write( s, head ):
    pass

  def out_values( s, t ):
    pass

  # -- timing ----------------------------------------------------------------------

  def cmd_rdy( s ):
    return not s.active

  def out_val( s ):
    return s.max_pending or s.post.head() is not None

  def decide( s, cmd_val, x_val, w_val, bias_val, out_rdy ):
    """This cycle's handshakes, in the RTL's order (output back to input)."""
    g = {}
    g["cmd"] = cmd_val and not s.active
    g["out_val"] = s.max_pending or s.post.head() is not None
    g["post_rdy"] = out_rdy and not s.max_pending
    g["out_fire"] = s.post.head() is not None and g["post_rdy"]
    g["max_fire"] = s.max_pending and out_rdy
    post_adv = s.post.can_accept( g["post_rdy"] )
    conv = s.cur is not None and int( s.cur.op ) == C.CONV1D
    head = s.acc.head()
    last = head is not None and head.last
    g["post_in"] = last and ( not conv or bias_val )
    g["bias_rdy"] = last and conv and post_adv
    g["acc_rdy"] = not last or ( post_adv and ( not conv or bias_val ) )
    g["psum_write"] = head is not None and not head.last
    acc_adv = s.acc.can_accept( g["acc_rdy"] )
    mhead = s.mfu.head()
    hazard = mhead is not None and any( t is not None and t.entry == mhead.entry
                                        for t in s.acc.stages )
    g["acc_in"] = mhead is not None and not hazard
    g["mfu_rdy"] = acc_adv and not hazard
    mfu_adv = s.mfu.can_accept( g["mfu_rdy"] )
    issue = s.active and s.issuing
    g["x_rdy"] = issue and w_val and mfu_adv
    g["w_rdy"] = issue and x_val and mfu_adv
    g["issue"] = issue and x_val and w_val and mfu_adv
    s.go = g
    return g

  def tick( s, cmd=None, x_msg=None, w_msg=None, bias_msg=None ):
    """The registers, from the last `decide`."""
    g = s.go
    cfg = s.cfg
    if g["cmd"]:
      s.cur = s.keep_cmd( cmd )
      s.active = s.issuing = True
      s.max_pending = False
      s.n_c = ceil_div( int( cmd.cols ), cfg.l )
      s.walk = TileWalkerCL( ceil_div( int( cmd.rows ), cfg.d ), s.n_c, 0, cfg.psum_entries,
                             cfg.mpu_raster_walk )
      s.taken = s.outs = 0
      # the post-op depth is the command's (`mpu_post_bypass`); the pipe is
      # empty here: the previous command's last tile has left
      s.post = StallPipeCL( post_latency( cfg, int( cmd.op ), int( cmd.post ) ) )
      s.reset_values()
      return
    # what enters each pipeline this cycle
    post_new = acc_new = mfu_new = None
    if g["post_in"]:
      head = s.acc.head()
      post_new = Tile( 0, 0, 0, head.tile, s.post_values( head, bias_msg ) )
    if g["acc_in"]:
      m = s.mfu.head()
      acc_new = Tile( m.entry, m.first, m.last, m.tile, s.acc_values( m ) )
    if g["issue"]:
      w = s.walk
      r, c = w.rc()
      mfu_new = Tile( w.pos(), w.r_first(), w.r_last(), c, s.issue_values( r, x_msg, w_msg ) )
      s.taken += 1
      s.issuing = not w.last()
      w.step()
    if g["psum_write"]:
      s.psum_write( s.acc.head() )
    if g["out_fire"]:
      s.out_values( s.post.head() )
      s.outs += 1
      if s.outs == s.n_c:
        if int( s.cur.post ) == PostOp.REDMAX:
          s.max_pending = True
        else:
          s.active = False
    if g["max_fire"]:
      s.max_pending = False
      s.active = False
    s.post.tick( g["post_rdy"], post_new )
    s.acc.tick( g["acc_rdy"], acc_new )
    s.mfu.tick( g["mfu_rdy"], mfu_new )
