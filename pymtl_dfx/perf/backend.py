"""The perf level as a backend of `appliance.host.Host`: the data-free
timing model of the appliance (`appliance.ApplianceTiming`) behind the
interface every backend has (`appliance.backend`), so the host's loop,
schedule and attribution are the same as at CL."""

from ..appliance.attribution import step_record, units_of
from ..isa import encode
from ..units.control.msgs import UNITS
from .appliance import ApplianceTiming
from .core import STALLS
from .fold import Layers


class PerfBackend:
  """The data-free timing model of `cores` cores (`appliance.ApplianceTiming`,
  or `app`).  With `model` (a compiled or planned model) and `fold`, a
  step's repeated decoder layers are folded (`perf.fold`: the same cycles,
  in less time)."""

  level = "perf"
  data = False
  counts_busy = True

  def __init__( s, cfg, cores, model=None, fold=True, app=None, emitter=None ):
    s.stalls = STALLS
    s.cfg, s.model, s.fold = cfg, model, fold and model is not None
    s.app = app or ApplianceTiming( cfg, cores )
    s.emitter = emitter or ( model.emitter() if s.fold else None )
    s.load_cycles = s.readback_cycles = 0

  def run_programs( s, progs, classes, limit, what, layers=None ):
    words = [ [ int( encode( inst ) ) for inst in p ] for p in progs ]
    return s.app.step( words, [ units_of( p ) for p in progs ], classes, layers, limit, what )

  def step( s, progs, classes, at ):
    token, pos, want = at
    words = [ [ int( encode( inst ) ) for inst in p ] for p in progs ]
    units = [ units_of( p ) for p in progs ]
    layers = None
    if s.fold:
      M = ( s.cfg.hbm_channels, s.cfg.ddr_channels )
      # where the decoder layers end and the LM head begins
      ends = [ len( s.emitter.step( i, int( token ), pos, False )[0] ) if want else len( p )
               for i, p in enumerate( progs ) ]
      layers = [ Layers( w, u, c, s.model.gpt.n_layer, end, M )
                 for w, u, c, end in zip( words, units, classes, ends ) ]
    k, tracks = s.app.step( words, units, classes, layers, what=f"step at position {pos}" )
    rec = step_record( s.cfg, k, tracks )
    rec["stalls"] = [ { name: dict( c.stalls.by_unit[u] ) for u, name in enumerate( UNITS ) }
                      for c in s.app.cores ]
    rec["folded"], rec["skipped"] = s.app.folded, s.app.skipped
    return rec

  def read_ddr( s, addr, n_words ):
    return None          # no data
