"""HBM and DDR: word-interleaved channels behind a request/response port
(`msgs`), modelled at FL, CL and RTL (`ports` documents the boundary and
the host port; docs/memory.md the timing)."""
