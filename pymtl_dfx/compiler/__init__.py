"""pymtl_dfx.compiler: GPT-2 checkpoint -> per-core DFX programs and memory images."""
