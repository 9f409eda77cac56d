"""Tokenizers: GPT-2 byte-level BPE (Hugging Face `tokenizers`) on a
synthetic vocabulary and on the shipped model's, the ids the project's
former hand-written BPE gave (recorded below), the byte fallback,
`load_tokenizer`'s choice, tokenizer.json settings, and every error case."""

import json
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymtl_dfx.gpt2.tokenizer import (EOT_TOKEN, ByteTokenizer, GPT2Tokenizer,
                                      NoTokenizer, StreamDecoder, TokenizerError,
                                      bytes_to_unicode, has_tokenizer,
                                      load_tokenizer)
from pymtl_dfx.models import TINY_ENGLISH

BYTE_CHARS = list(bytes_to_unicode().values())
# The first merges of GPT-2's merges.txt; with the byte tokens numbered in
# table order (as GPT-2 numbers them) the ids below are GPT-2's own.
MERGES = ["Ġ t", "Ġ a", "h e", "i n", "r e", "o n", "Ġt he"]
T_ID, THE_ID, HE_ID = 256, 262, 258


def _vocab(merges=MERGES, eot=True):
  vocab = {c: i for i, c in enumerate(BYTE_CHARS)}
  for m in merges:
    vocab.setdefault(m.replace(" ", ""), len(vocab))
  if eot:
    vocab[EOT_TOKEN] = len(vocab)
  return vocab


def _write(path, vocab=None, merges=None, header="#version: 0.2\n"):
  path.mkdir(parents=True, exist_ok=True)
  if vocab is not None:
    (path / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
  if merges is not None:
    (path / "merges.txt").write_text(header + "".join(m + "\n" for m in merges),
                                     encoding="utf-8")
  return path


@pytest.fixture(scope="module")
def tok():
  return GPT2Tokenizer(_vocab(), [m.split() for m in MERGES])


def _tokens(tok, text):
  inverse = {i: t for t, i in tok.encoder.items()}
  return [inverse[i] for i in tok.encode(text)]


# --- bytes-to-unicode table ------------------------------------------------

def test_byte_table_is_printable_and_one_to_one():
  table = bytes_to_unicode()
  assert sorted(table) == list(range(256))
  assert len(set(table.values())) == 256
  assert not any(c.isspace() or not c.isprintable() for c in table.values())
  assert table[ord("!")] == "!" and table[ord("ÿ")] == "ÿ"
  assert table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ" and table[0] == "Ā"


# --- pre-tokenisation ------------------------------------------------------

_CHAR_TO_BYTE = {c: b for b, c in bytes_to_unicode().items()}


def pretokenize(text):
  """The pieces GPT-2's pre-tokenizer (the library's ByteLevel) splits
  text into, as text: each piece holds whole characters."""
  from tokenizers import pre_tokenizers
  pieces = pre_tokenizers.ByteLevel(add_prefix_space=False).pre_tokenize_str(text)
  return [bytes(_CHAR_TO_BYTE[c] for c in p).decode("utf-8") for p, _ in pieces]


@pytest.mark.parametrize("text, pieces", [
  ("Hello world's 123  x", ["Hello", " world", "'s", " 123", " ", " x"]),
  ("I'm can't we'll they've she'd you're",
   ["I", "'m", " can", "'t", " we", "'ll", " they", "'ve", " she", "'d", " you",
    "'re"]),
  ("DON'T", ["DON", "'", "T"]),                       # contractions are lower case only
  ("'sup 'll", ["'s", "up", " '", "ll"]),            # only where a match starts
  ("wait!!! ?", ["wait", "!!!", " ?"]),
  ("3.14 + 2024!", ["3", ".", "14", " +", " 2024", "!"]),
  ("a1b", ["a", "1", "b"]),
  ("  hi", [" ", " hi"]),
  ("x   ", ["x", "   "]),                            # at the end all spaces stay
  ("a\n\nb", ["a", "\n", "\n", "b"]),
  ("a\n\n b", ["a", "\n\n", " b"]),
  ("a\tb", ["a", "\t", "b"]),
  (" \u00a0x", [" ", "\u00a0", "x"]),                 # only U+0020 leads a word
  ("héllo wörld 日本語", ["héllo", " wörld", " 日本語"]),
  ("x² ½", ["x", "²", " ½"]),                         # No is a number
  ("e\u0301!", ["e", "\u0301!"]),                     # a combining mark is "other"
  ("a\x1eb", ["a", "\x1e", "b"]),                     # not White_Space (unlike re)
  ("", []),
])
def test_pretokenize_examples(text, pieces):
  assert pretokenize(text) == pieces


# Characters of every class the pattern distinguishes, plus the contraction
# letters, so that random strings exercise every alternative.
ALPHABET = ("abXYZéßĀǅʰ日本" "sStTrRvVmMlLdD" "0129²½Ⅻ٣"
            " \t\n\r\x0b\x0c\x85\xa0\u2003\u3000\u2028"
            "'!?.,-_<|>\x1e\u200b\u0301😀")


def _reference_pattern():
  """GPT-2's pattern for Python `re`, with the classes spelt out over ALPHABET.

  An independent reading of the alternation and `(?!\\S)` backtracking,
  by the regex engine, to hold the hand-written scanner against.
  """
  def kind(c, major):
    return unicodedata.category(c)[0] == major and not c.isspace()
  white = "".join(c for c in ALPHABET
                  if c in " \t\n\r\x0b\x0c\x85\xa0\u2003\u3000\u2028")
  cls = lambda chars: "[" + "".join(re.escape(c) for c in chars) + "]"
  s = cls(white)
  not_s = "[^" + s[1:]
  letters = cls(c for c in ALPHABET if kind(c, "L"))
  numbers = cls(c for c in ALPHABET if kind(c, "N"))
  other = "[^" + "".join(re.escape(c) for c in ALPHABET
                         if c in white or kind(c, "L") or kind(c, "N")) + "]"
  return re.compile(rf"'s|'t|'re|'ve|'m|'ll|'d| ?{letters}+| ?{numbers}+"
                    rf"| ?{other}+|{s}+(?!{not_s})|{s}+")


REFERENCE = _reference_pattern()


@settings(max_examples=300)
@given(st.text(alphabet=ALPHABET, max_size=40))
def test_pretokenize_matches_the_pattern(text):
  assert pretokenize(text) == REFERENCE.findall(text)


@given(st.text())
def test_pretokenize_covers_the_text(text):
  pieces = pretokenize(text)
  assert "".join(pieces) == text and all(pieces)


# --- GPT-2 BPE -------------------------------------------------------------

def test_gpt2_ids_for_bytes_and_first_merges(tok):
  assert tok.encode("!") == [0]
  assert tok.encode("\n") == [198] and tok.encode(" ") == [220]
  assert tok.encode(" the") == [THE_ID]
  assert tok.encode(" t") == [T_ID]
  assert _tokens(tok, "the then") == ["t", "he", "Ġthe", "n"]
  assert tok.vocab_size == 256 + len(MERGES) + 1


def test_merges_apply_by_rank():
  vocab = _vocab(["a b", "b c"], eot=False)
  ab_first = GPT2Tokenizer(vocab, [("a", "b"), ("b", "c")])
  bc_first = GPT2Tokenizer(vocab, [("b", "c"), ("a", "b")])
  assert _tokens(ab_first, "abc") == ["ab", "c"]
  assert _tokens(bc_first, "abc") == ["a", "bc"]


def test_merge_takes_pairs_left_to_right():
  aa = GPT2Tokenizer(_vocab(["a a"], eot=False), [("a", "a")])
  assert _tokens(aa, "aaa") == ["aa", "a"]
  assert _tokens(aa, "aaaa") == ["aa", "aa"]


def test_merges_stay_within_a_piece(tok):
  # "Ġ t" would apply across "a" / " the" only if pieces were joined
  assert _tokens(tok, "a the") == ["a", "Ġthe"]
  assert _tokens(tok, "x.the") == ["x", ".", "t", "he"]


# Ids that the project's former hand-written BPE gave, recorded before the
# switch to the `tokenizers` library: (text, ids from the shipped model's
# vocabulary, ids from the test vocabulary above).
OLD_IDS = [
  ('Hello world',
   [40, 606, 79, 1195],
   [39, 68, 75, 75, 78, 220, 86, 78, 81, 75, 67]),
  ('The quick brown fox jumps over the lazy dog.',
   [814, 2712, 432, 513, 755, 88, 547, 861, 1392, 561, 260, 659, 90, 89, 456, 71, 14],
   [51, 258, 220, 80, 84, 72, 66, 74, 220, 65, 81, 78, 86, 77, 220, 69, 78, 87, 220, 73, 84, 76, 79, 82, 220, 78, 85, 68, 81, 262, 220, 75, 64, 89, 88, 220, 67, 78, 70, 13]),
  ('h\xe9llo w\xf6rld \u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8',
   [72, 128, 103, 273, 79, 261, 128, 115, 82, 317, 221, 163, 246, 99, 163, 251, 106, 165, 104, 253, 160, 224, 107, 160, 226, 229, 160, 225, 256, 160, 225, 118, 160, 226, 231],
   [71, 127, 102, 75, 75, 78, 220, 86, 127, 114, 81, 75, 67, 220, 162, 245, 98, 162, 250, 105, 164, 103, 252, 159, 223, 106, 159, 225, 228, 159, 224, 255, 159, 224, 117, 159, 225, 230]),
  ('\u0395\u03bb\u03bb\u03b7\u03bd\u03b9\u03ba\u03ac \u0438 \u043a\u0438\u0440\u0438\u043b\u043b\u0438\u0446\u0430',
   [139, 244, 139, 120, 139, 120, 139, 116, 139, 122, 139, 118, 139, 119, 139, 106, 221, 141, 117, 221, 141, 119, 141, 117, 142, 223, 141, 117, 141, 120, 141, 120, 141, 117, 142, 229, 141, 109],
   [138, 243, 138, 119, 138, 119, 138, 115, 138, 121, 138, 117, 138, 118, 138, 105, 220, 140, 116, 220, 140, 118, 140, 116, 141, 222, 140, 116, 140, 119, 140, 119, 140, 116, 141, 228, 140, 108]),
  ('emoji \U0001f600\U0001f44d\U0001f3fd!',
   [508, 79, 74, 73, 221, 173, 254, 247, 223, 173, 254, 240, 236, 173, 254, 238, 122, 1],
   [68, 76, 78, 73, 72, 220, 172, 253, 246, 222, 172, 253, 239, 235, 172, 253, 237, 121, 0]),
  ('  leading and trailing  ',
   [221, 1714, 289, 270, 1367, 381, 289, 221, 221],
   [220, 220, 75, 68, 64, 67, 259, 70, 257, 77, 67, 256, 81, 64, 72, 75, 259, 70, 220, 220]),
  ('tab\there\nnew line\r\n\n\n   x',
   [84, 431, 198, 694, 199, 872, 87, 3904, 202, 199, 199, 199, 221, 221, 221, 88],
   [83, 64, 65, 197, 258, 260, 198, 77, 68, 86, 220, 75, 259, 68, 201, 198, 198, 198, 220, 220, 220, 87]),
  ("I'm can't we'll they've she'd you're DON'T",
   [41, 7, 77, 907, 392, 363, 7, 273, 368, 7, 306, 589, 7, 68, 287, 7, 266, 435, 47, 46, 7, 52],
   [40, 6, 76, 220, 66, 64, 77, 6, 83, 220, 86, 68, 6, 75, 75, 262, 88, 6, 85, 68, 220, 82, 258, 6, 67, 220, 88, 78, 84, 6, 260, 220, 35, 46, 45, 6, 51]),
  ('3.14 + 2024! 1234567890',
   [19, 14, 17, 20, 221, 11, 221, 18, 16, 18, 20, 1, 221, 17, 18, 19, 20, 21, 22, 23, 24, 25, 16],
   [18, 13, 16, 19, 220, 10, 220, 17, 15, 17, 19, 0, 220, 16, 17, 18, 19, 20, 21, 22, 23, 24, 15]),
  ('a<|endoftext|> the<|endoftext|>',
   [65, 0, 260, 0],
   [64, 263, 262, 263]),
  ('<|endoftext|>',
   [0],
   [263]),
  ('',
   [],
   []),
  ('x\xb2 \xbd e\u0301! a\x1eb \xa0x',
   [88, 127, 111, 221, 127, 122, 316, 137, 224, 1, 259, 219, 66, 221, 127, 255, 88],
   [87, 126, 110, 220, 126, 121, 220, 68, 136, 223, 0, 257, 218, 65, 220, 126, 254, 87]),
  ('the then there',
   [2120, 695, 453],
   [83, 258, 262, 77, 262, 260]),
  ('Once upon a time, there was a little girl named Lily.',
   [3654, 362, 1075, 259, 772, 12, 453, 377, 259, 1323, 303, 328, 76, 2319, 426, 2552, 14],
   [46, 77, 66, 68, 220, 84, 79, 261, 257, 256, 72, 76, 68, 11, 262, 260, 220, 86, 64, 82, 257, 220, 75, 72, 83, 83, 75, 68, 220, 70, 72, 81, 75, 220, 77, 64, 76, 68, 67, 220, 43, 72, 75, 88, 13]),
]


@pytest.mark.parametrize("text, shipped, small", OLD_IDS)
def test_ids_equal_the_former_tokenizer(tok, text, shipped, small):
  assert tok.encode(text) == small
  for name in ("tokenizer.json", "vocab.json"):
    folder = TINY_ENGLISH if name == "tokenizer.json" else None
    t = (load_tokenizer(TINY_ENGLISH, 4096) if folder
         else GPT2Tokenizer.from_dir(TINY_ENGLISH))
    assert t.encode(text) == shipped, name
    assert t.decode(shipped) == text


@pytest.mark.parametrize("text", [
  "", "Hello world's 123  x", "the then there", "  leading and trailing  ",
  "tab\there\nnew line\r\n", "héllo wörld", "日本語のテキスト", "emoji 😀👍🏽!",
  "Ελληνικά и кириллица", "\x00\x1f\x7f\u200b", "a" * 300,
])
def test_round_trip_examples(tok, text):
  assert tok.decode(tok.encode(text)) == text


@given(st.text())
def test_round_trip_any_text(tok, text):
  assert tok.decode(tok.encode(text)) == text


def test_end_of_text_is_one_token(tok):
  eot = tok.eot_id
  assert eot == 256 + len(MERGES)
  assert tok.encode(EOT_TOKEN) == [eot]
  ids = tok.encode("a" + EOT_TOKEN + " the" + EOT_TOKEN)
  assert ids == [tok.encoder["a"], eot, THE_ID, eot]
  assert tok.decode(ids) == "a" + EOT_TOKEN + " the" + EOT_TOKEN


def test_end_of_text_is_plain_text_without_the_token():
  plain = GPT2Tokenizer(_vocab(eot=False), [m.split() for m in MERGES])
  assert plain.eot_id is None
  assert len(plain.encode(EOT_TOKEN)) == len(EOT_TOKEN)
  assert plain.decode(plain.encode(EOT_TOKEN)) == EOT_TOKEN


def test_added_token_outside_the_byte_alphabet_decodes_as_text():
  vocab = _vocab(eot=False)
  vocab["<pad> ☃"] = len(vocab)
  t = GPT2Tokenizer(vocab, [m.split() for m in MERGES])
  assert t.decode([vocab["<pad> ☃"]]) == "<pad> ☃"


def test_decode_shows_broken_utf8_and_unknown_ids(tok):
  snowman = tok.encode("☃")
  assert len(snowman) == 3
  assert tok.decode(snowman[:2]) == "\ufffd"
  assert tok.decode([tok.encoder["a"], 5000, -1]) == "a<5000><-1>"


# --- reading files and load_tokenizer --------------------------------------

@pytest.mark.parametrize("header", ["#version: 0.2\n", ""])
def test_load_from_directory(tmp_path, header):
  path = _write(tmp_path / "ckpt", _vocab(), MERGES, header=header)
  t = load_tokenizer(path, vocab_size=50257)
  assert isinstance(t, GPT2Tokenizer)
  assert t.encode(" the") == [THE_ID]
  again = load_tokenizer(str(path), vocab_size=t.vocab_size)
  assert again.encoder == t.encoder and again.encode("the then") == t.encode("the then")


def test_merges_file_with_crlf_and_blank_lines(tmp_path):
  path = _write(tmp_path / "ckpt", _vocab())
  (path / "merges.txt").write_bytes(
    ("#version: 0.2\r\n" + "\r\n".join(MERGES) + "\r\n\r\n").encode())
  assert GPT2Tokenizer.from_dir(path).encode(" the") == [THE_ID]


def test_byte_tokenizer_without_vocab_files():
  t = load_tokenizer(None, vocab_size=50257)
  assert isinstance(t, ByteTokenizer) and t.vocab_size == 50257
  assert t.eot_id is None
  assert t.encode("hé") == [0x68, 0xc3, 0xa9]
  assert t.decode([0x68, 0xc3, 0xa9]) == "hé"


@given(st.text())
def test_byte_tokenizer_round_trip(text):
  t = ByteTokenizer(256)
  assert t.decode(t.encode(text)) == text


def test_byte_tokenizer_decode_shows_ids_past_bytes():
  t = ByteTokenizer(50257)
  assert t.decode([104, 105, 256, 50256, 0xc3]) == "hi<256><50256>\ufffd"


def test_byte_tokenizer_small_vocab_refuses_text():
  t = ByteTokenizer(64)
  with pytest.raises(TokenizerError,
                     match=r"at least 256 .*vocab_size is 64.*token ids"):
    t.encode("hi")
  assert t.decode([1, 5, 63, 64, 300]) == "\x01\x05?@<300>"


@pytest.mark.parametrize("bad", [0, -3, 2.5, "256", True, None])
def test_byte_tokenizer_bad_vocab_size(bad):
  with pytest.raises(TokenizerError, match="positive integer"):
    ByteTokenizer(bad)


# --- every error case ------------------------------------------------------

@pytest.mark.parametrize("present, absent", [("vocab.json", "merges.txt"),
                                             ("merges.txt", "vocab.json")])
def test_one_file_alone_is_an_error(tmp_path, present, absent):
  path = _write(tmp_path / "ckpt", _vocab(), MERGES)
  (path / absent).unlink()
  with pytest.raises(TokenizerError,
                     match=rf"{absent}: file not found.*{present} alone"):
    load_tokenizer(path, vocab_size=50257)


def test_path_that_is_not_a_directory(tmp_path):
  with pytest.raises(TokenizerError, match="not a directory"):
    load_tokenizer(tmp_path / "nope", vocab_size=50257)
  (tmp_path / "file").write_text("x")
  with pytest.raises(TokenizerError, match="not a directory"):
    load_tokenizer(tmp_path / "file", vocab_size=50257)


def test_vocab_larger_than_the_model(tmp_path):
  path = _write(tmp_path / "ckpt", _vocab(), MERGES)
  n = len(_vocab())
  assert load_tokenizer(path, vocab_size=n).vocab_size == n
  with pytest.raises(TokenizerError,
                     match=rf"vocab.json: token ids go up to {n - 1}, past the "
                           rf"model's vocab_size of {n - 1}"):
    load_tokenizer(path, vocab_size=n - 1)
  with pytest.raises(TokenizerError, match="vocab_size of 64"):
    load_tokenizer(path, vocab_size=64)


@pytest.mark.parametrize("content, message", [
  (b"{not json", "vocab.json: not readable JSON"),
  (b"\xff\xfe{}", "vocab.json: not readable JSON"),
  (b"[1, 2]", "vocab.json: expected a JSON object .*found list"),
])
def test_unreadable_vocab(tmp_path, content, message):
  path = _write(tmp_path / "ckpt", None, MERGES)
  (path / "vocab.json").write_bytes(content)
  with pytest.raises(TokenizerError, match=message):
    load_tokenizer(path, vocab_size=50257)


@pytest.mark.parametrize("edit, message", [
  (lambda v: v.update({"x!": -1}), r"entry 'x!': -1 is not"),
  (lambda v: v.update({"x!": "7"}), r"entry 'x!': '7' is not"),
  (lambda v: v.update({"x!": 1.0}), r"entry 'x!': 1.0 is not"),
  (lambda v: v.update({"x!": True}), r"entry 'x!': True is not"),
  (lambda v: v.update({"": 900}), r"entry '': 900 is not a non-empty token"),
  (lambda v: v.update({"x!": 5}), r"id 5 is shared by '&', 'x!'"),
  (lambda v: v.pop("Ġ"), r"1 of the 256 byte tokens are missing.*'Ġ' \(byte 0x20\)"),
])
def test_bad_vocab_entries(tmp_path, edit, message):
  vocab = _vocab()
  edit(vocab)
  path = _write(tmp_path / "ckpt", vocab, MERGES)
  with pytest.raises(TokenizerError, match=message) as err:
    load_tokenizer(path, vocab_size=50257)
  assert str(tmp_path / "ckpt") in str(err.value)


def test_all_vocab_problems_in_one_message():
  vocab = {c: i for i, c in enumerate(BYTE_CHARS[:200])}
  vocab["yy"] = -2
  with pytest.raises(TokenizerError) as err:
    GPT2Tokenizer(vocab, [])
  msg = str(err.value)
  assert "entry 'yy'" in msg and "56 of the 256 byte tokens are missing" in msg
  assert msg.endswith(", ...")


@pytest.mark.parametrize("lines, message", [
  (["Ġ t", "a b c"], r"merges.txt: line 3 'a b c' is not two tokens"),
  (["Ġ t", "abc"], r"merges.txt: line 3 'abc' is not two tokens"),
])
def test_malformed_merges_lines(tmp_path, lines, message):
  path = _write(tmp_path / "ckpt", _vocab(), lines)
  with pytest.raises(TokenizerError, match=message):
    load_tokenizer(path, vocab_size=50257)


def test_unreadable_merges(tmp_path):
  path = _write(tmp_path / "ckpt", _vocab())
  (path / "merges.txt").write_bytes(b"#version: 0.2\n\xff\xfe\n")
  with pytest.raises(TokenizerError, match="merges.txt: not readable text"):
    load_tokenizer(path, vocab_size=50257)


@pytest.mark.parametrize("merges, message", [
  (["Ġ t", "x y"], r"merge 1 'x y' uses tokens not in the vocabulary: 'xy'"),
  (["Ġ t", "Ġt zz"],
   r"merge 1 'Ġt zz' uses tokens not in the vocabulary: 'zz', 'Ġtzz'"),
  (["Ġ t", "h e", "Ġ t"], r"merge 2 'Ġ t' repeats merge 0"),
])
def test_merges_inconsistent_with_vocab(tmp_path, merges, message):
  path = _write(tmp_path / "ckpt", _vocab(), merges)
  with pytest.raises(TokenizerError, match=message):
    load_tokenizer(path, vocab_size=50257)


def test_bad_merge_pair_in_memory():
  with pytest.raises(TokenizerError,
                     match=r"merge 0 \('a',\) is not two token strings"):
    GPT2Tokenizer(_vocab(), [("a",)])


# --- tokenizer.json (the `tokenizers` library's file) ----------------------

def write_tokenizer_json(path, vocab, merges, pair_merges=False, **edits):
  """A tokenizer.json as GPT-2's on the hub: ByteLevel, BPE, EOT added;
  merges as "a b" strings, or as [a, b] pairs (tokenizers >= 0.20)."""
  path.mkdir(parents=True, exist_ok=True)
  eot = vocab.get(EOT_TOKEN)
  model_vocab = {t: i for t, i in vocab.items() if t != EOT_TOKEN}
  data = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [] if eot is None else [
      {"id": eot, "content": EOT_TOKEN, "single_word": False, "lstrip": False,
       "rstrip": False, "normalized": True, "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                      "trim_offsets": True, "use_regex": True},
    "post_processor": {"type": "ByteLevel", "add_prefix_space": True,
                       "trim_offsets": False, "use_regex": True},
    "decoder": {"type": "ByteLevel", "add_prefix_space": True,
                "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None,
              "continuing_subword_prefix": "", "end_of_word_suffix": "",
              "fuse_unk": False, "byte_fallback": False, "vocab": model_vocab,
              "merges": [m.split() if pair_merges else m for m in merges]},
  }
  for key, value in edits.items():
    where, _, field = key.partition("__")
    (data[where] if field else data)[field or where] = value
  (path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
  return path


@pytest.mark.parametrize("pairs", [False, True])
def test_tokenizer_json_alone(tmp_path, tok, pairs):
  path = write_tokenizer_json(tmp_path / "hf", _vocab(), MERGES, pair_merges=pairs)
  t = load_tokenizer(path, vocab_size=len(_vocab()))
  assert isinstance(t, GPT2Tokenizer) and t.eot_id == tok.eot_id
  assert t.encoder == tok.encoder
  text = "the cat<|endoftext|> héllo"
  assert t.encode(text) == tok.encode(text) and t.decode(t.encode(text)) == text


def test_tokenizer_json_is_preferred(tmp_path):
  """With both, tokenizer.json is read (as transformers' fast tokenizer);
  a broken merges.txt beside it does not matter."""
  path = write_tokenizer_json(tmp_path / "hf", _vocab(), MERGES)
  (path / "vocab.json").write_text("{}")
  assert load_tokenizer(path, vocab_size=300).encode(" the") == [THE_ID]


BOS_TEMPLATE = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": EOT_TOKEN, "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {EOT_TOKEN: {"id": EOT_TOKEN, "ids": [263],
                                               "tokens": [EOT_TOKEN]}}}


def _from_json(tmp_path, vocab=None, merges=MERGES, **edits):
  path = write_tokenizer_json(tmp_path / "hf", vocab or _vocab(), merges, **edits)
  return load_tokenizer(path, vocab_size=300)


def test_tokenizer_json_settings_are_honoured(tmp_path, tok):
  """Settings GPT-2 does not use change the ids as the file says (the
  library's pipeline), each against the plain file's ids."""
  assert _from_json(tmp_path).encode("e\u0301") == tok.encode("e\u0301") != tok.encode("\xe9")
  nfc = _from_json(tmp_path, normalizer={"type": "NFC"})
  assert nfc.encode("e\u0301") == tok.encode("\xe9")
  prefix = _from_json(tmp_path, pre_tokenizer={"type": "ByteLevel", "add_prefix_space": True,
                                               "trim_offsets": True, "use_regex": True})
  assert prefix.encode("the") == [THE_ID] != tok.encode("the")
  # A post-processor's template adds its special tokens to every encoding
  # (a BOS here), as `tokenizers` and transformers do.
  bos = _from_json(tmp_path, post_processor=BOS_TEMPLATE)
  assert bos.encode(" the") == [tok.eot_id, THE_ID]
  # use_regex=false: no GPT-2 pre-split, so a merge joins a letter and a
  # symbol, which the pattern keeps apart.
  vocab = _vocab(MERGES + ["e !"])
  split = _from_json(tmp_path, vocab, MERGES + ["e !"])
  whole = _from_json(tmp_path, vocab, MERGES + ["e !"],
                     pre_tokenizer={"type": "ByteLevel", "add_prefix_space": False,
                                    "trim_offsets": True, "use_regex": False})
  assert split.encode("e!") == [vocab["e"], vocab["!"]] and whole.encode("e!") == [vocab["e!"]]
  # The decoder is the file's: without one, the library joins the tokens'
  # vocabulary strings with spaces.
  raw = _from_json(tmp_path, decoder=None)
  assert raw.decode(tok.encode(" the a")) == "Ġthe Ġa"
  stream = StreamDecoder(raw)
  assert "".join(stream.feed([i]) for i in tok.encode(" the a")) + stream.flush() == "Ġthe Ġa"


def test_a_character_bpe_would_drop_is_refused(tmp_path):
  """Without ByteLevel (here a Whitespace pre-tokenizer), unknown token and
  byte fallback, the library skips a character it has no token for."""
  t = _from_json(tmp_path, pre_tokenizer={"type": "Whitespace"})
  assert t.encode("the  he") == [ord("t") - 33, HE_ID, HE_ID]     # the spaces go, by design
  with pytest.raises(TokenizerError) as e:
    t.encode("the \u2603 he")
  assert str(e.value) == (f"{tmp_path / 'hf' / 'tokenizer.json'}: no token for '\u2603' "
                          f"(U+2603) in the prompt, which the tokenizer would drop")
  assert t.encode("he" + EOT_TOKEN) == [HE_ID, t.eot_id]    # an added token is whole
  # with an unknown token the character becomes it, as the file says
  vocab = dict(_vocab(), **{"<unk>": 299})
  unk = _from_json(tmp_path, vocab, pre_tokenizer={"type": "Whitespace"},
                   model__unk_token="<unk>")
  assert unk.encode("he \u2603") == [HE_ID, 299]


@pytest.mark.parametrize("dropout", [0.1, 1.0])
def test_tokenizer_json_dropout_is_refused(tmp_path, dropout):
  with pytest.raises(TokenizerError) as e:
    _from_json(tmp_path, model__dropout=dropout)
  assert str(e.value) == (f"{tmp_path / 'hf' / 'tokenizer.json'}: model.dropout={dropout} (BPE "
                          f"dropout) makes tokenization random; set it to null")
  assert _from_json(tmp_path, model__dropout=None).encode(" the") == [THE_ID]


@pytest.mark.parametrize("field, value, verb", [
  ("truncation", {"direction": "Right", "max_length": 4, "strategy": "LongestFirst",
                  "stride": 0}, "cut"),
  ("padding", {"strategy": {"Fixed": 8}, "direction": "Right", "pad_to_multiple_of": None,
               "pad_id": 0, "pad_type_id": 0, "pad_token": "!"}, "pad"),
])
def test_tokenizer_json_truncation_and_padding_are_refused(tmp_path, field, value, verb):
  with pytest.raises(TokenizerError) as e:
    _from_json(tmp_path, **{field: value})
  msg = str(e.value)
  assert msg.startswith(f"{tmp_path / 'hf' / 'tokenizer.json'}: {field}={{")
  assert msg.endswith(f"would {verb} the prompt; set it to null")


@pytest.mark.parametrize("edits, message", [
  (dict(model__type="WordPiece"), "invalid type: null, expected a string"),
  (dict(model__merges=None), "data did not match any variant"),
  (dict(model__vocab=[1, 2]), "invalid type: sequence, expected a map"),
  (dict(pre_tokenizer={"type": "NoSuchThing"}), "enum PreTokenizerUntagged"),
  (dict(post_processor={"type": "TemplateProcessing", "single": "$A oops"}),
   "enum PostProcessorWrapper"),
  (dict(decoder=[]), ""),
])
def test_tokenizer_json_the_library_refuses(tmp_path, edits, message):
  """A file the library cannot build a tokenizer from: one line naming the
  file and the library's reason."""
  path = write_tokenizer_json(tmp_path / "hf", _vocab(), MERGES, **edits)
  with pytest.raises(TokenizerError) as e:
    load_tokenizer(path, vocab_size=300)
  msg = str(e.value)
  assert msg.startswith(f"{path / 'tokenizer.json'}: not a tokenizer the `tokenizers` library "
                        f"accepts: ") and message in msg and "\n" not in msg


def test_tokenizer_json_unreadable_or_too_big(tmp_path):
  path = tmp_path / "hf"
  path.mkdir()
  (path / "tokenizer.json").write_text("{oops")
  with pytest.raises(TokenizerError, match="tokenizer.json: not readable JSON"):
    load_tokenizer(path, vocab_size=300)
  write_tokenizer_json(path, _vocab(), MERGES)
  with pytest.raises(TokenizerError, match="tokenizer.json: token ids go up to 263, past"):
    load_tokenizer(path, vocab_size=260)


def test_directory_without_tokenizer_refuses_text(tmp_path):
  path = _write(tmp_path / "weights-only")
  t = load_tokenizer(path, vocab_size=50257)
  assert isinstance(t, NoTokenizer) and not has_tokenizer(path) and t.eot_id is None
  with pytest.raises(TokenizerError, match="no tokenizer .*give the prompt as ids with --prompt-ids"):
    t.encode("hello")
  assert t.decode([5, 300]) == "<5><300>"


# --- streamed text -----------------------------------------------------------

@pytest.mark.parametrize("text", ["héllo wörld", "日本語のテキスト", "emoji 🙂🙃 end", "a\u0301"])
def test_stream_decoder_holds_split_characters(text):
  """Byte tokens split every multi-byte character: one token at a time the
  stream gives the whole text, never U+FFFD, and never a character early."""
  t = ByteTokenizer(256)
  ids = t.encode(text)
  stream = StreamDecoder(t)
  pieces = [stream.feed([i]) for i in ids] + [stream.flush()]
  assert "".join(pieces) == text and "\ufffd" not in "".join(pieces)
  assert sum(1 for p in pieces if p) == len(text)     # each char once, whole


def test_stream_decoder_with_bpe_tokens(tok):
  text = " the é the 🙂"
  stream = StreamDecoder(tok)
  assert "".join(stream.feed([i]) for i in tok.encode(text)) + stream.flush() == text


def test_stream_decoder_flushes_an_unfinished_character():
  stream = StreamDecoder(ByteTokenizer(256))
  assert stream.feed([0x68, 0xc3]) == "h"
  assert stream.flush() == "\ufffd"


@pytest.mark.parametrize("text", ["héllo 🙂 wörld", "日本語", "a<|endoftext|> the"])
def test_stream_decoder_on_the_shipped_vocabulary(text):
  """One id at a time through the library's DecodeStream equals decode,
  also with an unknown id (a padded embedding row) inside a character."""
  t = load_tokenizer(TINY_ENGLISH, 4096)
  ids = t.encode(text)
  for seq in (ids, ids[:2] + [5000] + ids[2:]):
    stream = StreamDecoder(t)
    pieces = [stream.feed([i]) for i in seq] + [stream.flush()]
    assert "".join(pieces) == t.decode(seq)
  assert t.decode(ids) == text and "<5000>" in t.decode(ids[:2] + [5000] + ids[2:])
