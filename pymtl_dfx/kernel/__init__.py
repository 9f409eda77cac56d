"""The U280 kernel: the RTL core wrapped as a Vitis RTL kernel (`dfx_kernel`)."""
