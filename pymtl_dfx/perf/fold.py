"""Folding repeated decoder layers, exactly.

A step's program on every core is a prefix (the embedding), the same body
once per decoder layer, and a tail (the LM head).  The bodies differ only
in memory addresses, and the units' timing depends on an address only
through its channel (address mod its memory's channel count: the DMA's
rotations, its write slots) and through differences between addresses of
one transfer.  So with `canon_word` (a word with its address taken mod
M = (HBM channels, DDR channels), the modulus of the memory it addresses)
the bodies are equal, and the appliance is a
deterministic machine whose future depends only on its canonical state
(`canon`: every unit's timing state, absolute program positions and
addresses made relative) and on the canonical words it has yet to take.

Anchors: the first cycle at which core 0 has issued exactly the prefix and
j bodies.  If the canonical state at anchor j equals the one at anchor
j - 1, the stretch between them repeats for every later pair of anchors
whose window (the stretch's body plus the next body's first words, which
the cores may have taken or issued ahead) lies inside the bodies: up to
anchor L - 1.  `fold` then adds (L - 1 - j) stretches' cycles, op-class
and busy cycles, and moves every program position on by as many bodies;
the simulation goes on from anchor L - 1 with the state it has (equal, in
canonical form, to the true one).

`canon` is generic (every attribute of every timing object, recursively),
so state added to a timing class later is compared too: a missed relation
can only stop a fold, never make one wrong.  Only the fields named in
`_RELATIVE` are transformed.
"""

from collections import deque
from enum import Enum
from fractions import Fraction

from ..isa import DmaOp, Kind
from ..isa.formats import DmaInst, layout
from ..units.control.decode_cache import decoded

_ADDR = next( s for s in layout( DmaInst ) if s.name == "addr" )
_ADDR_MASK = ( ( 1 << ( _ADDR.hi - _ADDR.lo ) ) - 1 ) << _ADDR.lo
_HBM_OPS = ( DmaOp.HBM_READ, DmaOp.HBM_WRITE )

# attributes that carry no timing state (configs, caches, data, helpers)
_SKIP = { "cfg", "specs", "spec", "rule", "cands", "Candidate", "stall_reasons", "go",
          "_offer", "words", "ptr", "p", "ebuf", "label", "modes",
          "acc_val", "max_acc_val", "scalar" }     # the VPU's values (None without data)


def canon_word( word, M ):
  """A program word with a DMA address taken mod its memory's channel
  count (M: HBM's, DDR's)."""
  inst, op, kind = decoded( word )
  if kind != Kind.DMA:
    return word
  m = M[0] if op in _HBM_OPS else M[1]
  addr = ( word & _ADDR_MASK ) >> _ADDR.lo
  return ( word & ~_ADDR_MASK ) | ( ( addr % m ) << _ADDR.lo )


# a DMA engine serves one memory: its addresses are taken mod that memory's
# channel count (`C`, the engine's own)
def _read_engine( e, M ):
  rel = ( tuple( a - e.base for a in e.na ), e.end - e.base, e.base % e.C )
  return rel + _attrs( e, M, { "na", "end", "base", "buf" } )


def _write_engine( e, M ):
  return ( e.wa % e.C, ) + _attrs( e, M, { "wa" } )


def _rate_queue( q, M ):
  return ( tuple( ( canon( item, M ), q.now - t ) for item, t in q.q ), q.busy )


def _issue( t, M ):
  seqs = tuple( None if e is None else ( e.unit, e.fp, e.seq - t.done_seq[ e.unit ] )
                for e in t.entries )
  return ( tuple( canon_word( w, M ) for w in t.buf ), seqs, tuple( t.inflight ), t.chain_idx,
           tuple( tuple( line ) for line in t.delayed ),
           tuple( d - f for d, f in zip( t.done_seq, t.free_seq ) ) )


def _dma( t, M ):
  return ( tuple( canon_word( w, M ) for w in t.inst_q ), ) + _attrs( t, M, { "inst_q" } )


_RELATIVE = {
  "DMATiming": _dma,
  "ReadEngineCL": _read_engine,
  "WriteEngineCL": _write_engine,
  "RateQueueCL": _rate_queue,
  "IssueTiming": _issue,
}


def _attrs( obj, M, skip=() ):
  names = getattr( obj, "__slots__", None ) or sorted( vars( obj ) )
  return tuple( ( n, canon( getattr( obj, n ), M ) ) for n in names
                if n not in _SKIP and n not in skip and not callable( getattr( obj, n ) ) )


def canon( x, M ):
  """A hashable value that is equal for two states with the same future."""
  if x is None or isinstance( x, ( bool, int, float, str, Fraction ) ):
    return int( x ) if isinstance( x, Enum ) else x
  if isinstance( x, ( list, tuple, deque ) ):
    return tuple( canon( v, M ) for v in x )
  if isinstance( x, set ):
    return tuple( sorted( x ) )
  if isinstance( x, dict ):
    return tuple( ( k, canon( v, M ) ) for k, v in sorted( x.items() ) )
  if getattr( x, "statistic", False ):        # counts, not state: `jump` moves them
    return None
  if hasattr( x, "to_bits" ):                 # a decoded instruction (bitstruct)
    return int( x.to_bits() )
  f = _RELATIVE.get( type( x ).__name__ )
  if f is not None:
    return ( type( x ).__name__, ) + f( x, M )
  return ( type( x ).__name__, ) + _attrs( x, M )


class Layers:
  """Where a core's program repeats: prefix length P0, body length Lw, L
  bodies, and each unit's instructions in the prefix and in one body.  A
  body is g decoder layers, the fewest whose addresses repeat mod M (a
  layer's parameters need not be a whole number of channel rows apart);
  layers past the last whole body join the tail.  `ok` is False unless
  at least 3 bodies are equal in canonical form."""

  def __init__( s, words, units, classes, n_layer, body_end, M ):
    s.ok = False
    first = next( ( i for i, c in enumerate( classes ) if c == "layernorm" ), None )
    if first is None or body_end - first < n_layer:
      return
    layer = ( body_end - first ) // n_layer
    cw = [ ( canon_word( w, M ), c, u ) for w, c, u in zip( words, classes, units ) ]
    # The layers start at the first LayerNorm instruction.  A compiler pass
    # that moves instructions over layer boundaries (`compiler.read_ahead`
    # moves a layer's first weight read, with its DDR reads, into the layer
    # before, and the first layer's over the embedding's vector add) leaves
    # the first layer unlike the others and the program not a whole number
    # of layers from the first LayerNorm: the bodies then start where the
    # repetition does, within the first layer, one layer fewer of them.
    starts = [ first ] if ( body_end - first ) % n_layer == 0 else range( first + 1, first + layer )
    for P0 in starts:
      n = n_layer if P0 == first else n_layer - 1
      g = 1
      while n // g >= 3:
        Lw, L = g * layer, n // g
        if all( cw[ P0 + i ] == cw[ P0 + i + Lw ] for i in range( ( L - 1 ) * Lw ) ):
          break
        g *= 2
      else:
        continue
      break
    else:
      return
    first = P0
    s.P0, s.Lw, s.L, s.g = first, Lw, L, g
    s.pc0 = 0                   # the control unit's pc at the step's start
    s.prefix = [ sum( 1 for u in units[ :first ] if u == k ) for k in range( 4 ) ]
    s.per_unit = [ sum( 1 for u in units[ first:first + Lw ] if u == k ) for k in range( 4 ) ]
    s.ok = True

  def anchor( s, j ):
    """The pc (the control unit counts on over steps) of body j's first
    instruction."""
    return s.pc0 + s.P0 + j * s.Lw

  def position( s, core, track, j ):
    """The core's program position relative to anchor j (its own)."""
    base = [ p + j * n for p, n in zip( s.prefix, s.per_unit ) ]
    return ( core.ctrl.pc - s.anchor( j ), len( core.ctrl.buf ),
             tuple( r - b for r, b in zip( track.retired, base ) ),
             tuple( i - r for i, r in zip( track.issued, track.retired ) ) )


def state_key( app, tracks, layers, j, M ):
  """The canonical state of the whole appliance at anchor j, with every
  core's position relative to it."""
  return ( canon( app.cores, M ), canon( app.links, M ),
           tuple( l.position( c, t, j ) for c, t, l in zip( app.cores, tracks, layers ) ) )


def stats_of( k, tracks, cores ):
  return ( k, [ ( dict( t.cycles ), list( t.busy ), t.last_done,
                  c.stalls.snapshot() ) for t, c in zip( tracks, cores ) ] )


def jump( app, tracks, layers, k, before, after, S ):
  """Move the appliance on by S stretches (one body each) of the length
  and statistics between the snapshots `before` and `after`; returns k."""
  dk = after[0] - before[0]
  for c, t, l, ( c0, b0, _, w0 ), ( c1, b1, _, w1 ) in zip( app.cores, tracks, layers,
                                                             before[1], after[1] ):
    ctrl = c.ctrl
    shift = S * l.Lw
    for u in range( 4 ):
      n = S * l.per_unit[u]
      ctrl.issue_seq[u] += n
      ctrl.done_seq[u] += n
      ctrl.free_seq[u] += n
      t.issued[u] += n
      t.retired[u] += n
      t.busy[u] += S * ( b1[u] - b0[u] )
    for e in ctrl.entries:
      if e is not None:
        e.seq += S * l.per_unit[ e.unit ]
    ctrl.pc += shift
    c.ptr += shift
    ctrl.buf = c.words[ c.ptr - len( ctrl.buf ):c.ptr ]   # the words taken, not issued
    ctrl._offer = None
    for cls in t.cycles:
      t.cycles[ cls ] += S * ( c1[ cls ] - c0[ cls ] )
    c.stalls.advance( S, w0, w1 )
    t.last_done += S * dk      # the last completion, as many stretches on
    t.counted += S * dk        # the jumped cycles are in t.cycles and t.busy
    t._oldest()
  return k + S * dk


def foldable( app, layers, j ):
  """Anchors j - 1 .. L - 1 lie inside the bodies on every core: no core
  lagging into the prefix at anchor j - 1, none ahead into the tail at
  anchor L - 1 (its buffer reaches at most inst_buffer_entries words on)."""
  ahead = app.cfg.inst_buffer_entries
  for c, l in zip( app.cores, layers ):
    x = c.ctrl.pc - l.anchor( j )
    if l.anchor( j - 1 ) + x < l.anchor( 0 ) or x + ahead >= l.Lw:
      return False
  return True


class Folder:
  """Watches core 0's anchors during a step and folds when two in a row
  have the same canonical state."""

  def __init__( s, app, layers ):
    s.app, s.layers = app, layers
    for c, l in zip( app.cores, layers ):
      l.pc0 = c.ctrl.pc
    s.ok = all( l.ok for l in layers ) and len( { ( l.L ) for l in layers } ) == 1
    hbm, ddr = app.cores[0].mem["hbm"], app.cores[0].mem["ddr"]
    s.M = ( len( hbm ), len( ddr ) )
    s.j = 0                     # the next anchor
    s.last = None               # (key, stats) at the previous anchor
    s.folded = 0                # stretches folded
    s.skipped = 0               # the cycles they stand for, not simulated

  def at( s, k, tracks ):
    """Called before cycle k; returns the (possibly moved) k."""
    if not s.ok or s.app.cores[0].ctrl.pc != s.layers[0].anchor( s.j ):
      return k
    j, L = s.j, s.layers[0].L
    s.j += 1
    if j >= L - 1:
      s.ok = False
      return k
    key = state_key( s.app, tracks, s.layers, j, s.M )
    now = stats_of( k, tracks, s.app.cores )
    if s.last is not None and s.last[0] == key and foldable( s.app, s.layers, j ):
      S = L - 1 - j
      k0 = k
      k = jump( s.app, tracks, s.layers, k, s.last[1], now, S )
      s.skipped += k - k0
      s.folded += S
      s.j = L - 1
      s.last = None
      return k
    s.last = ( key, now )
    return k
