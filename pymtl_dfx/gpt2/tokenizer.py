"""Text <-> token ids for the GPT-2 demos: Hugging Face tokenizers and a byte fallback.

- `GPT2Tokenizer`: a Hugging Face `tokenizers.Tokenizer` (the reference
  implementation of `tokenizer.json` and of GPT-2's byte-level BPE), read
  from a checkpoint directory's `tokenizer.json` - every setting in it
  (normalizer, pre-tokenizer, model, post-processor templates, decoder) is
  the library's to honour - or from `vocab.json` (token string -> id) and
  `merges.txt` (one merge "a b" per line, by rank; an optional `#version`
  first line), built as GPT-2's slow tokenizer is defined: a BPE model, the
  ByteLevel pre-tokenizer (no prefix space) and decoder, and
  "<|endoftext|>" as a special token.
- `ByteTokenizer`: UTF-8 bytes as ids, for presets with random weights.
- `NoTokenizer`: a checkpoint directory without tokenizer files; text
  prompts are refused (pass token ids), ids decode as "<id>".
- `load_tokenizer(path, vocab_size)`: picks one for a checkpoint directory
  (or None) and checks it fits the model's vocabulary.
- `StreamDecoder`: text of tokens as they arrive; a UTF-8 character split
  over tokens is held until its last byte comes.

Problems with the files raise `TokenizerError` naming the file, in one
line: unreadable JSON, the library's own refusal of a tokenizer.json, and
the vocabulary's and the merges' problems (listed together).  BPE dropout
is refused rather than switched off: it makes encoding random, and
ignoring a setting of the file silently is not an option; so are
`truncation` and `padding`, which would cut or pad the prompt.
"""

import codecs
import json
import numbers
import os

VOCAB_FILE = "vocab.json"
MERGES_FILE = "merges.txt"
TOKENIZER_FILE = "tokenizer.json"
EOT_TOKEN = "<|endoftext|>"


class TokenizerError(ValueError):
  """Vocabulary files are unusable or text cannot be tokenised; says why."""


def _summary(problems, limit=8):
  """Join problems; a wholly wrong file would otherwise list thousands."""
  more = len(problems) - limit
  return "; ".join(problems[:limit]) + (f"; and {more} more" if more > 0 else "")


def _one_line(e) -> str:
  """The library's message on one line (its serde errors may span several)."""
  return " ".join(str(e).split()) or type(e).__name__


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


def _check_vocab_merges(vocab: dict, merges) -> list:
  """Problems of a GPT-2 vocab + merges, all of them, before the library
  sees them (its own message names only the first, without the file)."""
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
  return problems


class GPT2Tokenizer:
  """A `tokenizers.Tokenizer` with the interface the demos use.

  `GPT2Tokenizer(vocab, merges)` builds GPT-2's byte-level BPE over `vocab`
  (token -> id) and ranked `merges` ((a, b) pairs, highest priority first);
  every byte's token and every merge's parts and result must be in `vocab`,
  so that any text encodes.  `EOT_TOKEN`, if in `vocab`, is a special
  token: the text "<|endoftext|>" encodes to its id instead of being split.
  `from_dir` and `from_tokenizer_json` read the files.
  """

  def __init__(self, vocab: dict, merges, source: str = "vocab"):
    problems = _check_vocab_merges(vocab, merges)
    if problems:
      raise TokenizerError(f"{source}: {_summary(problems)}")
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    try:
      tk = Tokenizer(models.BPE(vocab=dict(vocab), merges=[tuple(m) for m in merges]))
    except Exception as e:   # the library raises plain Exception
      raise TokenizerError(f"{source}: {_one_line(e)}") from None
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    if EOT_TOKEN in vocab:
      tk.add_special_tokens([AddedToken(EOT_TOKEN, special=True, normalized=False)])
    self._init(tk, source)

  def _init(self, tk, source):
    self.tk = tk
    self.source = source
    self.encoder = tk.get_vocab(with_added_tokens=True)
    self.eot_id = tk.token_to_id(EOT_TOKEN)
    # Ids in use: the largest + 1, which the model's vocab_size must reach.
    self.vocab_size = max(self.encoder.values(), default=-1) + 1

  @classmethod
  def from_dir(cls, path) -> "GPT2Tokenizer":
    """Read `vocab.json` and `merges.txt` from a checkpoint directory.

    The files are parsed here (CRLF and blank lines are accepted, which the
    library's `BPE.from_file` refuses) and checked as a whole; the library
    builds the tokenizer from what they hold.
    """
    path = os.fspath(path)
    vocab_path = os.path.join(path, VOCAB_FILE)
    merges_path = os.path.join(path, MERGES_FILE)
    return cls(_read_vocab(vocab_path), _read_merges(merges_path),
               source=f"{path} ({VOCAB_FILE} + {MERGES_FILE})")

  @classmethod
  def from_tokenizer_json(cls, path) -> "GPT2Tokenizer":
    """Read a `tokenizers` `tokenizer.json`, whatever its pipeline.

    The file is read here so that unreadable JSON names it; the library
    then builds the tokenizer and its refusal (a wrong structure, an
    unknown type) becomes one line naming the file.  BPE dropout is
    refused (see the module doc).
    """
    path = os.fspath(path)
    try:
      with open(path, encoding="utf-8") as f:
        text = f.read()
      data = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
      raise TokenizerError(f"{path}: not readable JSON ({_one_line(e)})") from None
    from tokenizers import Tokenizer
    try:
      tk = Tokenizer.from_str(text)
    except Exception as e:   # the library raises plain Exception
      raise TokenizerError(f"{path}: not a tokenizer the `tokenizers` library "
                           f"accepts: {_one_line(e)}") from None
    dropout = getattr(tk.model, "dropout", None)
    if dropout:
      # The file's spelling: the library holds a float32 (0.1 -> 0.100000001).
      model = data.get("model") if isinstance(data, dict) else None
      dropout = model.get("dropout", dropout) if isinstance(model, dict) else dropout
      raise TokenizerError(
        f"{path}: model.dropout={dropout} (BPE dropout) makes tokenization random; "
        f"set it to null")
    # Batch settings of a training pipeline: they would cut or pad the
    # prompt.  transformers turns them off per call; here they are refused
    # rather than dropped without a word.
    for field, value in (("truncation", tk.truncation), ("padding", tk.padding)):
      if value is not None:
        raise TokenizerError(
          f"{path}: {field}={json.dumps(value, sort_keys=True)} would "
          f"{'cut' if field == 'truncation' else 'pad'} the prompt; set it to null")
    self = cls.__new__(cls)
    self._init(tk, path)
    return self

  def encode(self, text: str) -> list:
    """Token ids for `text`, with the special tokens the file's
    post-processor adds (GPT-2's adds none); "<|endoftext|>" is one token
    if the vocabulary has it.

    A character that BPE has no token for is refused: without an unknown
    token or byte fallback the library drops it, and the model would see
    another text.
    """
    lost = self._dropped(text)
    if lost is not None:
      raise TokenizerError(
        f"{self.source}: no token for {lost!r} (U+{ord(lost):04X}) in the prompt, which "
        f"the tokenizer would drop")
    try:
      enc = self.tk.encode(text, add_special_tokens=True)
    except Exception as e:   # e.g. WordPiece without its [UNK] in the vocabulary
      raise TokenizerError(f"{self.source}: cannot encode the prompt: {_one_line(e)}") from None
    return enc.ids

  def _dropped(self, text):
    """The first character the BPE model would silently drop, or None.

    BPE starts a word from one token per character (the subword prefix on
    all but the first, the word suffix on the last) and skips a character
    without a token when there is no unknown token or byte fallback; other
    models map such characters to their unknown token or raise.
    """
    tk, model = self.tk, self.tk.model
    if type(model).__name__ != "BPE" or model.unk_token is not None or model.byte_fallback:
      return None
    for added in tk.get_added_tokens_decoder().values():
      text = text.replace(added.content, " ")
    if tk.normalizer is not None:
      text = tk.normalizer.normalize_str(text)
    pieces = ([p for p, _ in tk.pre_tokenizer.pre_tokenize_str(text)]
              if tk.pre_tokenizer is not None else [text])
    prefix, suffix = model.continuing_subword_prefix or "", model.end_of_word_suffix or ""
    for piece in pieces:
      for k, c in enumerate(piece):
        token = (prefix if k else "") + c + (suffix if k == len(piece) - 1 else "")
        if tk.token_to_id(token) is None:
          return c
    return None

  def known(self, i: int) -> bool:
    return 0 <= i < self.vocab_size and self.tk.id_to_token(i) is not None

  def decode(self, ids) -> str:
    """Text for `ids`; broken UTF-8 shows as U+FFFD, unknown ids as "<id>".

    Unknown ids are shown rather than refused (the library would drop them)
    because a model's embedding table may be padded past the vocabulary,
    and a sampled padding id should not abort a long generation.
    """
    out, run = [], []
    for i in map(int, ids):
      if self.known(i):
        run.append(i)
        continue
      if run:
        out.append(self.tk.decode(run, skip_special_tokens=False))
        run = []
      out.append(f"<{i}>")
    if run:
      out.append(self.tk.decode(run, skip_special_tokens=False))
    return "".join(out)


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
  (as U+FFFD if it never completed).  A `GPT2Tokenizer`'s ids go through the
  library's `DecodeStream` (its decoder, whatever the file says); the byte
  tokenizers' through an incremental UTF-8 decoder.
  """

  def __init__(self, tokenizer):
    self.tok = tokenizer
    if isinstance(tokenizer, GPT2Tokenizer):
      self._held = []
      self._new_stream()
    else:
      self._utf8 = codecs.getincrementaldecoder("utf-8")(errors="replace")

  def _new_stream(self):
    from tokenizers.decoders import DecodeStream
    self._stream = DecodeStream(skip_special_tokens=False)

  def _flush_held(self) -> str:
    """What `decode` shows for ids the stream still holds (an unfinished
    character: U+FFFD), and a fresh stream."""
    text = self.tok.decode(self._held) if self._held else ""
    self._held = []
    self._new_stream()
    return text

  def feed(self, ids) -> str:
    if not isinstance(self.tok, GPT2Tokenizer):
      return self._utf8.decode(self.tok.decode_bytes(ids))
    out = []
    for i in map(int, ids):
      if not self.tok.known(i):
        out.append(self._flush_held() + f"<{i}>")
        continue
      piece = self._stream.step(self.tok.tk, i)
      if piece is None:
        self._held.append(i)
      else:
        self._held = []
        out.append(piece)
    return "".join(out)

  def flush(self) -> str:
    if not isinstance(self.tok, GPT2Tokenizer):
      return self._utf8.decode(b"", final=True)
    return self._flush_held()


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
