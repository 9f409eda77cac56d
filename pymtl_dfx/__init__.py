"""pymtl_dfx: a multi-level PyMTL3 model of the DFX GPT-2 appliance."""

__version__ = "0.1.0"
