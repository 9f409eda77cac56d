"""Each FP16 operator's model at each level, one dict per operator."""

from . import (FP16AdderCL, FP16AdderFL, FP16AdderRTL, FP16ExpCL, FP16ExpFL, FP16ExpRTL,
               FP16GeluCL, FP16GeluFL, FP16GeluRTL, FP16InvPow2CL, FP16InvPow2FL,
               FP16InvPow2RTL, FP16MaxCL, FP16MaxFL, FP16MaxRTL, FP16MultiplierCL,
               FP16MultiplierFL, FP16MultiplierRTL, FP16RecipCL, FP16RecipFL, FP16RecipRTL,
               FP16RsqrtCL, FP16RsqrtFL, FP16RsqrtRTL)

ADDER_MODELS = dict( fl=FP16AdderFL, cl=FP16AdderCL, rtl=FP16AdderRTL )
MULTIPLIER_MODELS = dict( fl=FP16MultiplierFL, cl=FP16MultiplierCL, rtl=FP16MultiplierRTL )
MAX_MODELS = dict( fl=FP16MaxFL, cl=FP16MaxCL, rtl=FP16MaxRTL )
EXP_MODELS = dict( fl=FP16ExpFL, cl=FP16ExpCL, rtl=FP16ExpRTL )
RECIP_MODELS = dict( fl=FP16RecipFL, cl=FP16RecipCL, rtl=FP16RecipRTL )
RSQRT_MODELS = dict( fl=FP16RsqrtFL, cl=FP16RsqrtCL, rtl=FP16RsqrtRTL )
GELU_MODELS = dict( fl=FP16GeluFL, cl=FP16GeluCL, rtl=FP16GeluRTL )
INVPOW2_MODELS = dict( fl=FP16InvPow2FL, cl=FP16InvPow2CL, rtl=FP16InvPow2RTL )
