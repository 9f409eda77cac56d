"""Compile a GPT-2 checkpoint for N DFX cores, and save / load the result.

The compiled model is the per-core memory images plus the layout; per-step
programs are emitted from the layout (`emit.StepEmitter`), by the host, as
tokens arrive.  On disk it is one image file (`image_file`): metadata holds
both configs, the core count and the layout; sections `core<i>/hbm` and
`core<i>/ddr` hold the images.
"""

from dataclasses import dataclass

from ..bounds import check_model
from ..config import DFXConfig, GPT2Config
from .emit import StepEmitter
from .image_file import read_image, write_image
from .images import build_images
from .layout import plan_layout
from .limits import check_limits

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
  img = read_image( path )
  meta = img.meta
  if meta.get( "kind" ) != IMAGE_KIND:
    raise ValueError( f"{path}: not a compiled GPT-2 image (kind={meta.get('kind')!r})" )
  gpt = GPT2Config.from_hf_dict( meta["gpt"], name=meta.get( "gpt_name", "checkpoint" ) )
  dfx = DFXConfig.from_dict( meta["dfx"] )
  layout = meta["layout"]
  # memory images are written by the program (K/V, logits): private copies
  images = [ ( img[ f"core{i}/hbm" ].copy(), img[ f"core{i}/ddr" ].copy() )
             for i in range( layout["cores"] ) ]
  return CompiledModel( gpt, dfx, layout, images )
