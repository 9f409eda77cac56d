"""Write files so that nobody ever sees one half-written.

Every file the project writes (checkpoints and their config.json, compiled
images, reports) goes through `atomic_path`, `atomic_open` or
`write_text` / `write_bytes`:

  1. the content goes to a new temporary file in the target's directory
     (same file system, so the final rename is atomic), created with O_EXCL
     and mode 0o666 so that the umask decides the permissions as for any new
     file (tempfile.mkstemp would force 0o600);
  2. it is flushed and fsync'ed, then `os.replace`d over the target;
  3. on any exception, KeyboardInterrupt included, the temporary file is
     removed and the target is left as it was (absent or the old content).

A reader (or a crash) therefore sees the old file or the whole new one.
"""

import contextlib
import os
import secrets

# Temporary names start with a dot and end in .tmp so that a listing or a
# glob for the real file never picks one up.
TMP_SUFFIX = ".tmp"


def temp_name(path) -> str:
  """A fresh temporary name next to `path`."""
  directory, base = os.path.split(os.path.abspath(os.fspath(path)))
  return os.path.join(directory, f".{base}.{secrets.token_hex(6)}{TMP_SUFFIX}")


def _create(tmp):
  # O_EXCL: never write into someone else's file.
  return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                 | getattr(os, "O_BINARY", 0), 0o666)


def _fsync_file(path):
  fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
  try:
    os.fsync(fd)
  finally:
    os.close(fd)


def fsync_dir(directory):
  """Make a rename durable; not every platform can open a directory."""
  try:
    fd = os.open(directory, os.O_RDONLY)
  except OSError:
    return
  try:
    os.fsync(fd)
  except OSError:
    pass
  finally:
    os.close(fd)


def _discard(tmp):
  try:
    os.unlink(tmp)
  except OSError:
    pass


@contextlib.contextmanager
def atomic_path(path):
  """Yield a temporary file name for a writer that wants a path (e.g.
  safetensors' save_file); on success the file replaces `path`.

  The temporary file already exists (empty, umask mode) when yielded, so
  the name is reserved; the writer may truncate or rewrite it.
  """
  path = os.fspath(path)
  tmp = temp_name(path)
  fd = _create(tmp)
  mode = os.fstat(fd).st_mode & 0o7777     # 0o666 less the umask
  os.close(fd)
  try:
    yield tmp
    # Some writers (safetensors) write their own temporary file with mode
    # 0o600 and rename it over ours: give it the umask's mode back.
    if os.stat(tmp).st_mode & 0o7777 != mode:
      os.chmod(tmp, mode)
    _fsync_file(tmp)
    os.replace(tmp, path)
  except BaseException:
    _discard(tmp)
    raise
  fsync_dir(os.path.dirname(os.path.abspath(path)))


@contextlib.contextmanager
def atomic_open(path, mode="w", encoding="utf-8", newline=None):
  """Like open(path, mode) for writing ("w" or "wb"), but the file appears
  at `path` only when the block completes without an exception."""
  if mode not in ("w", "wb"):
    raise ValueError(f"atomic_open writes whole files: mode 'w' or 'wb', not {mode!r}")
  path = os.fspath(path)
  tmp = temp_name(path)
  fd = _create(tmp)
  try:
    f = os.fdopen(fd, mode, **({} if mode == "wb" else
                               dict(encoding=encoding, newline=newline)))
  except BaseException:
    os.close(fd)
    _discard(tmp)
    raise
  try:
    with f:
      yield f
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  except BaseException:
    _discard(tmp)
    raise
  fsync_dir(os.path.dirname(os.path.abspath(path)))


def write_text(path, text: str, encoding="utf-8"):
  with atomic_open(path, "w", encoding=encoding) as f:
    f.write(text)


def write_bytes(path, data):
  with atomic_open(path, "wb") as f:
    f.write(data)
