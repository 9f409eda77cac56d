"""The DFX paper's results the report sets beside the model
(/work/shared/paper/figures.md: arXiv 2209.10797, MICRO 2022; the 1.5B
latencies as quoted by later papers)."""

# GPT-2 345M, 64 input : 64 output tokens: output tokens / end-to-end seconds
SCALING_TOKENS_PER_S = { 1: 93.10, 2: 146.25, 4: 207.56 }

# GPT-2 1.5B on 4 FPGAs: end-to-end latency in ms by (input, output) tokens
XL_LATENCY_MS = {
  ( 32, 1 ): 227, ( 32, 16 ): 330, ( 32, 256 ): 1981,
  ( 64, 1 ): 447, ( 64, 16 ): 550, ( 64, 256 ): 2201,
  ( 128, 1 ): 887, ( 128, 16 ): 991, ( 128, 256 ): 2642,
}

# GPT-2 1.5B, 4 FPGAs: shares of latency in synchronisation and in
# self-attention + FFN (percent)
XL_SYNC_SHARE = 17.3
XL_ATTN_FFN_SHARE = 72.6
