"""Profiles: named sets of `DFXConfig` values, how a design or cost variant
is offered (`--profile NAME` on every command that builds a DFXConfig,
`--set` on top).

The default configuration (no profile) is the paper's design with every
cost of the U280 system a public measurement; a profile changes named
fields only, and says where its values come from.  docs/perf.md
"Profiles" lists them and tells how to add one; "Costs of the U280 system"
has a column per profile that changes a cost field (a test checks both
against this table).

A profile may include others (`includes`, applied first, in order, then
its own `values`): a larger profile is built from the sourced pieces
(e.g. a profile of DFX as built takes `aurora-ring` for its link), and two
pieces that set one field to different values are refused.  No profile sets
`cores`: the commands (`--cores`, the report's card counts) choose it.
"""

from dataclasses import dataclass, field, fields

from .config import ConfigError, DFXConfig


class ProfileError( ConfigError ):
  """An unknown profile name, or a profile table that does not compose."""


@dataclass( frozen=True )
class Profile:
  name: str
  description: str         # one line: what the variant is (`--help` lists it)
  source: str              # where its values come from, and where the derivation is
  values: dict = field( default_factory=dict )    # DFXConfig field -> value
  includes: tuple = ()     # profiles applied before `values`


_PROFILES = (
  Profile(
    "aurora-ring",
    "the ring on Aurora 64B/66B links (4 x 25.78125 Gb/s, framing mode) instead of "
    "UDP over the 100G MAC",
    "pc2/Aurora-HLS eval/latency_tests.csv (U280 to U280, 12 cards, 72 runs per point) and "
    "AMD PG074; derivations in docs/perf.md \"The Aurora 64B/66B ring\"",
    dict( ring_gbps=100.0,                 # 4 x 25.78125 Gb/s x 64/66
          ring_latency_ns=975.0,           # one 128 B frame, one way
          ring_frame_overhead_bytes=64 ),  # wire time per frame beyond its payload
  ),
)



def _dfx_as_built():
  return Profile(
    "paper",
    "DFX as the paper built it: the Aurora ring, the 410 MHz memory interface, HBM refresh "
    "and loaded latency, no host transfer per step; every value sourced, nothing fitted",
    "the DFX paper section VI (410 MHz), a review of its section V-A (the controller holds the "
    "layer and token counts), Ramulator's HBM2 tRFC, AMD PG276 (tREFI), HBM Connect (loaded "
    "latency); derivations in docs/perf.md \"DFX as built\"",
    dict( hbm_axi_mhz=410,                # the memory interface's clock
          hbm_refresh_ns=260.0,           # tRFC, 4 Gb per channel
          hbm_refresh_interval_ns=3900.0, # tREFI
          hbm_latency_ns=289.0,           # loaded read round trip, HLS m_axi on a U280
          host_step_us=0.0 ),             # the controller runs every step itself
    includes=( "aurora-ring", ) )


def _calibrated():
  """`paper` with the fitted parameters (`calibration.json`); None before
  a fit was written."""
  from .calibration import fitted
  rec = fitted()
  if rec is None:
    return None
  return Profile(
    "calibrated",
    "`paper` with at most three fitted mechanisms (HBM efficiency under 32 streams, a ring "
    "hop's overhead, the controller's completion latency), fitted on 345M 64:64 only",
    f"fitted by reports/calibrate_dfx.py on the paper's 345M 64:64 tokens/s on 1, 2 and 4 "
    f"cards ({rec.get( 'date', 'undated' )}); pymtl_dfx/calibration.json has the values, "
    "ranges and errors; docs/perf.md \"Calibration\"",
    dict( rec["values"] ), includes=( "paper", ) )


def _streaming():
  """Every design option on (`config.DESIGN_FIELDS`), at the value
  reports/streaming_options.py measures; the costs stay the default's."""
  return Profile(
    "streaming",
    "a core past DFX that keeps the HBM streaming: every design option on but the read-ahead "
    "(the design fields of the config, docs/perf.md Design options), the paper's MPU width; "
    "the U280 system's costs as the default",
    "the design options' definitions in docs/perf.md \"Design options\"; each one's effect "
    "alone and cumulative: reports/streaming_options.py",
    dict( mpu_raster_walk=1,              # no zigzag turn stall
          mpu_post_bypass=1,              # a plain matrix skips the bias, scale and GELU stages
          attn_head_pipeline=1,           # a head's softmax beside the next head's scores
          reduce_partials=8,              # a reduction takes a chunk a cycle
          vpu_max_tree=1,                 # a max reduction through comparators, not the adder
          proj_row_split=1,               # an all-reduce per pair of matrices, not two gathers
          ln_fold=1,                      # ln_1's statistics beside c_attn
          vpu_gelu=1,                     # GELU also on the VPU, in its own pipe
          ln2_fold=1 ) )                  # ... so ln_2's statistics run beside c_fc


def _streaming_wide():
  """`streaming` with an MPU twice as wide as the HBM delivers and the
  weight reads moved ahead into a deeper weight FIFO, so the HBM streams
  during the vector work and the MPU catches up."""
  return Profile(
    "streaming-wide",
    "streaming with a matrix unit twice the HBM's rate (l=32), a 512-tile weight FIFO, the "
    "weight reads moved ahead and an 8-instruction DMA queue; fits the U280 with the FP16 "
    "adders on DSPs",
    "docs/perf.md Design options (the read-ahead and the wide MPU); the resources: "
    "reports/kernel_resources.py --profile streaming-wide",
    dict( l=32,                           # a 64 x 32 tile a cycle; 32 HBM channels give half
          weight_fifo_entries=512,        # what streams ahead during the vector work
          weight_read_ahead=1,            # each weight read right after the previous matrix
          dma_inst_queue=8 ),             # ... or over matrices, issued past busy transfers
    includes=( "streaming", ) )


_PROFILES += ( _dfx_as_built(), _streaming(), _streaming_wide() )
if _calibrated() is not None:
  _PROFILES += ( _calibrated(), )

PROFILES = { p.name: p for p in _PROFILES }


def names():
  return list( PROFILES )


def _unknown( name ):
  return ProfileError( f"unknown profile {name!r} (profiles: {', '.join( PROFILES ) or 'none'})" )


def get( name ) -> Profile:
  if name not in PROFILES:
    raise _unknown( name )
  return PROFILES[ name ]


def values( name, _seen=() ) -> dict:
  """Every DFXConfig value profile `name` sets: its includes' in order,
  then its own; a field two included profiles set differently is refused
  (its own values may refine an include's)."""
  p = get( name )
  if name in _seen:
    raise ProfileError( f"profile {name!r} includes itself ({' -> '.join( _seen + ( name, ) )})" )
  out, by = {}, {}
  for inc in p.includes:
    for k, v in values( inc, _seen + ( name, ) ).items():
      if k in out and out[ k ] != v:
        raise ProfileError( f"profile {name!r}: {by[ k ]} and {inc} set {k} to {out[ k ]} and {v}" )
      out[ k ], by[ k ] = v, inc
  out.update( p.values )
  return out


def config( name=None, base=None ) -> DFXConfig:
  """`base` (default DFXConfig()) with profile `name`'s values; None: no
  profile, `base` itself."""
  base = DFXConfig() if base is None else base
  if name is None:
    return base
  try:
    return base.replace( **values( name ) )
  except ConfigError as e:
    raise ProfileError( f"profile {name!r}: {e}" ) from None


def check_table():
  """Every profile composes, sets only DFXConfig fields (never `cores`)
  with values of the field's type, gives a valid config, and has a
  one-line description and a source.  Raises ProfileError naming the
  first problem (a test runs it)."""
  known = { f.name: f.type for f in fields( DFXConfig ) }
  for name, p in PROFILES.items():
    if name != p.name or not name or any( c.isspace() for c in name ):
      raise ProfileError( f"profile {name!r}: the key and its name differ or it has a space" )
    if not p.description.strip() or "\n" in p.description or not p.source.strip():
      raise ProfileError( f"profile {name!r}: needs a one-line description and a source" )
    for inc in p.includes:
      get( inc )
    vals = values( name )
    for k, v in vals.items():
      if k not in known:
        raise ProfileError( f"profile {name!r}: {k!r} is not a DFXConfig field" )
      if k == "cores":
        raise ProfileError( f"profile {name!r} sets cores: the commands choose it" )
      want = int if known[ k ] in ( int, "int" ) else float
      if type( v ) is not want:
        raise ProfileError( f"profile {name!r}: {k}={v!r} must be of type {want.__name__}" )
    config( name )
