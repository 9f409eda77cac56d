"""The control unit's model at each level."""

from .ControlUnitCL import ControlUnitCL
from .ControlUnitFL import ControlUnitFL
from .ControlUnitRTL import ControlUnitRTL

MODELS = dict( fl=ControlUnitFL, cl=ControlUnitCL, rtl=ControlUnitRTL )
