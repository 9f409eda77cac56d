"""Output paths: checked before a command loads or compiles anything.

Every path the project writes is one of two kinds:

  a file       (`dfx generate --save-image`, and each file an atomic write
               replaces: `pymtl_dfx.atomic` asks `check_target` first);
  a directory  (`--out` of verilog, fpga, report, sweep and demo, `--cache`).

The rules (docs/outputs.md), each refusal one line naming the path and why:

  - the path is not empty;
  - its last component is not a symbolic link (a file's atomic replace would
    put a plain file where the link was; a directory behind a link is not
    where the user looks): give the real path;
  - if it exists, a file output is a regular file (never a device such as
    /dev/null, a FIFO, a socket or a directory) and a directory output is a
    directory (`dfx verilog`: an empty one);
  - a file's directory exists and is writable; a directory output is made
    with its missing parents (`mkdir -p`), so its nearest existing ancestor
    must be a writable directory;
  - it is none of the files the same run reads (the model's config.json,
    model.safetensors and tokenizer files, --image), compared by device and
    inode so that hard links and `../` spellings are caught.

A refusal is an `OutputPathError` (a ValueError: exit 1, one line).
"""

import os
import pathlib
import secrets
import stat

from .files import node_kind, os_error_cause

# NAME.dfx-partial-HEX: the target's own name first, so that a user who finds
# one (after a SIGKILL or a power cut) knows whose partial write it is, and
# no glob for the real file (*.dfx, *.json) picks it up.
PARTIAL = ".dfx-partial-"


def temp_name(path) -> str:
  """A fresh temporary name next to `path`."""
  directory, base = os.path.split(os.path.abspath(os.fspath(path)))
  return os.path.join(directory, f"{base}{PARTIAL}{secrets.token_hex(6)}")


def is_partial(name) -> bool:
  """Whether a file name is one of temp_name's."""
  base, sep, tail = os.path.basename(os.fspath(name)).rpartition(PARTIAL)
  return bool(base and sep and len(tail) == 12
              and all(c in "0123456789abcdef" for c in tail))


class OutputPathError( ValueError ):
  """An output path that would destroy something or cannot be written."""


def cache_home():
  """The project's folder in the user's cache, $XDG_CACHE_HOME/pymtl_dfx
  (~/.cache when unset): what a run writes by default and keeps for the
  next one (the step cache, Verilator's builds and built models) goes
  under it, never into the current directory."""
  base = os.environ.get( "XDG_CACHE_HOME" ) or os.path.join( os.path.expanduser( "~" ), ".cache" )
  return pathlib.Path( base ) / "pymtl_dfx"


def _name( what, path ):
  return f"{what} {path}" if what else str( path )


def _lstat( path, what ):
  """os.lstat, None if nothing is there; any other failure is refused by
  its cause (a loop, a permission, a name too long, a NUL byte)."""
  try:
    return os.lstat( path )
  except ( FileNotFoundError, NotADirectoryError ):
    return None
  except ValueError:       # embedded NUL byte
    raise OutputPathError( f"{_name( what, repr( path ) )}: the path contains a NUL "
                           f"character" ) from None
  except OSError as e:
    raise OutputPathError( f"{_name( what, path )}: {_why( e )}" ) from None


def _why( e ):
  return os_error_cause( e, e.filename )


def _not_empty( path, what ):
  if path is None or os.fspath( path ) == "":
    raise OutputPathError( f"{what or 'output'}: the path is empty" )
  return os.fspath( path )


def _not_a_link( path, st, what ):
  if st is not None and stat.S_ISLNK( st.st_mode ):
    try:
      to = f" (to {os.readlink( path )})"
    except OSError:
      to = ""
    raise OutputPathError( f"{_name( what, path )}: is a symbolic link{to}; give the real "
                           f"path" )


def _not_read( path, reads, what ):
  """Refuse `path` if it is one of `reads` ({path: what it is to this run})."""
  try:
    st = os.stat( path )
  except ( OSError, ValueError ):
    return          # absent (or a dangling link, refused as a link): nothing to compare
  for src, role in reads.items():
    try:
      s = os.stat( src )
    except ( OSError, ValueError ):
      continue
    if ( s.st_dev, s.st_ino ) == ( st.st_dev, st.st_ino ):
      raise OutputPathError( f"{_name( what, path )}: is {role}, which this run reads" )


def check_target( path, what="" ):
  """The rules an atomic write needs of the file it replaces: a non-empty
  path, not a symbolic link, absent or a regular file."""
  path = _not_empty( path, what )
  st = _lstat( path, what )
  _not_a_link( path, st, what )
  if st is not None and not stat.S_ISREG( st.st_mode ):
    raise OutputPathError( f"{_name( what, path )}: is {node_kind( st.st_mode )}, not a regular "
                           f"file" )
  return path


def check_file( path, what="", reads=None ):
  """A file output (`what` is its option, for the message); `reads`:
  {path: what it is} of every file the same run reads.  Returns the path."""
  path = _not_empty( path, what )
  if path.endswith( ( os.sep, "/" ) ):
    raise OutputPathError( f"{_name( what, path )}: ends in '/', which names a directory, "
                           f"not a file" )
  _not_read( path, reads or {}, what )
  check_target( path, what )
  parent = os.path.dirname( os.path.abspath( path ) )
  up, st = _existing( parent, path, what )
  if up != parent and stat.S_ISDIR( st.st_mode ):
    raise OutputPathError( f"{_name( what, path )}: directory {parent} does not exist" )
  _writable_dir( up, st, path, what, "" )
  _can_create( up, path, what )
  return path


def check_dir( path, what="", reads=None, empty=False ):
  """A directory output, made with its parents if missing; `empty`: if it
  exists it must be empty (a command that fills a whole new directory).
  Returns the path."""
  path = _not_empty( path, what )
  _not_read( path, reads or {}, what )
  st = _lstat( path, what )
  _not_a_link( path, st, what )
  if st is not None:
    if not stat.S_ISDIR( st.st_mode ):
      raise OutputPathError( f"{_name( what, path )}: is {node_kind( st.st_mode )}, not a "
                             f"directory" )
    if empty and os.listdir( path ):
      raise OutputPathError( f"{_name( what, path )}: is a directory that is not empty "
                             f"(give a new or empty one)" )
    if not os.access( path, os.W_OK | os.X_OK ):
      raise OutputPathError( f"{_name( what, path )}: directory is not writable" )
    return path
  # missing: made with its parents, so the nearest existing ancestor must
  # be a directory we may write in
  up, st = _existing( os.path.dirname( os.path.abspath( path ) ), path, what )
  _writable_dir( up, st, path, what, "cannot create it: " )
  _can_create( up, path, what )
  return path


def _existing( d, path, what ):
  """(the nearest existing ancestor of `path`, d itself first, its stat);
  a linked directory counts as the directory it points to."""
  up = d
  while True:
    try:
      return up, os.stat( up )
    except ( FileNotFoundError, NotADirectoryError ):
      if os.path.dirname( up ) == up:
        raise OutputPathError( f"{_name( what, path )}: no existing directory above it" ) \
          from None
      up = os.path.dirname( up )
    except OSError as e:
      raise OutputPathError( f"{_name( what, path )}: {up}: {_why( e )}" ) from None


def _can_create( up, path, what ):
  """Make and remove a folder in `up`, where `path` (a file written
  atomically, beside itself) or its first missing folder will be made:
  only trying tells a file system that takes nothing new (/proc, /sys)
  from a writable one, as the mode bits let root write anywhere.  The
  trial is named as a partial write of what will be made there, and goes
  whatever happens (a signal included)."""
  import contextlib
  import errno
  first = os.path.abspath( path )
  while os.path.dirname( first ) != up:
    first = os.path.dirname( first )
  trial = temp_name( first )
  try:
    try:
      os.mkdir( trial, 0o700 )
    except OSError as e:
      why = ( "the file system there takes no new files or folders"
              if e.errno == errno.ENOENT else os_error_cause( e ) )
      raise OutputPathError( f"{_name( what, path )}: cannot create it in {up}: {why}" ) from None
  finally:
    with contextlib.suppress( OSError ):
      os.rmdir( trial )


def _writable_dir( up, st, path, what, prefix ):
  if not stat.S_ISDIR( st.st_mode ):
    raise OutputPathError( f"{_name( what, path )}: {up} is {node_kind( st.st_mode )}, not a "
                           f"directory" )
  if not os.access( up, os.W_OK | os.X_OK ):
    raise OutputPathError( f"{_name( what, path )}: {prefix}directory {up} is not writable" )


