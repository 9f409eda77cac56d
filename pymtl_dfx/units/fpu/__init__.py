"""FP16 operators (DFX's DSP-based adder and multiplier) at FL, CL and RTL."""

from .msgs import FP16, FP16AddReq, FP16MulReq
from .FP16AdderFL import FP16AdderFL
from .FP16AdderCL import FP16AdderCL
from .FP16AdderRTL import FP16AdderRTL
from .FP16MultiplierFL import FP16MultiplierFL
from .FP16MultiplierCL import FP16MultiplierCL
from .FP16MultiplierRTL import FP16MultiplierRTL
