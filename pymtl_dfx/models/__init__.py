"""GPT-2 models shipped with the package, as Hugging Face folders.

`TINY_ENGLISH`: a 4-layer GPT-2 (128 wide, two heads of 64, 4096-token
byte-level BPE, 256 positions) trained by `tools/train_tiny_gpt2.py` on the
World English Bible (public domain); see its MODEL_CARD.md.
"""

import os

MODELS_DIR = os.path.dirname(os.path.abspath(__file__))
TINY_ENGLISH = os.path.join(MODELS_DIR, "tiny-english")
