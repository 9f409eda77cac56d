"""`dfx sweep`: a design-space sweep, each point's latency and FPGA
resources, and the points no other beats on both.

`grid` turns `--grid key=v1,v2` into validated DFXConfig points (their FPGA
resources per card: `pymtl_dfx.resources`), `run` times each point's generation step (and
optionally an I:O generation) through the step cache on local processes or a
Dask cluster, `pareto` finds the points no other point beats, `figure` draws
them and `build` writes sweep.md, sweep.json and the figure."""
