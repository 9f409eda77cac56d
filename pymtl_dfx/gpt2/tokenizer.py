"""Text <-> token ids for the GPT-2 demos: byte-level BPE and a byte fallback.

- `GPT2Tokenizer`: the OpenAI / Hugging Face GPT-2 byte-level BPE, read from
  a checkpoint directory's `tokenizer.json` (the `tokenizers` library's file:
  a BPE model with vocab and merges, and added tokens) or from `vocab.json`
  (token string -> id) and `merges.txt` (one merge "a b" per line, by rank;
  an optional `#version` first line).  Any text round-trips:
  `decode(encode(t)) == t`.
- `ByteTokenizer`: UTF-8 bytes as ids, for presets with random weights.
- `NoTokenizer`: a checkpoint directory without tokenizer files; text
  prompts are refused (pass token ids), ids decode as "<id>".
- `load_tokenizer(path, vocab_size)`: picks one for a checkpoint directory
  (or None) and checks it fits the model's vocabulary.
- `StreamDecoder`: text of tokens as they arrive; a UTF-8 character split
  over tokens is held until its last byte comes.

The `regex` package (and its `\\p{L}`) is not a dependency, so the GPT-2
pre-tokenisation pattern

    's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+

is matched by a hand-written scanner (`pretokenize`).  It gives the same
pieces as `regex` does, with two caveats: letters and numbers come from
`unicodedata` (Python 3.11: Unicode 14), so characters assigned in later
Unicode versions may be classed differently than by a newer `regex`; and
`\\s` is the Unicode White_Space property (what `regex` uses), not Python
`re`'s wider `str.isspace()`, which also counts U+001C..U+001F.

Problems with the files raise `TokenizerError` naming the file; the
vocabulary's and the merges' problems are listed together in one message.
"""

import codecs
import json
import numbers
import os
import unicodedata

VOCAB_FILE = "vocab.json"
MERGES_FILE = "merges.txt"
TOKENIZER_FILE = "tokenizer.json"
EOT_TOKEN = "<|endoftext|>"

# Unicode White_Space, which is `regex`'s `\s`; str.isspace() differs.
_WHITE_SPACE = frozenset(
  "\t\n\x0b\x0c\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
  + "".join(chr(c) for c in range(0x2000, 0x200b)))
# Case-sensitive, as in GPT-2: "'S" is not a contraction there either.
_CONTRACTIONS = ("'s", "'t", "'re", "'ve", "'m", "'ll", "'d")
_LETTER, _NUMBER, _SPACE, _OTHER = range(4)
# Bounds the BPE cache so that a long-running session on varied text does
# not grow without limit; typical prompts use far fewer distinct words.
_CACHE_LIMIT = 1 << 16


class TokenizerError(ValueError):
  """Vocabulary files are unusable or text cannot be tokenised; says why."""


def _summary(problems, limit=8):
  """Join problems; a wholly wrong file would otherwise list thousands."""
  more = len(problems) - limit
  return "; ".join(problems[:limit]) + (f"; and {more} more" if more > 0 else "")


def bytes_to_unicode() -> dict:
  """Byte value -> the printable character that stands for it in vocab.json.

  GPT-2's vocabulary is written in characters, not bytes, and BPE must never
  see whitespace or control characters.  Printable Latin-1 bytes stand for
  themselves; the other 68 bytes take the characters 256, 257, ... in byte
  order (so the space 0x20 is U+0120 'Ġ', the newline U+010A 'Ċ').
  """
  printable = ([*range(ord("!"), ord("~") + 1)] + [*range(ord("¡"), ord("¬") + 1)]
               + [*range(ord("®"), ord("ÿ") + 1)])
  table = {b: chr(b) for b in printable}
  shifted = 256
  for b in range(256):
    if b not in table:
      table[b] = chr(shifted)
      shifted += 1
  return table


_BYTE_TO_CHAR = bytes_to_unicode()
_CHAR_TO_BYTE = {c: b for b, c in _BYTE_TO_CHAR.items()}


def _kind(ch: str) -> int:
  if ch in _WHITE_SPACE:
    return _SPACE
  major = unicodedata.category(ch)[0]
  return _LETTER if major == "L" else _NUMBER if major == "N" else _OTHER


def pretokenize(text: str) -> list:
  """Split text into the pieces GPT-2's pattern matches (see module doc).

  The alternatives are tried in the pattern's order at each position; the
  only backtracking the pattern can do is `\\s+(?!\\S)` giving back the last
  whitespace character before a non-space, so that character (a space) can
  lead the next word.
  """
  kinds = [_kind(ch) for ch in text]
  n = len(text)
  pieces = []
  i = 0
  while i < n:
    j = next((i + len(c) for c in _CONTRACTIONS if text.startswith(c, i)), None)
    if j is None:
      # ` ?X+`: a single U+0020 (no other space) may lead a letter, number
      # or other-symbol run.
      start = i + 1 if text[i] == " " and i + 1 < n and kinds[i + 1] != _SPACE else i
      kind = kinds[start]
      j = start
      while j < n and kinds[j] == kind:
        j += 1
      if kind == _SPACE and j < n and j - i > 1:
        j -= 1    # `\s+(?!\S)`; a lone space before a word falls to `\s+`
    pieces.append(text[i:j])
    i = j
  return pieces


class GPT2Tokenizer:
  """GPT-2 byte-level BPE over `vocab` (token -> id) and ranked `merges`.

  `merges` is a sequence of (a, b) pairs, highest priority first.  Every
  byte's token and every merge's parts and result must be in `vocab`, so
  that any text encodes.  `EOT_TOKEN`, if in `vocab`, is the special token:
  the text "<|endoftext|>" encodes to its id instead of being split.
  """

  def __init__(self, vocab: dict, merges, source: str = "vocab"):
    problems = []
    id_of = {}
    for token, idx in vocab.items():
      if not isinstance(token, str) or not token or type(idx) is not int or idx < 0:
        problems.append(f"entry {token!r}: {idx!r} is not a non-empty token -> id >= 0")
      else:
        id_of[token] = idx
    owners = {}
    for token, idx in id_of.items():
      owners.setdefault(idx, []).append(token)
    problems += [f"id {idx} is shared by {', '.join(map(repr, toks))}"
                 for idx, toks in sorted(owners.items()) if len(toks) > 1]
    missing = [f"{c!r} (byte 0x{b:02x})" for b, c in _BYTE_TO_CHAR.items()
               if c not in id_of]
    if missing:
      problems.append(f"{len(missing)} of the 256 byte tokens are missing, so some "
                      f"text cannot be encoded: {', '.join(missing[:8])}"
                      + (", ..." if len(missing) > 8 else ""))
    ranks = {}
    for rank, pair in enumerate(merges):
      if len(pair) != 2 or not all(isinstance(p, str) and p for p in pair):
        problems.append(f"merge {rank} {pair!r} is not two token strings")
        continue
      pair = tuple(pair)
      if pair in ranks:
        problems.append(f"merge {rank} {' '.join(pair)!r} repeats merge {ranks[pair]}")
        continue
      absent = [t for t in (*pair, pair[0] + pair[1]) if t not in id_of]
      if absent:
        problems.append(f"merge {rank} {' '.join(pair)!r} uses tokens not in the "
                        f"vocabulary: {', '.join(map(repr, absent))}")
      ranks.setdefault(pair, rank)
    if problems:
      raise TokenizerError(f"{source}: {_summary(problems)}")

    self.encoder = id_of
    self.ranks = ranks
    self.eot_id = id_of.get(EOT_TOKEN)
    # Ids in use: the largest + 1, which the model's vocab_size must reach.
    self.vocab_size = max(id_of.values(), default=-1) + 1
    # Added tokens outside the byte alphabet decode as their own text.
    self._bytes_of = {
      idx: (bytes(_CHAR_TO_BYTE[c] for c in tok)
            if all(c in _CHAR_TO_BYTE for c in tok) else tok.encode("utf-8"))
      for tok, idx in id_of.items()}
    self._cache = {}

  @classmethod
  def from_dir(cls, path) -> "GPT2Tokenizer":
    """Read `vocab.json` and `merges.txt` from a checkpoint directory."""
    path = os.fspath(path)
    vocab_path = os.path.join(path, VOCAB_FILE)
    merges_path = os.path.join(path, MERGES_FILE)
    return cls(_read_vocab(vocab_path), _read_merges(merges_path),
               source=f"{path} ({VOCAB_FILE} + {MERGES_FILE})")

  @classmethod
  def from_tokenizer_json(cls, path) -> "GPT2Tokenizer":
    """Read a `tokenizers` `tokenizer.json` holding a byte-level BPE model.

    Merges may be "a b" strings or ["a", "b"] pairs (tokenizers >= 0.20);
    added tokens join the vocabulary.  Options that GPT-2 does not use and
    that this tokenizer does not implement (a normalizer, subword prefixes,
    a pre-tokenizer other than ByteLevel) are refused by name.
    """
    path = os.fspath(path)
    try:
      with open(path, encoding="utf-8") as f:
        data = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
      raise TokenizerError(f"{path}: not readable JSON ({e})") from None
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or model.get("type", "BPE") != "BPE" \
       or not isinstance(model.get("vocab"), dict) or not isinstance(model.get("merges"), list):
      kind = model.get("type") if isinstance(model, dict) else None
      raise TokenizerError(f"{path}: expected a BPE model with vocab and merges"
                           + (f", found model type {kind!r}" if kind else ""))
    unsupported = []
    if data.get("normalizer") is not None:
      unsupported.append(f"normalizer {data['normalizer'].get('type', '?')!r}"
                         if isinstance(data["normalizer"], dict) else "a normalizer")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
      if model.get(key):
        unsupported.append(f"{key} {model[key]!r}")
    pre = data.get("pre_tokenizer")
    if pre is not None and (not isinstance(pre, dict) or pre.get("type") != "ByteLevel"):
      unsupported.append(f"pre_tokenizer {pre.get('type') if isinstance(pre, dict) else pre!r} "
                         f"(only ByteLevel)")
    elif pre is not None and pre.get("add_prefix_space"):
      unsupported.append("pre_tokenizer add_prefix_space=true")
    if unsupported:
      raise TokenizerError(f"{path}: not GPT-2's byte-level BPE: unsupported "
                           + "; ".join(unsupported))
    merges = [m.split(" ") if isinstance(m, str) else m for m in model["merges"]]
    vocab = dict(model["vocab"])
    for added in data.get("added_tokens") or []:
      if isinstance(added, dict) and "content" in added and "id" in added:
        vocab.setdefault(added["content"], added["id"])
    return cls(vocab, merges, source=path)

  def bpe(self, piece: str) -> list:
    """Tokens for one pre-tokenised piece already in byte characters."""
    cached = self._cache.get(piece)
    if cached is not None:
      return cached
    word = list(piece)
    no_rank = len(self.ranks)
    while len(word) > 1:
      best = min(zip(word, word[1:]), key=lambda p: self.ranks.get(p, no_rank))
      if best not in self.ranks:
        break
      a, b = best
      merged = []
      k = 0
      while k < len(word):
        if k + 1 < len(word) and word[k] == a and word[k + 1] == b:
          merged.append(a + b)
          k += 2
        else:
          merged.append(word[k])
          k += 1
      word = merged
    if len(self._cache) >= _CACHE_LIMIT:
      self._cache.clear()
    self._cache[piece] = word
    return word

  def _encode_ordinary(self, text: str, ids: list):
    for piece in pretokenize(text):
      chars = "".join(_BYTE_TO_CHAR[b] for b in piece.encode("utf-8"))
      ids.extend(self.encoder[tok] for tok in self.bpe(chars))

  def encode(self, text: str) -> list:
    """Token ids for `text`; "<|endoftext|>" is one token if the vocab has it."""
    ids = []
    chunks = text.split(EOT_TOKEN) if self.eot_id is not None else [text]
    for k, chunk in enumerate(chunks):
      if k:
        ids.append(self.eot_id)
      self._encode_ordinary(chunk, ids)
    return ids

  def decode_bytes(self, ids) -> bytes:
    """The UTF-8 bytes of `ids`; unknown ids as "<id>"."""
    known = self._bytes_of
    return b"".join(known[i] if i in known else f"<{i}>".encode() for i in map(int, ids))

  def decode(self, ids) -> str:
    """Text for `ids`; broken UTF-8 shows as U+FFFD, unknown ids as "<id>".

    Unknown ids are shown rather than refused because a model's embedding
    table may be padded past the vocabulary, and a sampled padding id should
    not abort a long generation.
    """
    return self.decode_bytes(ids).decode("utf-8", errors="replace")


class ByteTokenizer:
  """UTF-8 bytes as token ids, for models without vocabulary files.

  Only byte ids < 256 have text; a model with a smaller vocabulary cannot
  take text prompts at all (pass prompt token ids instead), and generated
  ids >= 256 show as "<id>".
  """

  eot_id = None

  def __init__(self, vocab_size: int):
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, numbers.Integral) \
       or vocab_size < 1:
      raise TokenizerError(f"vocab_size must be a positive integer, got {vocab_size!r}")
    self.vocab_size = int(vocab_size)

  def encode(self, text: str) -> list:
    if self.vocab_size < 256:
      raise TokenizerError(
        f"text prompts need a vocabulary of at least 256 tokens (one per byte) "
        f"or a vocab.json + merges.txt, but this model's vocab_size is "
        f"{self.vocab_size}; give the prompt as token ids instead")
    return list(text.encode("utf-8"))

  def decode_bytes(self, ids) -> bytes:
    return b"".join(bytes([i]) if 0 <= i < 256 else f"<{i}>".encode()
                    for i in map(int, ids))

  def decode(self, ids) -> str:
    return self.decode_bytes(ids).decode("utf-8", errors="replace")


class NoTokenizer:
  """A checkpoint directory without tokenizer files: no text prompts.

  Reading a text prompt as UTF-8 bytes would give ids that mean nothing to
  a model with a real vocabulary, so `encode` refuses and says to give
  token ids; generated ids decode as "<id>".
  """

  eot_id = None

  def __init__(self, path, vocab_size: int):
    self.path = os.fspath(path)
    self.vocab_size = vocab_size

  def encode(self, text: str) -> list:
    raise TokenizerError(
      f"{self.path}: no tokenizer ({TOKENIZER_FILE}, or {VOCAB_FILE} + {MERGES_FILE}), "
      f"so text cannot be turned into token ids; give the prompt as ids with --prompt-ids")

  def decode_bytes(self, ids) -> bytes:
    return b"".join(f"<{int(i)}>".encode() for i in ids)

  def decode(self, ids) -> str:
    return self.decode_bytes(ids).decode()


class StreamDecoder:
  """Text of token ids fed one (or a few) at a time.

  `feed(ids)` returns the text completed so far; the bytes of a character
  split across tokens are held until its last byte arrives, so streamed
  text equals `tokenizer.decode(all_ids)`.  `flush()` returns what is held
  (as U+FFFD if it never completed).
  """

  def __init__(self, tokenizer):
    self.tok = tokenizer
    self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")

  def feed(self, ids) -> str:
    return self._utf8.decode(self.tok.decode_bytes(ids))

  def flush(self) -> str:
    return self._utf8.decode(b"", final=True)


def _read_vocab(path: str) -> dict:
  try:
    with open(path, encoding="utf-8") as f:
      data = json.load(f)
  except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
    raise TokenizerError(f"{path}: not readable JSON ({e})") from None
  if not isinstance(data, dict):
    raise TokenizerError(f"{path}: expected a JSON object (token -> id), "
                         f"found {type(data).__name__}")
  return data


def _read_merges(path: str) -> list:
  try:
    with open(path, encoding="utf-8") as f:
      lines = f.read().splitlines()
  except (OSError, UnicodeDecodeError) as e:
    raise TokenizerError(f"{path}: not readable text ({e})") from None
  merges, bad = [], []
  for number, line in enumerate(lines, 1):
    if (number == 1 and line.startswith("#version")) or not line.strip():
      continue
    parts = line.split()
    if len(parts) != 2:
      bad.append(f"line {number} {line!r} is not two tokens \"a b\"")
    merges.append(tuple(parts))
  if bad:
    raise TokenizerError(f"{path}: {_summary(bad)}")
  return merges


def has_tokenizer(path) -> bool:
  """Whether a checkpoint directory holds any tokenizer file."""
  return any(os.path.isfile(os.path.join(os.fspath(path), name))
             for name in (TOKENIZER_FILE, VOCAB_FILE, MERGES_FILE))


def load_tokenizer(path, vocab_size: int):
  """The tokenizer for a model: GPT-2 BPE if `path` has tokenizer files.

  `path` is a checkpoint directory or None (random-weight presets, which
  get a `ByteTokenizer`).  `tokenizer.json` is read if present (as
  transformers' fast tokenizer does), else `vocab.json` + `merges.txt`; one
  of those two alone is a broken download and raises, as does a vocabulary
  with ids past the model's `vocab_size`.  A directory with no tokenizer
  file gets a `NoTokenizer`, which refuses text prompts.
  """
  if path is None:
    return ByteTokenizer(vocab_size)
  path = os.fspath(path)
  if not os.path.isdir(path):
    raise TokenizerError(f"{path}: not a directory (expected a checkpoint "
                         f"directory, or None for a byte tokenizer)")
  if os.path.isfile(os.path.join(path, TOKENIZER_FILE)):
    return _fits(GPT2Tokenizer.from_tokenizer_json(os.path.join(path, TOKENIZER_FILE)),
                 os.path.join(path, TOKENIZER_FILE), vocab_size)
  have = {name: os.path.isfile(os.path.join(path, name))
          for name in (VOCAB_FILE, MERGES_FILE)}
  if not any(have.values()):
    return NoTokenizer(path, vocab_size)
  if not all(have.values()):
    absent = next(name for name, ok in have.items() if not ok)
    present = next(name for name, ok in have.items() if ok)
    raise TokenizerError(f"{os.path.join(path, absent)}: file not found; a GPT-2 "
                         f"tokenizer needs {VOCAB_FILE} and {MERGES_FILE}, and "
                         f"{present} alone is not enough")
  return _fits(GPT2Tokenizer.from_dir(path), os.path.join(path, VOCAB_FILE), vocab_size)


def _fits(tok, where, vocab_size):
  if tok.vocab_size > vocab_size:
    raise TokenizerError(
      f"{where}: token ids go up to {tok.vocab_size - 1}, "
      f"past the model's vocab_size of {vocab_size}; the vocabulary does not "
      f"belong to this model")
  return tok
