"""FP16 operators at FL, CL and RTL: DFX's DSP-based adder and multiplier, the
comparator, and the special functions (exp, reciprocal, reciprocal square
root, GELU, 2^-floor(log2|x|)) exactly as `pymtl_dfx.numerics` defines them."""

from .msgs import FP16, FP16AddReq, FP16MulReq, mk_fp16_vec
from .FP16AdderFL import FP16AdderFL
from .FP16AdderCL import FP16AdderCL
from .FP16AdderRTL import FP16AdderRTL
from .FP16MultiplierFL import FP16MultiplierFL
from .FP16MultiplierCL import FP16MultiplierCL
from .FP16MultiplierRTL import FP16MultiplierRTL
from .FP16MaxFL import FP16MaxFL
from .FP16MaxCL import FP16MaxCL
from .FP16MaxRTL import FP16MaxRTL
from .FP16ExpFL import FP16ExpFL
from .FP16ExpCL import FP16ExpCL
from .FP16ExpRTL import FP16ExpRTL
from .FP16RecipFL import FP16RecipFL
from .FP16RecipCL import FP16RecipCL
from .FP16RecipRTL import FP16RecipRTL
from .FP16RsqrtFL import FP16RsqrtFL
from .FP16RsqrtCL import FP16RsqrtCL
from .FP16RsqrtRTL import FP16RsqrtRTL
from .FP16GeluFL import FP16GeluFL
from .FP16GeluCL import FP16GeluCL
from .FP16GeluRTL import FP16GeluRTL
from .FP16InvPow2FL import FP16InvPow2FL
from .FP16InvPow2CL import FP16InvPow2CL
from .FP16InvPow2RTL import FP16InvPow2RTL
