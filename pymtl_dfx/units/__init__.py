"""DFX hardware units, one package per unit, each at FL, CL and RTL."""
