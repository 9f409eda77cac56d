"""Compile a GPT-2 checkpoint for N DFX cores, and save / load the result.

The compiled model is the per-core memory images plus the layout; per-step
programs are emitted from the layout (`emit.StepEmitter`), by the host, as
tokens arrive.  On disk it is one image file (`image_file`): metadata holds
both configs, the core count and the layout; sections `core<i>/hbm` and
`core<i>/ddr` hold the images.
"""

from dataclasses import dataclass

import numpy as np

from ..config import ConfigError, DFXConfig, GPT2Config
from ..files import expect, short_repr
from ..printable import shown
from .emit import StepEmitter
from .image_file import ImageFormatError, as_stored, read_image, write_image
from .images import build_images
from .layout import plan_layout
from .checks import check_limits, check_model
from .limits import CompileError

IMAGE_KIND = "pymtl_dfx compiled GPT-2"


@dataclass
class CompiledModel:
  gpt: GPT2Config
  dfx: DFXConfig
  layout: dict
  images: list            # [(hbm, ddr)] per core, [words, dfx.mem_word_elems] FP16

  @property
  def cores( s ):
    return s.layout["cores"]

  @property
  def readonly_hbm_words( s ):
    """HBM below this word holds weights only (K/V caches come after)."""
    kv = s.layout["hbm"]["kv"]
    return min( kv.values() ) if kv else s.layout["hbm"]["words"]

  def emitter( s ):
    return StepEmitter( s.layout, s.gpt )

  def save( s, path ):
    meta = dict( kind=IMAGE_KIND, gpt=s.gpt.to_hf_dict(), gpt_name=s.gpt.name,
                 dfx=s.dfx.to_dict(), layout=s.layout )
    sections = {}
    for i, ( hbm, ddr ) in enumerate( s.images ):
      sections[ f"core{i}/hbm" ] = hbm
      sections[ f"core{i}/ddr" ] = ddr
    write_image( path, meta, sections )


def plan( gpt: GPT2Config, dfx: DFXConfig, cores: int, max_tokens: int = None ):
  """The layout, once every limit of a CL/RTL core holds (`limits`): the
  compiler refuses what the hardware would run wrongly or could not run."""
  # the model's sizes against the hardware first, in O(1): the layout's
  # loops over layers and heads would take forever on n_layer=10**400
  check_model( gpt, dfx, cores, max_tokens )
  layout = plan_layout( gpt, dfx, cores, max_tokens )
  check_limits( gpt, dfx, cores, layout )
  return layout


def compile_model( weights16, dfx: DFXConfig, cores: int, max_tokens: int = None ):
  gpt = weights16.config
  layout = plan( gpt, dfx, cores, max_tokens )
  images = [ build_images( weights16, dfx, layout, c ) for c in range( cores ) ]
  return CompiledModel( gpt, dfx, layout, images )


def load_compiled( path ):
  """The CompiledModel in the image at `path`.  Every metadata field is
  checked (ImageFormatError naming it): the configs as DFXConfig and
  GPT2Config check them, and the layout by planning it again from them, so
  that an image is run only with the layout this compiler gives it."""
  img = read_image( path )
  meta = img.meta
  where = f"{shown( path )}: metadata"

  def bad( problem ):
    raise ImageFormatError( f"{where}: {problem}" )

  if meta.get( "kind" ) != IMAGE_KIND:
    bad( f"not a compiled GPT-2 image (kind={short_repr( meta.get( 'kind' ) )})" )
  for key in ( "gpt", "dfx", "layout" ):
    expect( meta.get( key ), dict, f"{where} field {key!r}", ImageFormatError )
  name = expect( meta.get( "gpt_name", "checkpoint" ), str, f"{where} field 'gpt_name'",
                 ImageFormatError )
  try:
    gpt = GPT2Config.from_hf_dict( meta["gpt"], name=name )
    missing = sorted( set( DFXConfig().to_dict() ) - set( meta["dfx"] ) )
    if missing:
      bad( f"field 'dfx' lacks {', '.join( missing )}" )
    dfx = DFXConfig.from_dict( meta["dfx"] )
  except ConfigError as e:
    bad( str( e ) )
  layout = meta["layout"]
  cores = expect( layout.get( "cores" ), int, f"{where} field 'layout.cores'", ImageFormatError )
  tokens = expect( layout.get( "max_tokens" ), int, f"{where} field 'layout.max_tokens'",
                   ImageFormatError )
  # bounds from the file itself: two sections per core, no position past the model's
  if not 1 <= cores <= len( img ) // 2:
    bad( f"layout.cores={short_repr( cores )}, but the image holds {len( img )} sections "
         f"(2 per core)" )
  if cores != dfx.cores:
    bad( f"layout.cores={cores}, but dfx.cores={dfx.cores}" )
  if not 1 <= tokens <= gpt.n_positions:
    bad( f"layout.max_tokens={short_repr( tokens )} (must be 1 to the model's "
         f"n_positions={gpt.n_positions})" )
  try:
    want = plan( gpt, dfx, cores, tokens )
  except CompileError as e:
    bad( f"its configs do not compile: {e}" )
  if as_stored( want ) != layout:
    bad( f"the layout is not the one this compiler plans for its configs (cores={cores}, "
         f"max_tokens={tokens}): an image of another pymtl_dfx version, or a corrupt one; "
         f"compile it again (--save-image)" )
  shapes = { "hbm": ( layout["hbm"]["words"], dfx.mem_word_elems ),
             "ddr": ( layout["ddr"]["words"], dfx.mem_word_elems ) }
  for i in range( cores ):
    for mem, shape in shapes.items():
      name = f"core{i}/{mem}"
      if name not in img:
        bad( f"no section {name!r} (the layout has {cores} cores)" )
      arr = img[ name ]
      if arr.dtype != np.float16 or arr.shape != shape:
        raise ImageFormatError( f"{shown( path )}: section {name!r} is {arr.dtype} "
                                f"{arr.shape}, the layout needs float16 {shape}" )
  # memory images are written by the program (K/V, logits): private copies
  images = [ ( img[ f"core{i}/hbm" ].copy(), img[ f"core{i}/ddr" ].copy() )
             for i in range( cores ) ]
  return CompiledModel( gpt, dfx, layout, images )
