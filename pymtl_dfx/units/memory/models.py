"""The memory's (HBM's and DDR's) model at each level."""

from .MemoryCL import MemoryCL
from .MemoryFL import MemoryFL
from .MemoryRTL import MemoryRTL

MODELS = dict( fl=MemoryFL, cl=MemoryCL, rtl=MemoryRTL )
