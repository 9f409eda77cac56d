"""The VPU's model at each level."""

from .VPUCL import VPUCL
from .VPUFL import VPUFL
from .VPURTL import VPURTL

MODELS = dict( fl=VPUFL, cl=VPUCL, rtl=VPURTL )
