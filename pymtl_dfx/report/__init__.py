"""`dfx report`: the paper's figures from the performance model (issue #12
item 5).  `plan` says which generations and steps each figure needs,
`compute` times them (`perf.sampled`, cached), `figures` draws them and
`summary` writes the Markdown page that embeds them."""
