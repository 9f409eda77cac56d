"""Tokenizers: GPT-2 byte-level BPE on a synthetic vocabulary, the byte
fallback, `load_tokenizer`'s choice, and every error case."""

import json
import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymtl_dfx.gpt2.tokenizer import (EOT_TOKEN, ByteTokenizer, GPT2Tokenizer,
                                      NoTokenizer, StreamDecoder, TokenizerError,
                                      bytes_to_unicode, has_tokenizer,
                                      load_tokenizer, pretokenize)

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


def test_bpe_results_are_cached(tok):
  assert tok.bpe("Ġthe") is tok.bpe("Ġthe") == ["Ġthe"]


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
  assert load_tokenizer(str(path), vocab_size=t.vocab_size).ranks == t.ranks


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
  assert t.encoder == tok.encoder and t.ranks == tok.ranks
  text = "the cat<|endoftext|> héllo"
  assert t.encode(text) == tok.encode(text) and t.decode(t.encode(text)) == text


def test_tokenizer_json_is_preferred(tmp_path):
  """With both, tokenizer.json is read (as transformers' fast tokenizer);
  a broken merges.txt beside it does not matter."""
  path = write_tokenizer_json(tmp_path / "hf", _vocab(), MERGES)
  (path / "vocab.json").write_text("{}")
  assert load_tokenizer(path, vocab_size=300).encode(" the") == [THE_ID]


@pytest.mark.parametrize("edits, message", [
  (dict(model__type="WordPiece"), "expected a BPE model with vocab and merges, found model type 'WordPiece'"),
  (dict(model__merges=None), "expected a BPE model with vocab and merges"),
  (dict(normalizer={"type": "NFC"}), "unsupported normalizer 'NFC'"),
  (dict(model__continuing_subword_prefix="##"), "continuing_subword_prefix '##'"),
  (dict(pre_tokenizer={"type": "Whitespace"}), "pre_tokenizer 'Whitespace' (only ByteLevel)"),
  (dict(pre_tokenizer={"type": "ByteLevel", "add_prefix_space": True}), "add_prefix_space=true"),
])
def test_tokenizer_json_unsupported(tmp_path, edits, message):
  path = write_tokenizer_json(tmp_path / "hf", _vocab(), MERGES, **edits)
  with pytest.raises(TokenizerError, match=re.escape(message)) as e:
    load_tokenizer(path, vocab_size=300)
  assert "tokenizer.json" in str(e.value)


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
