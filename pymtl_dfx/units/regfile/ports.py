"""The register file manager's boundary, the same at FL (stream), CL and RTL.

  DMA     rf_wr (RFWrite: entry, d elements), rf_rd (entry address) ->
          rf_rd_resp (the entry), in order: exactly `dma.msgs`.
  VPU     vpu_inst (a VectorInst word) -> vpu_cmd, vpu_a, vpu_b
          (`vpu.streams`); vpu_out is written at dst, then vpu_done.
  MPU     mpu_inst (a MatrixInst word) -> mpu_cmd, mpu_x (src1's entries
          replayed in tile order from a local x buffer), mpu_bias (CONV1D:
          the bias register's l-lane slices in finish order) (`mpu.streams`);
          mpu_out is written at dst (REDMAX: the maximum at dst, y from
          dst+1), then mpu_done.
  router  router_inst (a RouterInst SYNC word) -> router_cmd and the
          router_rd packets of this core's segment; router_wr (a received
          packet) is written at its flat element address
          (`router.streams`).  The router sends the sync's done itself.
  core_id the core's ring position (input, `router.ports.CoreIdT`): which
          segment is this core's.  The router's position input, for the
          same reasons (`router.ports`): one RTL image for every card of a
          ring, one boundary at every level (FL and CL read it when a sync
          is taken, the RTL once per sync command).  The constructors'
          `core_id` is only checked (None: known at run time); whoever
          builds the manager drives the port.

`check_rfm_params` and the `*_error` functions are the bad-input rules the
FL and CL models raise (the RTL assumes them).
"""


from ...isa.fields import VREG_BITS
from ...lib.arith import ceil_div
from ..control.msgs import DoneMsg, InstMsg
from ..dma.msgs import VregT, mk_rf_write
from ..fpu.msgs import mk_fp16_vec
from ..mpu.msgs import MPUCmd, mk_mpu_types
from ..router.ports import CoreIdT
from ..router.streams import mk_router_types
from ..vpu.msgs import VPUCmd


class RFMError( ValueError ):
  pass


def x_buffer_entries( cfg ):
  """Entries of one of the two x buffers: the matrix-input buffer
  (`cfg.mreg_entries` d-element vectors) split in two for double buffering."""
  return cfg.mreg_entries // 2


def check_rfm_params( cfg, core_id, cores ):
  if cfg.l > cfg.d:
    raise RFMError( f"register file manager: l={cfg.l} > d={cfg.d}: an MPU output slice "
                    f"must lie inside one register entry" )
  if cfg.d < 2:
    raise RFMError( f"register file manager: d={cfg.d} must be >= 2 (a lane address)" )
  if cfg.mreg_entries < 4:
    raise RFMError( f"register file manager: mreg_entries={cfg.mreg_entries} must be >= 4 "
                    f"(two x buffers of at least 2 entries)" )
  W = cfg.router_words
  if W & ( W - 1 ):
    raise RFMError( f"register file manager: router_words={W} must be a power of two" )
  if not 1 <= cores <= 255 or not ( core_id is None or 0 <= core_id < cores ):
    raise RFMError( f"register file manager: core {core_id} of {cores} (1..255 cores)" )
  if cfg.vreg_entries > 1 << VREG_BITS:
    raise RFMError( f"register file manager: vreg_entries={cfg.vreg_entries} needs more "
                    f"than VREG_BITS={VREG_BITS} address bits" )


def matrix_error( inst, cfg ):
  """Why the manager cannot run a matrix instruction, or None."""
  rows, cols = int( inst.rows ), int( inst.cols )
  if rows < 1 or cols < 1:
    return f"rows={rows}, cols={cols}: both must be >= 1"
  n_r = ceil_div( rows, cfg.d )
  if n_r > x_buffer_entries( cfg ):
    return ( f"rows={rows} needs {n_r} x-buffer entries of {cfg.d}; an x buffer holds "
             f"{x_buffer_entries( cfg )} (mreg_entries={cfg.mreg_entries} / 2)" )
  return None


def vector_error( inst, d=None, cfg=None ):
  """Why the manager cannot run a vector instruction, or None.  With `cfg`
  (a DFXConfig): an op the core's VPU has no hardware for (`runs_on`, e.g.
  gelu without `vpu_gelu`) is refused.  With `d`: an element-wise op
  streams, entry k of dst being written while later source entries are
  still to be read, so a dst that starts inside a source range after its
  first entry (src < dst < src + entries) would read results where the
  instruction means sources (the sequential meaning reads every source
  first); such an op is refused (dst == src, in place, and dst before src
  are fine).  Reductions write dst once, at the end."""
  from ...isa import op_of
  n = int( inst.len )
  if n < 1:
    return f"len={n} must be >= 1"
  op = op_of( inst )
  if cfg is not None and not op.runs_on( cfg ):
    return ( f"{op.mnemonic} needs DFXConfig.{op.option}=1 (this core's VPU has no "
             f"{op.name} pipe)" )
  if d is not None:
    if not op.is_reduction:
      entries = ceil_div( n, d )
      dst = int( inst.dst )
      srcs = [ ( "src1", int( inst.src1 ) ) ]
      if op.is_binary and not int( inst.bcast ):
        srcs.append( ( "src2", int( inst.src2 ) ) )
      for name, src in srcs:
        if src < dst < src + entries:
          return ( f"dst v{dst} lies inside {name} v{src}..v{src + entries - 1} after its "
                   f"first entry: the op streams, so it would read entries it has already "
                   f"written (use dst == {name}, a dst before it, or a disjoint dst)" )
  return None


def mk_rfm_types( cfg ):
  Mt = mk_mpu_types( cfg.d, cfg.l, cfg.psum_entries )
  Rt = mk_router_types( cfg )
  return dict( RFWrite=mk_rf_write( cfg.d ), Entry=mk_fp16_vec( cfg.d ),
               X=Mt["X"], Bias=Mt["Bias"], Out=Mt["Out"],
               RCmd=Rt["Cmd"], Rd=Rt["Rd"], Wr=Rt["Wr"] )


DMA_SIDE = ( "rf_wr", "rf_rd", "rf_rd_resp" )


def rfm_ports( cfg ):
  """The manager's boundary, the same at every level: port -> (is_recv,
  message type), grouped by the unit on the other side."""
  T = mk_rfm_types( cfg )
  return {
    # DMA (`dma.msgs`)
    "rf_wr": ( True, T["RFWrite"] ), "rf_rd": ( True, VregT ),
    "rf_rd_resp": ( False, T["Entry"] ),
    # VPU engine (`vpu.streams`)
    "vpu_inst": ( True, InstMsg ), "vpu_cmd": ( False, VPUCmd ),
    "vpu_a": ( False, T["Entry"] ), "vpu_b": ( False, T["Entry"] ),
    "vpu_out": ( True, T["Entry"] ), "vpu_done": ( False, DoneMsg ),
    # MPU engine (`mpu.streams`)
    "mpu_inst": ( True, InstMsg ), "mpu_cmd": ( False, MPUCmd ),
    "mpu_x": ( False, T["X"] ), "mpu_bias": ( False, T["Bias"] ),
    "mpu_out": ( True, T["Out"] ), "mpu_done": ( False, DoneMsg ),
    # router (`router.streams`)
    "router_inst": ( True, InstMsg ), "router_cmd": ( False, T["RCmd"] ),
    "router_rd": ( False, T["Rd"] ), "router_wr": ( True, T["Wr"] ),
  }


def declare_ports( s, cfg ):
  """Declare `rfm_ports` and the `core_id` input on component `s`; returns
  the message types."""
  from pymtl3 import InPort
  from pymtl3.stdlib.stream.ifcs import RecvIfcRTL, SendIfcRTL
  for name, ( is_recv, Type ) in rfm_ports( cfg ).items():
    setattr( s, name, ( RecvIfcRTL if is_recv else SendIfcRTL )( Type ) )
  s.core_id = InPort( CoreIdT )
  return mk_rfm_types( cfg )
