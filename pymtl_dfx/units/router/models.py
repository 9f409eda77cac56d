"""The router's model at each level (MODELS), and the ring link's
(LINK_MODELS: the link is timing only, so its FL is the CL link)."""

from .LinkRTL import LinkCL, LinkRTL
from .RouterCL import RouterCL
from .RouterFL import RouterFL
from .RouterRTL import RouterRTL

MODELS = dict( fl=RouterFL, cl=RouterCL, rtl=RouterRTL )
LINK_MODELS = dict( fl=LinkCL, cl=LinkCL, rtl=LinkRTL )
