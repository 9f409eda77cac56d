"""Per-op-class counts of a program: instructions, FLOPs, bytes moved.

Programs are straight-line, so counting the emitted instructions is counting
what the hardware executes.  FLOPs count a multiply-add as 2 and every
element of a vector operation as 1; bytes count FP16 elements as 2.
"""


from ..isa import ComputeOp as C, DmaOp as D, Kind, op_of

CLASSES = ( "embedding", "layernorm", "attention", "ffn", "residual", "sync", "lm_head" )
# Cycle attribution adds "host": the host's per-step cost (the token in, the
# result out; `DFXConfig.host_step_us`), charged once per step outside the
# programs (`appliance.attribution.add_host_step`).  Instruction counts have no such row.
CYCLE_CLASSES = CLASSES + ( "host", )
FIELDS = ( "instructions", "flops", "hbm_bytes", "ddr_bytes", "ring_bytes" )


def empty():
  return { cls: dict.fromkeys( FIELDS, 0 ) for cls in CLASSES }


def count( prog, classes, d, cores, into=None ):
  """Add the program's counts into `into` (per class) and return it."""
  out = into if into is not None else empty()
  for inst, cls in zip( prog, classes ):
    row = out[ cls ]
    row["instructions"] += 1
    kind = Kind( int( inst.hdr.kind ) )
    op = op_of( inst )
    if kind == Kind.COMPUTE and not op.on_vpu:
      row["flops"] += 2 * int( inst.rows ) * int( inst.cols )
    elif kind == Kind.COMPUTE and op not in ( C.LOAD, C.STORE ):
      row["flops"] += int( inst.len )
    elif kind == Kind.DMA:
      n = int( inst.vecs ) * d * 2
      row[ "hbm_bytes" if op in ( D.HBM_READ, D.HBM_WRITE ) else "ddr_bytes" ] += n
    elif kind == Kind.ROUTER:
      # every core receives the other cores' segments
      row["ring_bytes"] += ( cores - 1 ) * int( inst.len ) * 2
  return out


def total( per_class ):
  t = dict.fromkeys( FIELDS, 0 )
  for row in per_class.values():
    for k in FIELDS:
      t[k] += row[k]
  return t


def merge( a, b ):
  out = empty()
  for cls in CLASSES:
    for k in FIELDS:
      out[ cls ][ k ] = a[ cls ][ k ] + b[ cls ][ k ]
  return out
