"""`dfx sweep`: a design-space sweep, each point's latency and FPGA
resources, and the points no other beats on both.

`grid` turns `--grid key=v1,v2` into validated DFXConfig points, `resources`
estimates each point's FPGA resources per card from synthesised unit numbers
(the one table of them), `run` times each point's generation step (and
optionally an I:O generation) through the step cache on local processes or a
Dask cluster, `pareto` finds the points no other point beats, `figure` draws
them and `build` writes sweep.md, sweep.json and the figure."""
