"""The vector processing unit at RTL: `VPUCtrlRTL` + `VPUDpathRTL` behind the
stream boundary of `streams.py` (cmd, a, b in; out)."""

from pymtl3 import *

from ...config import DFXConfig
from .VPUCtrlRTL import VPUCtrlRTL
from .VPUDpathRTL import VPUDpathRTL
from .ports import declare_ports


class VPURTL( Component ):

  def construct( s, d, cfg=None ):
    cfg = cfg or DFXConfig( d=d )
    if d < 2 or cfg.d != d:
      raise ValueError( f"VPURTL: d={d} must be >= 2 and match cfg.d={cfg.d}" )
    declare_ports( s, d )

    s.ctrl  = VPUCtrlRTL( d, cfg )
    s.dpath = VPUDpathRTL( d, cfg )

    s.ctrl.cmd_val   //= s.cmd.val
    s.ctrl.cmd_rdy   //= s.cmd.rdy
    s.ctrl.cmd_op    //= s.cmd.msg.op
    s.ctrl.cmd_len   //= s.cmd.msg.len
    s.ctrl.cmd_bcast //= s.cmd.msg.bcast
    s.ctrl.a_val //= s.a.val
    s.ctrl.a_rdy //= s.a.rdy
    s.ctrl.b_val //= s.b.val
    s.ctrl.b_rdy //= s.b.rdy
    s.dpath.a_msg //= s.a.msg
    s.dpath.b_msg //= s.b.msg
    s.dpath.out //= s.out

    for name in ( "op", "lane_mask", "bcast", "first", "last", "is_max", "ew_val",
                  "ew_rdy", "tree_val", "tree_rdy", "ew_done", "red_done" ):
      connect( getattr( s.ctrl, name ), getattr( s.dpath, name ) )
    if cfg.vpu_gelu:        # the GELU op's own pipe
      for name in ( "gelu_val", "gelu_rdy", "gelu_done" ):
        connect( getattr( s.ctrl, name ), getattr( s.dpath, name ) )

  def line_trace( s ):
    return f"{s.cmd}|{s.a}|{s.b}({s.ctrl.line_trace()} {s.dpath.line_trace()}){s.out}"
