"""The on-disk format of a compiled DFX program: metadata + named arrays.

One file holds everything the compiler produces for an appliance: per-core
memory images (`core0/hbm`, `core0/ddr`, ...: FP16 arrays, hundreds of MB
for big models), instruction streams (`|u1` arrays of 16-byte words, as
`isa.codec.program_to_bytes` lays them out) and a JSON metadata object
(configs, symbol table, padding statistics).  Every simulation level, and
later the FPGA host, reads this one format.

    write_image(path, meta, sections)      atomic: temp file + os.replace
                                           (`pymtl_dfx.atomic`)
    img = read_image(path, mmap=True, verify=None)
    img.meta, img.version, img.sections, img["core0/hbm"], "x" in img
    img["core9/hbm"]  ->  KeyError listing the sections the image has

Byte layout (version 1).  All integers are unsigned little-endian; there is
no padding between fields.

  Header, 40 bytes:

  | offset | size | type  | field                                            |
  |--------|------|-------|--------------------------------------------------|
  |      0 |    8 | bytes | magic 89 44 46 58 49 4D 47 0A  (b"\\x89DFXIMG\\n") |
  |      8 |    4 | u32   | version (1)                                      |
  |     12 |    4 | u32   | flags: none defined in v1, written 0; a reader   |
  |        |      |       | rejects any bit it does not know                 |
  |     16 |    8 | u64   | meta_len: bytes of the metadata JSON             |
  |     24 |    8 | u64   | table_len: bytes of the section table            |
  |     32 |    4 | u32   | section_count                                    |
  |     36 |    4 | u32   | header_crc: CRC-32 of bytes [0, 36) followed by  |
  |        |      |       | bytes [40, 40 + meta_len + table_len)            |

  Then, back to back:

  | offset             | size      | content                                 |
  |--------------------|-----------|-----------------------------------------|
  | 40                 | meta_len  | metadata: one JSON object, UTF-8        |
  | 40 + meta_len      | table_len | section_count table entries, in order   |
  | ...                |           | zero bytes up to the first payload      |
  | entry.offset       | nbytes    | each payload; zero bytes between them   |

  Section table entry, 24 + 8 * ndim + name_len + dtype_len bytes:

  | offset | size      | type     | field                                    |
  |--------|-----------|----------|------------------------------------------|
  |      0 |         8 | u64      | offset: absolute file offset of the      |
  |        |           |          | payload, a multiple of 4096; 0 when      |
  |        |           |          | nbytes is 0 (an empty section)           |
  |      8 |         8 | u64      | nbytes = prod(shape) * itemsize(dtype)   |
  |     16 |         4 | u32      | crc32 of the nbytes payload bytes        |
  |     20 |         2 | u16      | name_len                                 |
  |     22 |         1 | u8       | dtype_len                                |
  |     23 |         1 | u8       | ndim (0 for a scalar)                    |
  |     24 |  8 * ndim | u64[ndim]| shape                                    |
  |    ... |  name_len | UTF-8    | name, e.g. "core0/hbm"; unique           |
  |    ... | dtype_len | ASCII    | numpy dtype.str, e.g. "<f2", "|u1", "<i4"|

  A payload is the array's elements in C (row-major) order, each in the byte
  order its dtype string gives ("<" little-endian, "|" single byte).  The
  writer places payloads in table order, each at the first multiple of 4096
  after the previous one, so that every payload can be memory-mapped; the
  file ends with the last payload.  Readers must not rely on that order,
  only on: payloads never overlap each other or bytes
  [0, 40 + meta_len + table_len), and the file is at least as long as the
  end of every payload (bytes after the last one are ignored).

  CRC-32 is the IEEE 802.3 one (reflected polynomial 0xEDB88320, initial
  value and final XOR 0xFFFFFFFF), i.e. zlib.crc32; it is 0 for no bytes.

Checking.  `read_image` always checks the magic, version, flags, lengths,
metadata, section table and header_crc; problems raise `ImageFormatError`
naming the file, what is wrong and where.  Payload CRCs are checked when
`verify` is true.  The default, verify=None, checks them for files smaller
than VERIFY_LIMIT (64 MiB) only, because checking reads every byte and a
large mapped image should open without touching its payloads; pass
verify=True to check a large file (e.g. once, after copying it to the host).

Metadata is JSON, so it round-trips exactly only when it is built from dict
(with str keys), list, str, int, finite float, bool and None.  Tuples are
written as lists and numpy scalars as Python numbers; anything else (sets,
arrays, NaN, non-str keys) is refused before the file is touched.
"""

from collections.abc import Mapping
import difflib
import json
import math
import mmap as _mmap
import os
import struct
import zlib

import numpy as np

from ..atomic import atomic_open
from ..files import open_input, parse_json, type_name
from ..printable import shown

FORMAT_VERSION = 1
SUPPORTED_VERSIONS = (1,)
# The 0x89 byte (not ASCII) and the trailing newline make a file that went
# through a 7-bit or newline-translating transfer fail the magic check.
MAGIC = b"\x89DFXIMG\n"
ALIGNMENT = 4096
VERIFY_LIMIT = 64 << 20
KNOWN_FLAGS = 0

_HEADER = struct.Struct("<8sIIQQII")
HEADER_SIZE = _HEADER.size
_CRC_COVERED = HEADER_SIZE - 4
_ENTRY = struct.Struct("<QQIHBB")
_MISSING_LISTED = 20
# A corrupt ndim must fail as a format error, not inside numpy.
_MAX_DIMS = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32

assert HEADER_SIZE == 40 and _ENTRY.size == 24


class ImageFormatError(ValueError):
  """A DFX image cannot be written or read; the message names the file,
  what is wrong and where."""


def _fail(path, problem):
  raise ImageFormatError(f"{shown(path)}: {problem}")


def _align(n):
  return -(-n // ALIGNMENT) * ALIGNMENT


def _byte_view(arr):
  """The bytes of a C-contiguous array without copying them."""
  if arr.nbytes == 0:
    return memoryview(b"")
  return memoryview(arr.reshape(-1).view(np.uint8))


def _crc32(arr):
  return zlib.crc32(_byte_view(arr))


# --- writing --------------------------------------------------------------

def _plain_json(obj, where, path, active):
  """obj as plain JSON values, or an error naming where the bad value is."""
  if obj is None or isinstance(obj, (bool, str, int)):
    return obj
  if isinstance(obj, float):
    if not math.isfinite(obj):
      _fail(path, f"{where} is {obj}, which JSON cannot represent")
    return obj
  if isinstance(obj, (np.bool_, np.integer, np.floating)):
    return _plain_json(obj.item(), where, path, active)
  if isinstance(obj, (dict, list, tuple)):
    if id(obj) in active:
      _fail(path, f"{where} contains itself")
    active.add(id(obj))
    try:
      if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
          if not isinstance(k, str):
            _fail(path, f"{where} has key {k!r} of type "
                  f"{type(k).__name__}; JSON object keys must be str")
          out[k] = _plain_json(v, f"{where}[{k!r}]", path, active)
        return out
      return [_plain_json(v, f"{where}[{i}]", path, active)
              for i, v in enumerate(obj)]
    finally:
      active.discard(id(obj))
  hint = (" (put arrays in sections, not in meta)"
          if isinstance(obj, np.ndarray) else "")
  _fail(path, f"{where} is a {type(obj).__name__}, which is not "
        f"JSON-serialisable{hint}")


def _encode_meta(path, meta):
  if not isinstance(meta, dict):
    _fail(path, f"meta must be a dict, not {type(meta).__name__}")
  plain = _plain_json(meta, "meta", path, set())
  return json.dumps(plain, ensure_ascii=False, allow_nan=False,
                    separators=(",", ":")).encode("utf-8")


def as_stored(meta):
  """`meta` as read_image returns it after write_image wrote it (tuples as
  lists, numpy scalars as numbers): what a reader compares a file with."""
  return json.loads(_encode_meta("<meta>", {"meta": meta}))["meta"]


def _check_dtype(dt):
  if dt.hasobject:
    return "holds Python objects, which have no bytes to store"
  if dt.fields is not None or dt.subdtype is not None:
    return f"has the structured dtype {dt}, which dtype.str cannot describe"
  if dt.itemsize == 0:
    return f"has the zero-size dtype {dt}"
  if np.dtype(dt.str) != dt:
    return f"has dtype {dt}, which dtype.str ({dt.str!r}) does not describe"
  return None


def _plan(path, sections):
  """[(name bytes, dtype.str bytes, C-contiguous array)]; checks the input."""
  if not isinstance(sections, Mapping):
    _fail(path, f"sections must be a dict of name -> numpy array, not "
          f"{type(sections).__name__}")
  plan = []
  for name, arr in sections.items():
    if not isinstance(name, str) or not name:
      _fail(path, f"section name {name!r} is not a non-empty str")
    what = f"section {name!r}"
    if not isinstance(arr, np.ndarray):
      _fail(path, f"{what} is a {type(arr).__name__}, not a numpy array")
    problem = _check_dtype(arr.dtype)
    if problem:
      _fail(path, f"{what} {problem}")
    try:
      name_b = name.encode("utf-8")
    except UnicodeEncodeError as e:
      _fail(path, f"{what}: name is not encodable as UTF-8 ({e.reason})")
    dtype_b = arr.dtype.str.encode("ascii")
    if len(name_b) > 0xFFFF:
      _fail(path, f"{what}: name is {len(name_b)} bytes, at most 65535")
    if len(dtype_b) > 0xFF or arr.ndim > 0xFF:
      _fail(path, f"{what}: dtype string or number of dimensions too long")
    if not arr.flags.c_contiguous:
      arr = np.ascontiguousarray(arr)
    plan.append((name_b, dtype_b, arr))
  return plan


def _table(plan, offsets, crcs):
  parts = []
  for (name_b, dtype_b, arr), off, crc in zip(plan, offsets, crcs):
    parts.append(_ENTRY.pack(off, arr.nbytes, crc, len(name_b), len(dtype_b),
                             arr.ndim))
    parts.append(struct.pack(f"<{arr.ndim}Q", *arr.shape))
    parts += [name_b, dtype_b]
  return b"".join(parts)


def _write_payload(f, arr):
  """Write arr's bytes; returns their CRC-32."""
  view = _byte_view(arr)
  f.write(view)
  return zlib.crc32(view)


def write_image(path, meta, sections):
  """Write `meta` (a JSON-able dict) and `sections` (name -> numpy array) to
  `path`, replacing it atomically.

  The file is written under a temporary name in the same directory, synced
  and renamed over `path`, so that `path` holds either its old content or
  the complete new image, even after a crash; readers that have the old
  file memory-mapped keep seeing the old data.  Bad meta or sections raise
  ImageFormatError before anything is created.  Sections keep their order.
  """
  path = os.fspath(path)
  meta_b = _encode_meta(path, meta)
  plan = _plan(path, sections)

  table_len = len(_table(plan, [0] * len(plan), [0] * len(plan)))
  offsets, pos = [], HEADER_SIZE + len(meta_b) + table_len
  for _, _, arr in plan:
    if arr.nbytes == 0:
      offsets.append(0)
    else:
      offsets.append(_align(pos))
      pos = offsets[-1] + arr.nbytes

  # atomic_open: a temporary file in the same directory, synced and renamed
  # over `path`, with the umask's mode; removed again on any exception.
  with atomic_open(path, "wb") as f:
    f.write(bytes(HEADER_SIZE))
    f.write(meta_b)
    f.write(bytes(table_len))
    pos, crcs = HEADER_SIZE + len(meta_b) + table_len, []
    for (_, _, arr), off in zip(plan, offsets):
      if arr.nbytes == 0:
        crcs.append(0)
        continue
      f.write(bytes(off - pos))
      crcs.append(_write_payload(f, arr))
      pos = off + arr.nbytes
    # The CRCs are known only now; the table goes back in its slot.
    table = _table(plan, offsets, crcs)
    head = _HEADER.pack(MAGIC, FORMAT_VERSION, KNOWN_FLAGS, len(meta_b),
                        table_len, len(plan), 0)
    hcrc = zlib.crc32(table, zlib.crc32(meta_b, zlib.crc32(
        head[:_CRC_COVERED])))
    f.seek(0)
    f.write(head[:_CRC_COVERED] + struct.pack("<I", hcrc))
    f.seek(HEADER_SIZE + len(meta_b))
    f.write(table)


# --- reading --------------------------------------------------------------

class DFXImage:
  """A read image: `meta` (dict), `sections` (name -> array, file order),
  `version` and `path`.  Indexing by section name gives the array."""

  def __init__(self, path, version, meta, sections):
    self.path = path
    self.version = version
    self.meta = meta
    self.sections = sections

  def __getitem__(self, name):
    try:
      return self.sections[name]
    except (KeyError, TypeError):
      pass
    names = list(self.sections)
    listed = ", ".join(names[:_MISSING_LISTED])
    if len(names) > _MISSING_LISTED:
      listed += f", ... ({len(names) - _MISSING_LISTED} more)"
    close = difflib.get_close_matches(str(name), names, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise KeyError(f"{self.path}: no section {name!r}; the image has "
                   f"{len(names)}: {listed or '(none)'}{hint}")

  def __iter__(self):
    return iter(self.sections)

  def __len__(self):
    return len(self.sections)

  def keys(self):
    return self.sections.keys()

  def __contains__(self, name):
    return name in self.sections

  def __repr__(self):
    return (f"DFXImage({self.path!r}, version={self.version}, "
            f"{len(self.sections)} sections, meta keys={list(self.meta)})")


def _check_start(path, head, size):
  """Magic, version and flags, the fields that say whether to read on."""
  found = head[:len(MAGIC)]
  if size == 0 or not MAGIC.startswith(found):
    what = "the file is empty" if size == 0 else f"it starts with {found!r}"
    _fail(path, f"not a DFX image: {what}, expected the magic {MAGIC!r}")
  if size < HEADER_SIZE:
    _fail(path, f"truncated inside the header: the header is {HEADER_SIZE} "
          f"bytes, the file has {size}")
  _, version, flags, meta_len, table_len, count, hcrc = _HEADER.unpack(head)
  if version not in SUPPORTED_VERSIONS:
    _fail(path, f"unsupported format version {version} (byte 8); this reader "
          f"supports version {', '.join(map(str, SUPPORTED_VERSIONS))}")
  if flags & ~KNOWN_FLAGS:
    _fail(path, f"unknown flags 0x{flags & ~KNOWN_FLAGS:08x} (byte 12); "
          f"version {version} defines none")
  return version, meta_len, table_len, count, hcrc


def _decode_meta(path, meta_b):
  where = (f"{shown(path)}: corrupt metadata JSON (bytes [{HEADER_SIZE}, "
           f"{HEADER_SIZE + len(meta_b)}))")
  # integers of any size: the format stores what write_image takes
  meta = parse_json(meta_b, where, ImageFormatError, offset=HEADER_SIZE, int_limit=None)
  if not isinstance(meta, dict):
    _fail(path, f"corrupt metadata JSON: {type_name(meta)}, not an object")
  return meta


class _Entry:
  __slots__ = ("name", "dtype", "shape", "offset", "nbytes", "crc", "at")


def _parse_table(path, table, start, count):
  def bad(problem):
    _fail(path, f"section table inconsistent: {problem}")

  if count * _ENTRY.size > len(table):
    bad(f"{count} sections need at least {count * _ENTRY.size} bytes, the "
        f"table is {len(table)} (bytes [{start}, {start + len(table)}))")
  entries, pos, seen = [], 0, set()
  for i in range(count):
    e = _Entry()
    e.at = f"entry {i} (file byte {start + pos})"
    if pos + _ENTRY.size > len(table):
      bad(f"{e.at} runs past the end of the table at byte "
          f"{start + len(table)}")
    e.offset, e.nbytes, e.crc, name_len, dtype_len, ndim = \
        _ENTRY.unpack_from(table, pos)
    if ndim > _MAX_DIMS:
      bad(f"{e.at}: {ndim} dimensions, numpy allows at most {_MAX_DIMS}")
    end = pos + _ENTRY.size + 8 * ndim + name_len + dtype_len
    if end > len(table):
      bad(f"{e.at} runs past the end of the table at byte "
          f"{start + len(table)}")
    e.shape = struct.unpack_from(f"<{ndim}Q", table, pos + _ENTRY.size)
    p = pos + _ENTRY.size + 8 * ndim
    try:
      e.name = table[p:p + name_len].decode("utf-8")
      dtype_s = table[p + name_len:end].decode("ascii")
    except UnicodeDecodeError:
      bad(f"{e.at}: name or dtype is not valid text")
    e.at = f"section {e.name!r} ({e.at})"
    if not e.name:
      bad(f"{e.at}: empty name")
    if e.name in seen:
      bad(f"{e.at}: the name appears twice")
    seen.add(e.name)
    try:
      e.dtype = np.dtype(dtype_s)
    except Exception:  # any string can be in a corrupt file
      e.dtype = None
    if (e.dtype is None or e.dtype.str != dtype_s
        or _check_dtype(e.dtype)):
      bad(f"{e.at}: {dtype_s!r} is not a storable numpy dtype string")
    expect = math.prod(e.shape) * e.dtype.itemsize
    if e.nbytes != expect:
      bad(f"{e.at}: {e.nbytes} bytes, but shape {e.shape} of {dtype_s} "
          f"needs {expect}")
    entries.append(e)
    pos = end
  if pos != len(table):
    bad(f"the {count} entries end at byte {start + pos}, the table at "
        f"{start + len(table)}")
  return entries


def _check_placement(path, entries, data_start, size):
  def bad(problem):
    _fail(path, f"section table inconsistent: {problem}")

  placed = sorted((e for e in entries if e.nbytes), key=lambda e: e.offset)
  for e in entries:
    if e.nbytes == 0 and e.offset != 0:
      bad(f"{e.at}: empty, so its offset must be 0, not {e.offset}")
  prev = None
  for e in placed:
    if e.offset % ALIGNMENT:
      bad(f"{e.at}: offset {e.offset} is not a multiple of {ALIGNMENT}")
    if e.offset < data_start:
      bad(f"{e.at}: offset {e.offset} is inside the header, metadata or "
          f"table (bytes [0, {data_start}))")
    if prev is not None and e.offset < prev.offset + prev.nbytes:
      bad(f"{e.at}: bytes [{e.offset}, {e.offset + e.nbytes}) overlap "
          f"{prev.at} (bytes [{prev.offset}, {prev.offset + prev.nbytes}))")
    prev = e
  short = [e for e in placed if e.offset + e.nbytes > size]
  if short:
    e = short[0]
    more = (f"; {len(short) - 1} later section(s) are cut off too"
            if len(short) > 1 else "")
    _fail(path, f"truncated: expected {e.nbytes} bytes for section "
          f"{e.name!r} at bytes [{e.offset}, {e.offset + e.nbytes}), the file "
          f"has {size} bytes{more}")


def read_image(path, mmap=True, verify=None):
  """Read a DFX image; returns a DFXImage.

  mmap=True maps the file and returns read-only arrays backed by it, so
  that opening costs no payload reads; mmap=False reads every section into
  fresh writable arrays.  verify: check each payload's CRC-32; None (the
  default) means True for files under VERIFY_LIMIT (64 MiB) and False for
  larger ones, which therefore need verify=True to be checked.  Everything
  other than payload bytes is checked always.  Raises ImageFormatError.
  """
  path = os.fspath(path)
  # open_input: a regular file only (a FIFO or device is refused, not waited on)
  with open_input(path, ImageFormatError) as f:
    size = os.fstat(f.fileno()).st_size
    head = f.read(HEADER_SIZE)
    version, meta_len, table_len, count, hcrc = _check_start(path, head, size)

    meta_end = HEADER_SIZE + meta_len
    table_end = meta_end + table_len
    if size < meta_end:
      _fail(path, f"truncated inside the metadata JSON: the header says it "
            f"spans bytes [{HEADER_SIZE}, {meta_end}), the file has {size} "
            f"bytes")
    if size < table_end:
      _fail(path, f"truncated inside the section table: the header says it "
            f"spans bytes [{meta_end}, {table_end}), the file has {size} bytes")
    body = f.read(meta_len + table_len)
    meta = _decode_meta(path, body[:meta_len])
    entries = _parse_table(path, body[meta_len:], meta_end, count)
    crc = zlib.crc32(body, zlib.crc32(head[:_CRC_COVERED]))
    if crc != hcrc:
      _fail(path, f"header CRC mismatch: stored 0x{hcrc:08x}, computed "
            f"0x{crc:08x} over the header, metadata and section table "
            f"(bytes [0, {table_end})); one of them is corrupt")
    _check_placement(path, entries, table_end, size)

    if verify is None:
      verify = size < VERIFY_LIMIT
    mapped = None
    if mmap and any(e.nbytes for e in entries):
      mapped = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
    sections = {}
    for e in entries:
      if e.nbytes == 0:
        arr = np.empty(e.shape, e.dtype)
      elif mapped is not None:
        arr = np.frombuffer(mapped, e.dtype, math.prod(e.shape),
                            e.offset).reshape(e.shape)
      else:
        arr = np.empty(e.shape, e.dtype)
        f.seek(e.offset)
        view, got = _byte_view(arr), 0
        while got < e.nbytes:
          n = f.readinto(view[got:])
          if not n:
            _fail(path, f"truncated while reading section {e.name!r}: got "
                  f"{got} of {e.nbytes} bytes at offset {e.offset}")
          got += n
      if mmap:
        arr.flags.writeable = False
      sections[e.name] = arr

  if verify:
    bad = []
    for e in entries:
      crc = _crc32(sections[e.name])
      if crc != e.crc:
        bad.append(f"{e.name!r} (bytes [{e.offset}, {e.offset + e.nbytes}): "
                   f"stored 0x{e.crc:08x}, computed 0x{crc:08x})")
    if bad:
      which = "section" if len(bad) == 1 else f"{len(bad)} sections"
      _fail(path, f"CRC mismatch in {which} {'; '.join(bad)}: corrupt payload")
  return DFXImage(path, version, meta, sections)
