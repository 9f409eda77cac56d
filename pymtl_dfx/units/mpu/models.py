"""The MPU's model at each level (MODELS), and its MFU lane's (MFU_LANE_MODELS)."""

from .MFULaneCL import MFULaneCL
from .MFULaneFL import MFULaneFL
from .MFULaneRTL import MFULaneRTL
from .MPUCL import MPUCL
from .MPUFL import MPUFL
from .MPURTL import MPURTL

MODELS = dict( fl=MPUFL, cl=MPUCL, rtl=MPURTL )
MFU_LANE_MODELS = dict( fl=MFULaneFL, cl=MFULaneCL, rtl=MFULaneRTL )
