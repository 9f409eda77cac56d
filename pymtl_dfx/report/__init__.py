"""`dfx report`: the paper's figures (breakdown, scaling, latency by
length, roofline), timed by the performance model and set beside the
published numbers.  `plan` says which generations and steps each figure needs,
`compute` times them (`perf.sampled`, cached), `figures` draws them and
`summary` writes the Markdown page that embeds them."""
