"""Text from users and models, made safe to print on a terminal.

A prompt, a file name or a model's text can hold control characters: ESC
starts the escape sequences that move the cursor, clear the screen, retitle
the window or (on some terminals) write files; CR and backspace overwrite
what was printed; a newline splits an error's one line in two.  The CLI
therefore prints such text escaped, the way Python's repr escapes it
(ESC as \\x1b, a newline as \\n):

  shown(text)        for messages and status lines: every control
                     character is escaped, newline and tab too, so the
                     message stays one line;
  stream_text(text)  for the generated text on stdout (the product): the
                     same, except that newline and tab stay as they are so
                     that the text keeps its lines.

Control characters are Unicode category Cc: C0 (U+0000..U+001F), DEL
(U+007F) and C1 (U+0080..U+009F, where U+009B is a one-character CSI).
Messages also escape the format characters (category Cf), as repr does
(U+202E as \\u202e): a right-to-left override or isolate (U+202A..U+202E,
U+2066..U+2069) reorders the rest of the line, so an error could show a
file name or prompt other than the one given, and zero-width ones hide
what the text really holds.  The streamed text keeps them: a model's text
joins emoji with U+200D and marks right-to-left words with U+200F.
Everything else, any printable Unicode, is kept.  In messages, a byte of an
argument or file name that is not UTF-8 (which Python carries as a lone
surrogate, U+DC80..U+DCFF) is shown as that byte, \\xff.  A backslash is not
doubled, so the escaped text reads as the original where it had none.
"""

import re
import unicodedata

_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# Every character a message may escape is outside printable ASCII; which of
# them are format characters is unicodedata's to say (it follows Python's
# Unicode version), so the match is wide and `_escape_shown` decides.
_NOT_PRINTABLE_ASCII = re.compile("[^\x20-\x7e]")
_CONTROLS_BUT_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(m):
  c = m.group()
  code = ord(c) - 0xdc00 if 0xdc80 <= ord(c) <= 0xdcff else ord(c)
  if code > 0xffff:
    return f"\\U{code:08x}"
  return _NAMED.get(c) or (f"\\x{code:02x}" if code <= 0xff else f"\\u{code:04x}")


def _escape_shown(m):
  # (and in one-line messages the lone surrogates by which Python carries the
  # bytes of a file name or argument that are not UTF-8: shown as those bytes)
  c = m.group()
  if unicodedata.category(c) in ("Cc", "Cf") or "\udc80" <= c <= "\udcff":
    return _escape(m)
  return c


def shown(text) -> str:
  """`text` (str() of anything) on one line, its control and format
  characters escaped."""
  return _NOT_PRINTABLE_ASCII.sub(_escape_shown, str(text))


def stream_text(text) -> str:
  """Generated text for stdout: control characters escaped except newline
  and tab."""
  return _CONTROLS_BUT_LINES.sub(_escape, text)
