"""HBM and DDR: word-interleaved channels behind a request/response port."""
