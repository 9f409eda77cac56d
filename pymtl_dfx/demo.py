"""`dfx demo`: DFX doing its job, in one command.

The shipped GPT-2 (pymtl_dfx/models/tiny-english) writes text from a prompt
on the modelled 4-card appliance (the functional level, so the text streams
as it is produced); the DFX-numerics reference must give the same tokens;
then the performance model (`pymtl_dfx.perf`, CL's cycles exactly, without
data) times the same steps at the kernel clock, split by operation class;
last, GPT-2 345M at 64:64 on 1, 2 and 4 cards beside the paper's tokens/s
(the steps of `dfx report`'s figure (b), timed once and then cached).
"""

import os
import time

from .models import TINY_ENGLISH

PROMPT = "There was a man"
NEW_TOKENS = 8
CORES = 4




def run_demo( prompt=PROMPT, new_tokens=NEW_TOKENS, cores=CORES, say=print, write=None,
              on_step=None, paper="compute", jobs=1, cache=None, out_dir=None,
              on_paper_step=None ):
  """Generate, check, time, then set GPT-2 345M beside the paper
  (`paper_comparison`; paper: "compute", "cached" or "skip"; cache: a
  `StepCache`, by default the user's).  `say` prints a line, `write`
  streams text (None: no streaming); `on_step(k, n)` / `on_paper_step(k,
  n)` report perf's progress.  Returns the record `dfx demo --json`
  prints."""
  from . import perf
  from .appliance.host import Host
  from .compiler.build import compile_model
  from .config import DFXConfig
  from .gpt2 import DFXForward, generate, load_checkpoint
  from .gpt2.tokenizer import StreamDecoder, load_tokenizer

  w16 = load_checkpoint( TINY_ENGLISH ).to_fp16()
  gpt = w16.config
  tok = load_tokenizer( TINY_ENGLISH, gpt.vocab_size )
  ids = tok.encode( prompt )
  dfx = DFXConfig( cores=cores )
  say( f"GPT-2 '{gpt.name}' (shipped: {gpt.n_layer} layers, {gpt.n_embd} wide, "
       f"{gpt.n_head} heads, {gpt.vocab_size}-token BPE) on {cores} modelled DFX cards "
       f"(d={dfx.d}, l={dfx.l}, {dfx.clock_mhz} MHz), greedy:" )
  t0 = time.perf_counter()
  compiled = compile_model( w16, dfx, cores, max_tokens=len( ids ) + new_tokens )
  host = Host( compiled, "func" )
  stream = StreamDecoder( tok )
  if write:
    write( stream.feed( ids ) )
  tokens = host.generate( ids, new_tokens,
                          on_token=( lambda t: write( stream.feed( [ t ] ) ) ) if write else None )
  if write:
    write( stream.flush() + "\n" )
  gen_s = time.perf_counter() - t0
  want = generate( DFXForward( w16, dfx ), ids, new_tokens )
  same = tokens == want
  say( f"  {len( tokens )} tokens in {gen_s:.1f} s on the host; "
       + ( "the same tokens as the DFX-numerics reference" if same
           else f"TOKENS DIFFER from the DFX-numerics reference {want}" ) )

  n_steps = len( ids ) + new_tokens - 1
  t0 = time.perf_counter()
  res = perf.run( compiled, ids, new_tokens, tokens=tokens[:-1],
                  on_step=( lambda pos, c: on_step( pos + 1, n_steps ) ) if on_step else None )
  perf_s = time.perf_counter() - t0
  stage = res["stage_cycles"]
  n_gen = new_tokens - 1
  per_prompt = dfx.ms( stage["summarization"] ) / len( ids )
  per_token = dfx.ms( stage["generation"] ) / n_gen if n_gen else None
  total = res["cycles"]
  shares = sorted( ( ( k, v ) for k, v in res["class_cycles"].items() if v ), key=lambda kv: -kv[1] )
  say( f"Simulated time on the appliance ({n_steps} steps, cycles exact to the CL model, "
       f"{perf_s:.1f} s to compute):" )
  say( f"  {total:,} cycles = {dfx.ms( total ):.3f} ms at {dfx.clock_mhz} MHz; "
       f"{per_prompt:.3f} ms per prompt token"
       + ( f", {per_token:.3f} ms per generated token" if per_token is not None else "" ) )
  say( "  where the time goes: " + ", ".join( f"{k} {100 * v / total:.0f}%" for k, v in shares ) )
  paper_rows = None if paper == "skip" else paper_comparison(
    say, cache, paper == "compute", jobs, on_paper_step, out_dir )
  return dict( model=gpt.name, cores=cores, prompt=prompt, prompt_ids=ids, tokens=tokens,
               text=tok.decode( tokens ), same_as_dfx_numerics=same,
               cycles=total, ms=dfx.ms( total ), ms_per_prompt_token=per_prompt,
               ms_per_generated_token=per_token, per_op_class=res["class_cycles"],
               per_stage=stage, seconds=dict( generate=round( gen_s, 3 ),
                                              perf=round( perf_s, 3 ) ),
               paper_scaling=paper_rows )


def paper_comparison( say, cache=None, compute=False, jobs=1, on_done=None, out_dir=None ):
  """GPT-2 345M at 64:64 on 1, 2 and 4 cards beside the paper's: the steps
  `dfx report` times for its figure (b), from the step cache (`cache`, by
  default the user's), the missing ones timed first when `compute` (on
  `jobs` processes; `on_done(k, n)` reports them) and kept in the cache for
  the report; without `compute` and a step missing, how to get it.
  `out_dir`: also draw the report's figure (b) there.  Returns {cards:
  tokens/s and the paper's} or None."""
  from .perf.sampled import NotCached, StepCache, default_cache_dir
  from .report import compute as report
  from .report.plan import PAPER
  what = report.scaling_label( PAPER )
  try:
    rows = report.paper_scaling( cache or StepCache( default_cache_dir() ), compute, jobs,
                                 on_done )
  except NotCached:
    say( f"GPT-2 {what} against the paper: `dfx demo` (or `dfx report --out build/report`) "
         "times its steps once (minutes of CPU; then cached, and shown here)." )
    return None
  say( f"GPT-2 {what} (input:output tokens; sampled steps, cycles exact to CL), tokens/s: "
       + "; ".join( f"{c} card{'s' if c > 1 else ''} {r['tokens_per_s']:.1f} "
                    f"(paper {r['paper_tokens_per_s']:.2f})" for c, r in sorted( rows.items() ) ) )
  if out_dir is not None:
    from . import atomic
    from .report import figures
    with atomic.made_dir( out_dir ):       # none left empty by a failed figure
      png = figures.scaling( dict( scaling=rows, labels=dict( scaling=what ) ), out_dir )
    say( f"  figure: {os.path.join( out_dir, png )} (and .svg); every figure of the paper: "
         "dfx report --out DIR" )
  return { c: dict( tokens_per_s=r["tokens_per_s"], ms=r["ms"],
                    paper_tokens_per_s=r["paper_tokens_per_s"] ) for c, r in rows.items() }
