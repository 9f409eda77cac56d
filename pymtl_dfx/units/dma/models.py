"""The DMA's model at each level."""

from .DMACL import DMACL
from .DMAFL import DMAFL
from .DMARTL import DMARTL

MODELS = dict( fl=DMAFL, cl=DMACL, rtl=DMARTL )
