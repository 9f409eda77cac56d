"""Reading the user's files: one rule for what can go wrong and how it is said.

Every file the project reads (a checkpoint's config.json and
model.safetensors, a compiled image, a step-cache entry) is opened through
`open_input`, which refuses anything that is not a regular file before
reading a byte: a directory, a named pipe (FIFO), a device or a socket.  It
opens with O_NONBLOCK and checks the opened file (fstat), so that a FIFO is
refused at once instead of waiting for a writer, and a file swapped for a
FIFO between a check and the open cannot block either.

Problems raise `InputFileError` (a ValueError) whose message starts with
the path and says which problem it is (`describe_os_error`): missing, a
directory, a permission problem, a symlink loop, a path through something
that is not a directory, a FIFO or a device.  No raw "[Errno 2] ..." text.

JSON (`load_json`, `parse_json`) adds one line for each way a JSON file can
be broken: not UTF-8, not JSON (with line and column), nested too deeply to
read (json raises RecursionError), and numbers no file of ours holds: NaN
and Infinity, floats that overflow to inf (1e400), integers of more
than 64 bits (10**400).  `expect` checks the type of a value inside (bool is not an
int here) and names the field by its path in the file.
"""

import errno
import json
import os
import stat

from .printable import shown


class InputFileError(ValueError):
  """A file cannot be read, or its content is malformed; the message names
  the file (and the field inside it) and the problem."""


# What a node is, in words: the one list every message about paths uses
# (inputs here, outputs in `outputs`).
_KINDS = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def node_kind(mode):
  """What a file of this st_mode is: "a regular file", "a directory", "a
  named pipe (FIFO)", "a character device", ..."""
  return next((name for test, name in _KINDS if test(mode)), "a special file")


def _kind(mode):
  """node_kind, None for a regular file."""
  return None if stat.S_ISREG(mode) else node_kind(mode)


def _not_a_file(mode):
  kind = _kind(mode)
  return kind and (f"is {kind}, not a file" if kind == "a directory"
                   else f"is {kind}, not a regular file")


def _not_a_dir_part(path):
  """The first proper prefix of `path` that exists and is not a directory."""
  parts = os.fspath(path).split(os.sep)
  for i in range(1, len(parts)):
    prefix = os.sep.join(parts[:i]) or os.sep
    try:
      if not stat.S_ISDIR(os.stat(prefix).st_mode):
        return prefix
    except OSError:
      return None
  return None


def describe_os_error(err, path=None):
  """'PATH: what is wrong' for an OSError, in words; `path` defaults to the
  error's own filename."""
  if path is None:
    # a rename or link names its target second: the user's path, where the
    # first is often a temporary name
    path = err.filename2 if err.filename2 is not None else err.filename
  why = os_error_cause(err, path)
  if path is None:
    return why
  if os.fspath(path) == "":
    return "the path is empty"
  return f"{shown(os.fspath(path))}: {why}"


def os_error_cause(err, path=None):
  """What is wrong with `path` (the file an OSError names), in words:
  "does not exist", "is a symlink loop (...)", "permission denied", ..."""
  code = err.errno
  if code == errno.ENOENT:
    why = "does not exist"
    if path is not None:
      parent = os.path.dirname(os.fspath(path))
      if parent and not os.path.lexists(parent):
        why = f"does not exist (nor does the directory {shown(parent)})"
  elif code == errno.EISDIR:
    why = "is a directory, not a file"
  elif code == errno.ENOTDIR:
    part = _not_a_dir_part(path) if path is not None else None
    why = (f"is not reachable: {shown(part)} is not a directory" if part
           else "is not reachable: a part of the path is not a directory")
  elif code == errno.ELOOP:
    why = "is a symlink loop (too many levels of symbolic links)"
  elif code in (errno.EACCES, errno.EPERM):
    why = "permission denied"
  elif code == errno.ENAMETOOLONG:
    why = "the name is too long"
  elif code == errno.ENOSPC:
    why = "no space left on the device"
  elif code == errno.EROFS:
    why = "is on a read-only file system"
  elif code == errno.EEXIST:
    # (mkdir over a file: "already exists" would read as "nothing to do")
    isdir = path is not None and os.path.isdir(os.fspath(path))
    why = "already exists" if isdir or path is None else "exists and is not a directory"
  elif code == errno.ENOTEMPTY:
    why = "is a directory that is not empty"
  elif code is not None:
    why = os.strerror(code).lower()
  else:
    why = str(err.strerror or err) or type(err).__name__
  return why


def describe_path(path):
  """'PATH: what it is' for a path that is not a regular file (or 'PATH: a
  regular file'): a directory, missing, a symlink loop, a FIFO, ..."""
  try:
    kind = _kind(os.stat(path).st_mode)
  except OSError as e:
    return describe_os_error(e, path)
  return f"{shown(os.fspath(path))}: is {kind or 'a regular file'}"


def open_input(path, error=InputFileError):
  """`path` opened for reading in binary, once it is known to be a regular
  file; anything else raises `error` (one line naming the path)."""
  path = os.fspath(path)
  if path == "":
    raise error("the path is empty")
  try:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0))
  except OSError as e:
    raise error(describe_os_error(e, path)) from None
  try:
    why = _not_a_file(os.fstat(fd).st_mode)
    if why:
      raise error(f"{shown(path)}: {why}")
    if hasattr(os, "set_blocking"):
      os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")
  except BaseException:
    os.close(fd)
    raise


def check_input(path, error=InputFileError):
  """Refuse `path` unless it is a regular file that can be opened."""
  open_input(path, error).close()


def read_bytes(path, error=InputFileError):
  with open_input(path, error) as f:
    try:
      return f.read()
    except OSError as e:
      raise error(describe_os_error(e, path)) from None


# --- JSON ---------------------------------------------------------------

# Integers a file of ours can hold: 64-bit ones, as the image format's
# widest field (a JSON integer is any length; 10**400 is not a size).
INT_LIMIT = 2**64


class _BadNumber(ValueError):
  pass


def _int(text, limit=INT_LIMIT):
  try:
    value = int(text)
  except ValueError:   # past Python's int-from-text digit limit
    value = None
  if value is None or (limit is not None and abs(value) >= limit):
    shown_text = text if len(text) <= 24 else f"{text[:12]}...({len(text)} digits)"
    raise _BadNumber(f"the integer {shown_text} is out of range (more than 64 bits)")
  return value


def _float(text):
  value = float(text)
  if value in (float("inf"), float("-inf")):
    raise _BadNumber(f"the number {text[:24]} is out of range (overflows to infinity)")
  return value


def _constant(text):
  raise _BadNumber(f"{text} is not a number a file may hold")


def parse_json(data, where, error=InputFileError, offset=0, int_limit=INT_LIMIT):
  """The JSON value in `data` (bytes or str); `where` names it in messages
  (the file, or the file and the part of it), `offset`: where `data`
  starts in the file; `int_limit`: None for integers of any size (that
  Python reads from text)."""
  if isinstance(data, bytes):
    try:
      data = data.decode("utf-8")
    except UnicodeDecodeError as e:
      raise error(f"{where}: not readable JSON: not UTF-8 at file byte {offset + e.start} "
                  f"(0x{data[e.start]:02x})") from None
  if data.startswith("\ufeff"):    # a byte-order mark is UTF-8 too
    data = data[1:]
  if not data.strip():
    raise error(f"{where}: not readable JSON: the file is empty" if not offset else
                f"{where}: not readable JSON: empty")
  try:
    return json.loads(data, parse_int=lambda t: _int(t, int_limit), parse_float=_float,
                      parse_constant=_constant)
  except json.JSONDecodeError as e:
    raise error(f"{where}: not readable JSON: {e.msg} (line {e.lineno} column "
                f"{e.colno}, character {e.pos})") from None
  except RecursionError:
    raise error(f"{where}: not readable JSON: nested too deeply") from None
  except _BadNumber as e:
    raise error(f"{where}: not readable JSON: {e}") from None


def load_json(path, error=InputFileError):
  """The JSON value in the file at `path` (a regular file: `open_input`)."""
  return parse_json(read_bytes(path, error), shown(os.fspath(path)), error)


_TYPE_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer",
               float: "a number", bool: "true or false", type(None): "null"}


def type_name(value):
  return _TYPE_NAMES.get(type(value), type(value).__name__)


def short_repr(value, limit=60):
  """repr(value) cut to `limit` characters: a message quotes a bad value,
  and a bad value can be a megabyte of nested lists."""
  try:
    text = repr(value)
  except RecursionError:
    text = f"<{type_name(value)} nested too deeply>"
  return text if len(text) <= limit else text[:limit - 3] + "..."


def expect(value, kind, where, error=InputFileError):
  """`value` if it is of JSON type `kind` (dict, list, str, int, float or
  bool; int excludes bool, float takes ints), else `error` naming `where`
  (e.g. "FILE: field 'layout'") and what it found."""
  if kind is int:
    ok = isinstance(value, int) and not isinstance(value, bool)
  elif kind is float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
  else:
    ok = isinstance(value, kind)
  if not ok:
    raise error(f"{where}: expected {_TYPE_NAMES[kind]}, found {type_name(value)}")
  return value
