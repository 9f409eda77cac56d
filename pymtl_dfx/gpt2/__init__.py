"""GPT-2 for DFX: checkpoints, the FP32 reference and the DFX-numerics forward.

- `load_checkpoint` / `save_checkpoint`: Hugging Face directory layout
  (config.json + model.safetensors) <-> `GPT2Weights`; `random_weights` for
  presets without a checkpoint.
- `ReferenceModel`: float32 GPT-2 (the tolerance yardstick).
- `DFXForward`: the FP16 values DFX computes, bit for bit (`numerics` only).
- `generate` (greedy), `greedy_token`, `teacher_forced_logits`: work with either.
"""

from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .decoding import (NaNLogitsError, Sampler, decode_loop, generate, greedy_token,
                       teacher_forced_logits)
from .dfx_forward import DFXForward
from .layout import tensor_shapes
from .reference import ReferenceModel
from .weights import GPT2Weights, WeightError, random_weights

__all__ = [
  "CheckpointError", "load_checkpoint", "save_checkpoint", "NaNLogitsError",
  "generate", "greedy_token", "Sampler", "decode_loop", "teacher_forced_logits", "DFXForward",
  "tensor_shapes", "ReferenceModel", "GPT2Weights", "WeightError", "random_weights",
]
