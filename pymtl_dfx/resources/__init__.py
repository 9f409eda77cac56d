"""What a DFX core costs on the FPGA: LUTs, FFs, DSPs, BRAM and URAM from
synthesised unit numbers (`estimate`), with the vector register file's
banking (`vrf_banking`).  The sweep ranks designs by it and the kernel adds
its shims to it; it reads nothing but the configuration."""
