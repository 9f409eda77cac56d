"""The record of a generation's timing (`perf.run` / `sampled.estimate`'s
result): what `dfx perf --json` prints and each sweep point's generation."""


def record( res, dfx, n_in, n_out ):
  """The JSON record: cycles, ms, tokens/s (output tokens over end-to-end
  latency, the paper's definition), ms per step per stage, breakdown."""
  ms = dfx.ms
  steps = { "summarization": n_in, "generation": n_out - 1 }
  total_ms = ms( res["cycles"] )
  return dict(
    cycles=res["cycles"], ms=total_ms,
    tokens_per_s=n_out / ( total_ms / 1e3 ) if total_ms else None,
    ms_per_step={ k: ( ms( v ) / steps[k] if steps[k] else None )
                  for k, v in res["stage_cycles"].items() },
    breakdown=dict( per_op_class=res["class_cycles"], per_stage=res["stage_cycles"],
                    per_step=res["step_cycles"], unit_busy=res["unit_busy"],
                    unit_stalls=res["unit_stalls"] ),
    timed_steps=res["timed_steps"], interpolated_steps=res["interpolated_steps"] )


def generation( gpt, dfx, n_in, n_out, samples=None, cache=None, jobs=1, on_done=None,
                on_start=None ):
  """`record` of a generation of n_in prompt and n_out output tokens of
  model `gpt` on `dfx`, compiled for exactly that length: `samples` steps
  of each kind timed exactly and the others interpolated (None: every
  step timed; `sampled.estimate`)."""
  from . import planned
  from .sampled import estimate
  model = planned( gpt, dfx, dfx.cores, max_tokens=n_in + n_out )
  res = estimate( model, n_in, n_out, samples, cache=cache, jobs=jobs, on_done=on_done,
                  on_start=on_start )
  return record( res, dfx, n_in, n_out )
