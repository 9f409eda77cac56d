"""From PyMTL3 RTL to Verilog and Verilated models: translation and the
lint (`rtlgen`), Verilator 5 under pymtl3's import pass (`verilator5`),
the cache of built models (`verilated_cache`) and the wide-port wrapper
that keeps a top's ports within what pymtl3 imports (`wide_ports`).

Everything above the units that makes Verilog or a Verilated model goes
through this package; it imports nothing of the machine itself.
"""
