"""Register-file footprint of an instruction: the entries it reads and writes.

The one definition the scoreboard (CL and RTL, and the tests' execution
units) uses.  It follows the FL semantics (`units/*/semantics.py`,
`units/router/RouterFunc.py`), in entries of d elements:

  MPU  reads  src1: ceil(rows/d);  bias: ceil(cols/d) (conv1d only)
       writes dst: ceil(cols/d), +1 with post=redmax (dst[0] = max, y from
              dst+1)
  VPU  reads  src1: ceil(len/d);  src2 (add/sub/mul): ceil(len/d), or 1
              with bcast
       writes dst: ceil(len/d); 1 for the reductions (accum, redmax,
              redmaxabs)
  DMA  hbm_read / ddr_read write rf: vecs;  hbm_write (also tr) /
       ddr_write read rf: vecs;  hbm_read mpu touches no entry: it feeds the
       MPU weight stream, a FIFO that the matrix ops pop in program order,
       so the FIFO (not the scoreboard) orders it with its consumers
  sync reads and writes rf: ceil(cores*len/d) (sends its own segment,
       receives the others' in place; one range covers both)

Every instruction has at most two read ranges and one write range, so the
hardware form is fixed: `NREADS` read ranges and one write range of
(base, count), base VREG_BITS wide and count `count_bits(cfg)` wide; a
count of 0 is an unused range.  Two ranges overlap when both are non-empty
and each starts before the other ends.
"""

from dataclasses import dataclass

from ...isa import ComputeOp as C, DmaOp as D, Kind, PostOp
from ...isa.fields import ELEMS_BITS, VECS_BITS, VREG_BITS
from ...lib.arith import ceil_div
from .decode_cache import decoded

NREADS = 2
BASE_BITS = VREG_BITS


def count_bits( cfg ):
  """Width of a range's count: the largest count any instruction can have."""
  elems_max, vecs_max = ( 1 << ELEMS_BITS ) - 1, ( 1 << VECS_BITS ) - 1
  biggest = max( vecs_max, ceil_div( elems_max, cfg.d ) + 1,
                 ceil_div( cfg.cores * elems_max, cfg.d ) )
  return biggest.bit_length()


@dataclass( frozen=True )
class Range:
  base: int
  count: int

  @property
  def end( s ):
    return s.base + s.count

  def overlaps( s, o ):
    return bool( s.count and o.count and s.base < o.end and o.base < s.end )

  def __str__( s ):
    if not s.count:
      return "-"
    return f"v{s.base}" if s.count == 1 else f"v{s.base}..v{s.end - 1}"


EMPTY = Range( 0, 0 )


@dataclass( frozen=True )
class Footprint:
  reads: tuple        # NREADS Ranges (src1 first; count 0 = unused)
  write: Range
  weights: str = ""   # "push" (hbm_read mpu) or "pop" (matrix op): the FIFO

  def __str__( s ):
    rd = ",".join( str( r ) for r in s.reads if r.count ) or "-"
    return f"reads {rd} writes {s.write}"


def footprint_of( inst, op, kind, d, cores=1 ):
  """Footprint of a decoded instruction (see the module docstring)."""
  r0 = r1 = w = EMPTY
  weights = ""
  if kind == Kind.COMPUTE and not op.on_vpu:
    cols = ceil_div( int( inst.cols ), d )
    r0 = Range( int( inst.src1 ), ceil_div( int( inst.rows ), d ) )
    if op == C.CONV1D:
      r1 = Range( int( inst.bias ), cols )
    w = Range( int( inst.dst ), cols + ( int( inst.post ) == PostOp.REDMAX ) )
    weights = "pop"
  elif kind == Kind.COMPUTE:
    n = ceil_div( int( inst.len ), d )
    r0 = Range( int( inst.src1 ), n )
    if op.is_binary:
      r1 = Range( int( inst.src2 ), 1 if int( inst.bcast ) else n )
    w = Range( int( inst.dst ), 1 if op.is_reduction else n )
  elif kind == Kind.DMA:
    rng = Range( int( inst.rf ), int( inst.vecs ) )
    if op == D.HBM_READ and int( inst.mpu ):
      weights = "push"
    elif op in ( D.HBM_READ, D.DDR_READ ):
      w = rng
    else:
      r0 = rng
  else:
    r0 = w = Range( int( inst.rf ), ceil_div( cores * int( inst.len ), d ) )
  return Footprint( ( r0, r1 ), w, weights )


def footprint( word, d, cores=1 ):
  """Footprint of a 128-bit instruction word."""
  inst, op, kind = decoded( int( word ) )
  return footprint_of( inst, op, kind, d, cores )


def hazards( cand, older, chained=False ):
  """Hazards between a candidate footprint and an older in-flight one.

  `chained`: older is the chain producer issued right before cand on the
  same unit; then cand's src1 read of older's result (RAW) and the
  write-after-write are the unit's business (it streams the result into
  cand and writes back in order), not a stall.
  """
  out = []
  raw = any( r.overlaps( older.write ) for r in cand.reads[ 1 if chained else 0: ] )
  if raw:
    out.append( "RAW" )
  if any( cand.write.overlaps( r ) for r in older.reads ):
    out.append( "WAR" )
  if not chained and cand.write.overlaps( older.write ):
    out.append( "WAW" )
  return out
