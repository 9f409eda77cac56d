"""The register file manager's model at each level."""

from .RegisterFileManagerCL import RegisterFileManagerCL
from .RegisterFileManagerFL import RegisterFileManagerFL
from .RegisterFileManagerRTL import RegisterFileManagerRTL

MODELS = dict( fl=RegisterFileManagerFL, cl=RegisterFileManagerCL, rtl=RegisterFileManagerRTL )
