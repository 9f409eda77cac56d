"""What each figure needs: the generations (model, cards, input:output)
and the positions whose steps are timed exactly (the others interpolated,
`perf.sampled`).  A model keeps one context size (`max_tokens`) in every
figure so that its timed steps are shared through the cache."""

from dataclasses import dataclass, field

from . import paper


@dataclass( frozen=True )
class Plan:
  sizes: dict                     # label -> GPT-2 preset
  cards: tuple
  max_tokens: dict                # preset -> context the model is compiled for
  breakdown_pos: int              # (a): one generation step at this position
  scaling: tuple                  # (b): (preset, input, output tokens) on every card count
  scaling_positions: dict         # {with logits: timed positions}
  xl: str                         # (c), (d): this preset on `xl_cards` cards
  xl_cards: int
  xl_positions: dict
  xl_points: tuple                # (input, output) points with a paper figure
  xl_outputs: tuple = field( default=( 1, 2, 4, 8, 16, 32, 64, 128, 256 ) )
  # the published figures set beside them (`paper`): tokens/s per card count,
  # latency ms per (input, output), sync share in percent
  scaling_paper: dict = field( default_factory=dict )
  xl_paper: dict = field( default_factory=dict )
  xl_sync_paper: float = None
  xl_attn_ffn_paper: float = None
  # the profiles set against the published figures (`validation`), and
  # the large model's shapes they are validated on: label -> preset
  validation_profiles: tuple = ( "paper", "calibrated" )
  validation_xl: dict = field( default_factory=dict )

  def scaling_steps( s ):
    """[(preset, cards, [(pos, want logits)])]: the steps of (b) alone (the
    demo's comparison with the paper)."""
    steps = sorted( ( p, w ) for w, ps in s.scaling_positions.items() for p in ps )
    return [ ( s.scaling[0], cards, steps ) for cards in s.cards ]

  def steps_needed( s ):
    """[(preset, cards, [(pos, want logits)])]: every step the report times."""
    scaling = { ( name, cards ): steps for name, cards, steps in s.scaling_steps() }
    out = []
    for name in s.sizes.values():
      for cards in s.cards:
        steps = { ( s.breakdown_pos, True ) } | set( scaling.get( ( name, cards ), () ) )
        if name == s.xl and cards == s.xl_cards:
          steps |= { ( p, w ) for w, ps in s.xl_positions.items() for p in ps }
        out.append( ( name, cards, sorted( steps ) ) )
    return out


PAPER = Plan(
  sizes={ "345M": "gpt2-medium", "774M": "gpt2-large", "1.5B": "gpt2-xl-dfx" },
  cards=( 1, 2, 4 ),
  max_tokens={ "gpt2-medium": 128, "gpt2-large": 128, "gpt2-xl-dfx": 384,
              "gpt2-xl-dfx-1600": 384 },
  breakdown_pos=95,
  scaling=( "gpt2-medium", 64, 64 ),
  scaling_positions={ False: [ 0, 31, 62 ], True: [ 63, 95, 126 ] },
  xl="gpt2-xl-dfx", xl_cards=4,
  xl_positions={ False: [ 0, 30, 62, 126 ], True: [ 31, 63, 95, 127, 255, 382 ] },
  xl_points=tuple( sorted( paper.XL_LATENCY_MS ) ),
  scaling_paper=paper.SCALING_TOKENS_PER_S,
  xl_paper=paper.XL_LATENCY_MS,
  xl_sync_paper=paper.XL_SYNC_SHARE,
  xl_attn_ffn_paper=paper.XL_ATTN_FFN_SHARE,
  validation_xl={ "1.5B (1536 wide)": "gpt2-xl-dfx", "1.5B (1600 wide)": "gpt2-xl-dfx-1600" },
)
