"""Write files so that nobody ever sees one half-written.

Every file the project writes (checkpoints and their config.json, compiled
images, reports) goes through `atomic_path`, `atomic_open` or
`write_text` / `write_bytes`:

  1. the content goes to a new temporary file in the target's directory
     (same file system, so the final rename is atomic), created with O_EXCL
     and mode 0o666 so that the umask decides the permissions as for any new
     file (tempfile.mkstemp would force 0o600);
  2. it is flushed and fsync'ed, then `os.replace`d over the target;
  3. on any exception, KeyboardInterrupt included (and SIGTERM or SIGHUP,
     which `dfx` turns into one), the temporary file is removed and the
     target is left as it was (absent or the old content).

A reader (or a crash) therefore sees the old file or the whole new one.
The target must be absent or a regular file, and not a symbolic link
(`outputs.check_target`): replacing /dev/null or a link with a plain file
would destroy what was there.  The temporary file is `NAME.dfx-partial-HEX`
beside the target, so that one a SIGKILL leaves behind says what it is; an
OSError while writing it names the target, never the temporary name.
"""

import contextlib
import os
import secrets

from .outputs import PARTIAL, check_target, is_partial, temp_name  # noqa: F401 (named here)

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


def _as_target(e, tmp, path):
  """An OSError of the temporary file, as one of the target: the user
  never asked for the temporary name (errno keeps the subclass)."""
  if e.errno is not None and e.filename in (None, tmp) and e.filename2 in (None, tmp, path):
    return OSError(e.errno, e.strerror or os.strerror(e.errno), path)
  if tmp in str(e):
    return OSError(str(e).replace(tmp, path))
  return e


@contextlib.contextmanager
def _temporary(path):
  """The temporary name for `path`, removed on any exception (also one that
  arrives while it is being created: the name is known first) and never in
  an error message.  Yields [tmp, fd]."""
  path = check_target(path)
  tmp = temp_name(path)
  made = [tmp, None]
  try:
    try:
      made[1] = _create(tmp)
    except FileExistsError:
      tmp = None            # someone else's file: not ours to remove
      raise
    yield made
  except BaseException as e:
    if tmp is not None:
      _discard(tmp)
    new = _as_target(e, made[0], path) if isinstance(e, OSError) else e
    if new is e:
      raise
    raise new from e


@contextlib.contextmanager
def atomic_path(path):
  """Yield a temporary file name for a writer that wants a path (e.g.
  safetensors' save_file); on success the file replaces `path`.

  The temporary file already exists (empty, umask mode) when yielded, so
  the name is reserved; the writer may truncate or rewrite it.
  """
  path = os.fspath(path)
  with _temporary(path) as (tmp, fd):
    mode = os.fstat(fd).st_mode & 0o7777     # 0o666 less the umask
    os.close(fd)
    yield tmp
    # Some writers (safetensors) write their own temporary file with mode
    # 0o600 and rename it over ours: give it the umask's mode back.
    if os.stat(tmp).st_mode & 0o7777 != mode:
      os.chmod(tmp, mode)
    _fsync_file(tmp)
    os.replace(tmp, path)
  fsync_dir(os.path.dirname(os.path.abspath(path)))


@contextlib.contextmanager
def atomic_open(path, mode="w", encoding="utf-8", newline=None):
  """Like open(path, mode) for writing ("w" or "wb"), but the file appears
  at `path` only when the block completes without an exception."""
  if mode not in ("w", "wb"):
    raise ValueError(f"atomic_open writes whole files: mode 'w' or 'wb', not {mode!r}")
  path = os.fspath(path)
  with _temporary(path) as (tmp, fd):
    try:
      f = os.fdopen(fd, mode, **({} if mode == "wb" else
                                 dict(encoding=encoding, newline=newline)))
    except BaseException:
      os.close(fd)
      raise
    with f:
      yield f
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  fsync_dir(os.path.dirname(os.path.abspath(path)))


def write_text(path, text: str, encoding="utf-8"):
  with atomic_open(path, "w", encoding=encoding) as f:
    f.write(text)


def write_bytes(path, data):
  with atomic_open(path, "wb") as f:
    f.write(data)


def _umask():
  m = os.umask(0)
  os.umask(m)
  return m


def _missing(path):
  """The folders of `path` that do not exist yet, deepest first."""
  made, up = [], os.path.abspath(path)
  while not os.path.exists(up):
    made.append(up)
    up = os.path.dirname(up)
  return made


def _remove_empty(made):
  """Remove the folders of `_missing`, deepest first, while they are empty
  (one a signal kept mkdir from making is skipped)."""
  for d in made:
    try:
      os.rmdir(d)
    except FileNotFoundError:
      continue
    except OSError:
      break


@contextlib.contextmanager
def made_dir(out_dir):
  """`out_dir` made with its missing parents (`mkdir -p`) for the block to
  write its files into.  On any exception (Ctrl-C, SIGTERM, a failed
  figure) the folders this made are removed again while nothing is in them:
  a run that wrote nothing leaves no empty folder.  One that existed
  stays, and so do the files the block wrote (each whole: `write_text`)."""
  made = _missing(out_dir)
  try:
    os.makedirs(out_dir, exist_ok=True)
    yield out_dir
  except BaseException:
    _remove_empty(made)
    raise


@contextlib.contextmanager
def atomic_dir(out_dir, what="--out"):
  """A whole folder, all or nothing: yields a new private folder
  OUT.dfx-partial-HEX beside `out_dir` (which must not exist or be empty,
  `outputs.check_dir`; its missing parents are made) to fill; when the
  block completes, it gets the umask's mode and is renamed to `out_dir`.
  On any exception (Ctrl-C, SIGTERM, a failed step) that folder and the
  parents made for it are removed again, and an OSError names `out_dir`,
  never the temporary name."""
  import shutil
  from .outputs import check_dir
  out_dir = os.path.abspath(check_dir(out_dir, what, empty=True))
  parent = os.path.dirname(out_dir)
  made = _missing(parent)
  work = f"{out_dir}{PARTIAL}{secrets.token_hex(6)}"
  mine = False
  try:
    os.makedirs(parent, exist_ok=True)
    os.mkdir(work, 0o700)
    mine = True
    yield work
    os.chmod(work, 0o777 & ~_umask())
    if os.path.isdir(out_dir):
      os.rmdir(out_dir)                  # empty (checked above; refused if not)
    os.replace(work, out_dir)
  except BaseException as e:
    # nothing half-written: not the folder (mkdir may have made it just
    # before a signal landed, so it goes unless it was someone else's), nor
    # the parents made for it
    if mine or not isinstance(e, FileExistsError):
      shutil.rmtree(work, ignore_errors=True)
    _remove_empty(made)
    if isinstance(e, OSError) and work in str(e):      # name what the user asked for
      if e.errno is not None and isinstance(e.filename, str):
        raise OSError(e.errno, e.strerror, e.filename.replace(work, out_dir)) from e
      raise OSError(str(e).replace(work, out_dir)) from e
    raise
