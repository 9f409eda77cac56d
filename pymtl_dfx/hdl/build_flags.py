"""How a Verilated model's C++ is compiled: the g++ optimisation and the
parallel jobs, read from the environment, the one definition that the build
(`verilator5`) and the cache key of a built model (`verilated_cache`) share."""

import os


def opt_level():
  """g++ optimisation of the per-cycle code: DFX_VL_OPT (e.g. -O0, -O1).
  The default's -march=native ran the d=32 1-core appliance 1.6x faster
  than -O1 or -O2 alone (37k -> 60-62k cycles/s, 2026-12-01, on a CPU with
  AVX-512: wide words in vector registers) in about the same build time,
  while the 4-core appliance, whose code is far past the caches, ran 16 %
  slower (3,253 -> 2,740 cycles/s); the library then runs only on CPUs
  like the one that built it, and ccache keys on the flag's text, so a
  ccache shared between different CPUs needs an explicit -march."""
  return os.environ.get( "DFX_VL_OPT", "-O2 -march=native" )


def jobs():
  """Parallel compiles of one model: DFX_VL_JOBS, else the CPU count."""
  return int( os.environ.get( "DFX_VL_JOBS", 0 ) ) or os.cpu_count() or 1
