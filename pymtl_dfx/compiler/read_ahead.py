"""Weight read-ahead (`DFXConfig.weight_read_ahead`): the HBM streams a
matrix's weights while the core still runs the vector work before it.

The emitter places each matrix's `hbm_read mpu` right before its matrix
instruction (`emit` says why), so the HBM idles during every LayerNorm,
sync and softmax.  With an MPU wider than the HBM (l=32 takes a 64 x 32
tile a cycle, 32 channels deliver half of one) and a weight FIFO deep
enough (`weight_fifo_entries`) to hold what the HBM streams meanwhile, the
matrix then takes its first tiles at the MPU's rate.

The rule, a post-pass over each core's program (`read_ahead`): every
`hbm_read mpu` moves up, together with every DDR read between, to just
after the nearest earlier MPU instruction (CONV1D, MASKEDMM, MM) or DMA
instruction other than a DDR read (HBM_WRITE, DDR_WRITE, an HBM read),
whichever is later; the moved DMA instructions keep their order (and their
op classes), the instructions they pass keep theirs.  With a queue in front
of the DMA (`DFXConfig.dma_inst_queue`, `fifo_entries` given) it also passes
MPU instructions while the weight FIFO holds what they have not taken (the
third point below).  It is safe because:

- the weight FIFO's order stays the MPU's: a read never passes another
  read, so the matrices pop the FIFO in the order the reads push it;
- it never passes a DMA write: the step's K (V) row is written to HBM before
  the K^T (V) read that streams it (the DMA is in order, so the write lands
  first: HBM read-after-write);
- a DMA instruction issues only once the reads before it have room in the
  FIFO for the tiles their matrices after it have not taken
  (`pending_tiles`): the in-order DMA starts an instruction once the older
  ones have ended (with a queue, fewer wait, so this still suffices).  A
  read that passes an MPU instruction makes that matrix's tiles pending at
  its new place, so the move stops at an MPU instruction whose tiles, with
  those already pending, would not fit in `fifo_entries` (0: at every MPU
  instruction, so nothing becomes pending);
- the DDR reads move with it: left between the read and its matrix they
  would wait for the read to end, which may need its matrix to take tiles;
  between a read and its matrix only non-DMA instructions remain, which
  need no DMA to finish (a sync needs only the other cores, whose programs
  have the same shape), so the matrix issues.  Without a queue a moved read
  also holds every younger instruction at issue while the DMA finishes the
  older transfers, which is why MPU instructions stop it there;
- register order: a moved DDR read is older than the instructions it passes
  once moved, and the scoreboard orders by program order (it stalls a DDR
  read's register write behind an older in-flight instruction's read, WAR,
  and write, WAW; a younger reader waits for it, RAW), so passing an
  instruction that reads or writes the registers a moved DDR read writes
  would change the values: the move stops below such an instruction
  (`_conflicts`, by `footprint`, the scoreboard's own ranges).  It also
  stops below a chain producer's consumer rather than between the two (a
  chain needs the consumer to be the next instruction issued to the unit),
  and at an instruction with a wait flag.
  On the emitted programs no stop of this kind happens (a test checks).

The program's instructions are unchanged as a multiset, and so are the
numerics: only the DMA's issue order relative to vector and router work
differs.
"""

from ..isa import ComputeOp as C, DmaOp as D, Kind, op_of
from ..units.control.footprint import footprint_of

MPU_OPS = ( C.CONV1D, C.MASKEDMM, C.MM )


def _kind( inst ):
  return Kind( int( inst.hdr.kind ) )


def is_mpu( inst ):
  return _kind( inst ) == Kind.COMPUTE and op_of( inst ) in MPU_OPS


def is_weight_read( inst ):
  return _kind( inst ) == Kind.DMA and op_of( inst ) == D.HBM_READ and bool( int( inst.mpu ) )


def is_ddr_read( inst ):
  return _kind( inst ) == Kind.DMA and op_of( inst ) == D.DDR_READ


def is_barrier( inst ):
  """What a weight read never passes: a DMA instruction other than a DDR
  read (a read: the FIFO's order; a write: HBM RAW), or one that waits for
  a unit (a wait_* flag: the emitter sets none).  MPU instructions stop it
  too unless `read_ahead` is given the FIFO's entries."""
  h = inst.hdr
  return ( ( _kind( inst ) == Kind.DMA and not is_ddr_read( inst ) )
           or bool( int( h.wait_dma ) | int( h.wait_compute ) | int( h.wait_router ) ) )


def read_tiles( inst, l ):
  """The d x l tiles a weight read pushes into the FIFO."""
  return int( inst.vecs ) // l


def pending_tiles( prog, l ):
  """{pc of each DMA instruction: the tiles of the weight reads before it
  whose matrices come after it}.  The k-th read feeds the k-th MPU
  instruction.  The in-order DMA takes an instruction once every older one
  has ended, and a weight read ends once its last tile is in the FIFO,
  while the matrices after the instruction cannot take tiles before it
  issues (in-order issue; the older matrices drain without any younger
  instruction).  So a program runs when each DMA instruction's pending
  tiles fit in the weight FIFO: `fifo_bound` <= weight_fifo_entries.  The
  emitter's programs either leave no DMA instruction between a read and its
  matrix (bound 0, the rule `read_ahead` keeps) or rely on this
  (`emit.StepEmitter.heads_in_reduction_wait`)."""
  reads = [ pc for pc, i in enumerate( prog ) if is_weight_read( i ) ]
  mpus = [ pc for pc, i in enumerate( prog ) if is_mpu( i ) ]
  if len( reads ) != len( mpus ):
    raise ValueError( f"{len( reads )} weight reads for {len( mpus )} MPU instructions" )
  mats = [ ( r, m, read_tiles( prog[ r ], l ) ) for r, m in zip( reads, mpus ) ]
  return { pc: sum( t for r, m, t in mats if r < pc < m )
           for pc, i in enumerate( prog ) if _kind( i ) == Kind.DMA }


def fifo_bound( prog, l ):
  """The weight FIFO entries a program needs (`pending_tiles`' largest)."""
  return max( pending_tiles( prog, l ).values(), default=0 )


def _fp( inst, d, cores ):
  return footprint_of( inst, op_of( inst ), _kind( inst ), d, cores )


def _conflicts( moved, other ):
  """True when moving the DDR reads (footprints) `moved` above `other`
  would reorder a register access: other reads or writes what one writes."""
  return any( m.write.overlaps( other.write ) or any( m.write.overlaps( r ) for r in other.reads )
              for m in moved )


def _chained( inst ):
  return _kind( inst ) == Kind.COMPUTE and bool( int( inst.hdr.chain ) )


def read_ahead( prog, classes, d, cores, stops=None, l=None, fifo_entries=0 ):
  """(instructions, op classes) with every weight read moved ahead (the
  module docstring's rule); with `fifo_entries` (d x l tiles) also over
  MPU instructions while their tiles fit.  `stops`: a list that gets one
  entry (pc of the read, pc of the instruction) per move stopped by a
  register conflict."""
  prog, classes = list( prog ), list( classes )
  # the k-th read feeds the k-th MPU instruction; a move keeps the reads'
  # order and the multiset of what stands before the read's old place
  tiles = [ read_tiles( x, l ) for x in prog if is_weight_read( x ) ] if fifo_entries else []
  n_mpu = n_read = 0          # before pc i
  for i, inst in enumerate( prog ):
    if is_mpu( inst ):
      n_mpu += 1
      continue
    if not is_weight_read( inst ):
      continue
    # the older reads whose matrices come after this one: pending already
    pending = sum( tiles[ n_mpu:n_read ] )
    n_read += 1
    passed = 0
    # scan up: collect the DDR reads, pass the rest until a barrier
    moved = []
    t = i
    while t > 0 and not is_barrier( prog[ t - 1 ] ):
      above = prog[ t - 1 ]
      if is_mpu( above ):
        # its tiles become pending at the read's new place
        if not fifo_entries or pending + tiles[ n_mpu - 1 - passed ] > fifo_entries:
          break
        pending += tiles[ n_mpu - 1 - passed ]
        passed += 1
      elif is_ddr_read( above ):
        moved.append( _fp( above, d, cores ) )
      elif _conflicts( moved, _fp( above, d, cores ) ):
        if stops is not None:
          stops.append( ( i, t - 1 ) )
        break
      t -= 1
    # not between a chain producer and its consumer; the window is [t, i]
    while 0 < t < i and _chained( prog[ t - 1 ] ):
      t += 1
    window = range( t, i + 1 )
    dma = [ j for j in window if _kind( prog[j] ) == Kind.DMA ]
    rest = [ j for j in window if _kind( prog[j] ) != Kind.DMA ]
    order = dma + rest
    prog[ t:i + 1 ] = [ prog[j] for j in order ]
    classes[ t:i + 1 ] = [ classes[j] for j in order ]
  return prog, classes
