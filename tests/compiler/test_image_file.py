"""The DFX image file: round trips, the documented layout, every error."""

import json
import os
import struct
import sys
import tempfile
import zlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from pymtl_dfx.compiler import image_file
from pymtl_dfx.compiler.image_file import (ALIGNMENT, FORMAT_VERSION,
                                           ImageFormatError, read_image,
                                           write_image)

META = {
  "config": {"n_layer": 2, "n_embd": 64, "name": "gpt2-tiny", "cores": 2},
  "symbols": {"wte": 0, "h.0.attn.c_attn.w": 4096, "max": 2**63},
  "padding": {"waste": 0.125, "heads": [12, 16]},
  "note": "µ-programs ✓", "flag": True, "none": None,
}


def _sections():
  rng = np.random.default_rng(0)
  return {
    "core0/hbm": rng.standard_normal((64, 32)).astype(np.float16),
    "core0/prog": rng.integers(0, 256, (5, 16), dtype=np.uint8),
    "core0/symbols": np.arange(-3, 4, dtype=np.int32),
    "core1/hbm": np.zeros((0, 32), np.float16),
    "core1/ddr": np.arange(6, dtype=np.float64).reshape(1, 2, 3),
  }


@pytest.fixture
def image(tmp_path):
  path = tmp_path / "model.dfx"
  write_image(path, META, _sections())
  return path


def _same(a, b):
  return (a.dtype == b.dtype and a.shape == b.shape
          and a.tobytes() == b.tobytes())


def _layout(path):
  """Parse the file from the docstring's tables alone, as a C++ host would."""
  data = path.read_bytes()
  magic, version, flags, meta_len, table_len, count, hcrc = \
      struct.unpack_from("<8sIIQQII", data, 0)
  meta_end, table_end = 40 + meta_len, 40 + meta_len + table_len
  entries, pos = [], meta_end
  for _ in range(count):
    off, nbytes, crc, name_len, dtype_len, ndim = \
        struct.unpack_from("<QQIHBB", data, pos)
    shape = struct.unpack_from(f"<{ndim}Q", data, pos + 24)
    p = pos + 24 + 8 * ndim
    entries.append(dict(
      at=pos, offset=off, nbytes=nbytes, crc=crc, shape=shape,
      name=data[p:p + name_len].decode("utf-8"),
      dtype=data[p + name_len:p + name_len + dtype_len].decode("ascii")))
    pos = p + name_len + dtype_len
  return dict(data=data, magic=magic, version=version, flags=flags,
              meta_len=meta_len, table_len=table_len, count=count, hcrc=hcrc,
              meta_end=meta_end, table_end=table_end, table_parsed_to=pos,
              entries={e["name"]: e for e in entries})


def _patch(path, at, new, fix_crc=True):
  """Overwrite bytes; with fix_crc, keep header_crc right so that the check
  under test, not the CRC, is what catches the change."""
  data = bytearray(path.read_bytes())
  data[at:at + len(new)] = new
  if fix_crc:
    meta_len, table_len = struct.unpack_from("<QQ", data, 16)
    crc = zlib.crc32(data[40:40 + meta_len + table_len], zlib.crc32(data[:36]))
    data[36:40] = struct.pack("<I", crc)
  path.write_bytes(bytes(data))


def _error(path, **kw):
  with pytest.raises(ImageFormatError) as e:
    read_image(path, **kw)
  msg = str(e.value)
  assert msg.startswith(f"{path}: "), msg
  return msg


# --- round trips and the layout ----------------------------------------------

@pytest.mark.parametrize("mmap", [True, False])
def test_round_trip(image, mmap):
  img = read_image(image, mmap=mmap)
  assert img.version == FORMAT_VERSION == 1
  assert img.meta == META
  want = _sections()
  assert list(img.sections) == list(want) == list(img.keys())
  for name, arr in want.items():
    assert _same(img[name], arr), name
  assert "core0/hbm" in img and "core9/hbm" not in img and len(img) == 5


def test_layout_matches_docstring(image):
  lay, want = _layout(image), _sections()
  data = lay["data"]
  assert lay["magic"] == image_file.MAGIC == b"\x89DFXIMG\n"
  assert (lay["version"], lay["flags"], lay["count"]) == (1, 0, len(want))
  assert json.loads(data[40:lay["meta_end"]].decode("utf-8")) == META
  assert lay["table_parsed_to"] == lay["table_end"]
  assert lay["hcrc"] == zlib.crc32(data[40:lay["table_end"]],
                                   zlib.crc32(data[:36]))
  ends = []
  for name, arr in want.items():
    e = lay["entries"][name]
    assert (e["dtype"], e["shape"], e["nbytes"]) == \
        (arr.dtype.str, arr.shape, arr.nbytes)
    assert e["crc"] == zlib.crc32(arr.tobytes())
    if arr.nbytes == 0:
      assert e["offset"] == 0
      continue
    assert e["offset"] % ALIGNMENT == 0 and e["offset"] >= lay["table_end"]
    assert data[e["offset"]:e["offset"] + e["nbytes"]] == arr.tobytes()
    ends.append(e["offset"] + e["nbytes"])
  assert len(data) == max(ends)
  # Padding is zeros, so images built from the same input are identical.
  used = [(0, lay["table_end"])] + [
    (e["offset"], e["offset"] + e["nbytes"]) for e in lay["entries"].values()]
  mask = np.zeros(len(data), bool)
  for lo, hi in used:
    mask[lo:hi] = True
  assert not np.frombuffer(data, np.uint8)[~mask].any()


def test_same_input_same_bytes(tmp_path):
  write_image(tmp_path / "a", META, _sections())
  write_image(tmp_path / "b", META, _sections())
  assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


def test_mmap_arrays_are_read_only(image):
  img = read_image(image)
  for name, arr in img.sections.items():
    assert not arr.flags.writeable, name
  with pytest.raises(ValueError):
    img["core0/hbm"][0, 0] = 1
  assert not img["core0/hbm"].flags.owndata
  copy = read_image(image, mmap=False)
  copy["core0/hbm"][0, 0] = 1
  assert all(a.flags.writeable for a in copy.sections.values())


def test_non_contiguous_and_big_endian_round_trip(tmp_path):
  a = np.arange(24, dtype=np.float16).reshape(4, 6)
  secs = {"t": a.T, "s": a[:, ::2], "be": np.arange(5, dtype=">i4"),
          "scalar": np.array(3.5, np.float32)}
  write_image(tmp_path / "x", {}, secs)
  img = read_image(tmp_path / "x")
  for name, arr in secs.items():
    assert img[name].dtype == arr.dtype and np.array_equal(img[name], arr)
  assert img["be"].dtype.str == ">i4"


def test_numpy_scalars_and_tuples_in_meta(tmp_path):
  write_image(tmp_path / "x", {"n": np.int64(7), "f": np.float16(0.5),
                               "b": np.bool_(True), "t": (1, (2, 3))}, {})
  meta = read_image(tmp_path / "x").meta
  assert meta == {"n": 7, "f": 0.5, "b": True, "t": [1, [2, 3]]}
  assert type(meta["n"]) is int and type(meta["b"]) is bool


_DTYPES = [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int16,
           np.int32, np.int64, np.uint64, np.bool_, np.complex64,
           np.dtype(">u2")]
_JSON = st.recursive(
  st.none() | st.booleans() | st.integers() | st.text(max_size=8)
  | st.floats(allow_nan=False, allow_infinity=False),
  lambda inner: st.lists(inner, max_size=4)
  | st.dictionaries(st.text(max_size=8), inner, max_size=4),
  max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(meta=st.dictionaries(st.text(max_size=8), _JSON, max_size=4),
       sections=st.dictionaries(
         st.text(min_size=1, max_size=12),
         st.sampled_from(_DTYPES).flatmap(lambda dt: hnp.arrays(
           dt, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0,
                                max_side=6))),
         max_size=4),
       mmap=st.booleans())
def test_random_round_trip(meta, sections, mmap):
  with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "r.dfx")
    write_image(path, meta, sections)
    img = read_image(path, mmap=mmap, verify=True)
    assert img.meta == meta
    assert list(img.sections) == list(sections)
    for name, arr in sections.items():
      assert _same(img[name], arr), name
    del img


# --- reading errors ----------------------------------------------------------

def _patch_size(path, size):
  with open(path, "r+b") as f:
    f.truncate(size)


def test_truncated_inside_header(image):
  # Shrinking only: truncate() to a larger size would append zeros.
  for size in (39, 20, 8, 3):
    _patch_size(image, size)
    msg = _error(image)
    assert "truncated inside the header" in msg and f"has {size}" in msg


def test_truncated_inside_metadata(image):
  lay = _layout(image)
  _patch_size(image, lay["meta_end"] - 7)
  msg = _error(image)
  assert "truncated inside the metadata JSON" in msg
  assert f"[40, {lay['meta_end']})" in msg
  assert f"has {lay['meta_end'] - 7}" in msg


def test_truncated_inside_table(image):
  lay = _layout(image)
  _patch_size(image, lay["table_end"] - 1)
  msg = _error(image)
  assert "truncated inside the section table" in msg
  assert f"[{lay['meta_end']}, {lay['table_end']})" in msg


@pytest.mark.parametrize("cut", ["in padding", "first payload", "last byte"])
def test_truncated_payload(image, cut):
  lay = _layout(image)
  hbm, last = lay["entries"]["core0/hbm"], lay["entries"]["core1/ddr"]
  size = {"in padding": hbm["offset"] - 100,
          "first payload": hbm["offset"] + 1000,
          "last byte": len(lay["data"]) - 1}[cut]
  _patch_size(image, size)
  msg = _error(image, verify=False)
  first = last if cut == "last byte" else hbm
  assert (f"truncated: expected {first['nbytes']} bytes for section "
          f"{first['name']!r}") in msg and f"file has {size} bytes" in msg
  if cut != "last byte":
    assert "3 later section(s) are cut off too" in msg


@pytest.mark.parametrize("start", [b"", b"PK\x03\x04 zip", b"\x93NUMPY\x01\x00",
                                   b"DFXIMG\x00\x01" + bytes(64)])
def test_not_a_dfx_image(tmp_path, start):
  path = tmp_path / "x.bin"
  path.write_bytes(start)
  msg = _error(path)
  assert "not a DFX image" in msg and repr(image_file.MAGIC) in msg
  assert ("empty" in msg) if not start else (repr(start[:8]) in msg)


def test_newer_version_is_refused(image):
  _patch(image, 8, struct.pack("<I", 2), fix_crc=False)
  msg = _error(image)
  assert "unsupported format version 2" in msg
  assert "supports version 1" in msg


def test_unknown_flag_is_refused(image):
  _patch(image, 12, struct.pack("<I", 4))
  assert "unknown flags 0x00000004" in _error(image)


def test_corrupt_metadata_json(image):
  _patch(image, 41, b"@", fix_crc=False)
  msg = _error(image)
  assert "corrupt metadata JSON" in msg and "character 1" in msg


def test_metadata_not_utf8(image):
  _patch(image, 45, b"\xff", fix_crc=False)
  assert "not UTF-8 at file byte 45" in _error(image)


def test_metadata_not_an_object(tmp_path):
  path = tmp_path / "x"
  write_image(path, {}, {})
  data = path.read_bytes()
  _patch(path, 40, b"[]")
  assert data[40:42] == b"{}"
  assert "a list, not an object" in _error(path)


def test_header_crc_catches_what_parses(image):
  # "gpt2-tiny" -> "gpt3-tiny": valid JSON, a different model.
  at = _layout(image)["data"].index(b"gpt2-tiny")
  _patch(image, at + 3, b"3", fix_crc=False)
  msg = _error(image)
  assert "header CRC mismatch" in msg and "stored 0x" in msg


@pytest.mark.parametrize("mmap", [True, False])
def test_flipped_payload_byte(image, mmap):
  e = _layout(image)["entries"]["core0/prog"]
  data = image.read_bytes()
  _patch(image, e["offset"] + 7, bytes([data[e["offset"] + 7] ^ 0x10]),
         fix_crc=False)
  msg = _error(image, mmap=mmap)
  assert "CRC mismatch in section 'core0/prog'" in msg
  assert f"stored 0x{e['crc']:08x}" in msg and "core0/hbm" not in msg
  assert read_image(image, mmap=mmap, verify=False)["core0/prog"].size == 80


def test_verify_default_depends_on_size(image, monkeypatch):
  e = _layout(image)["entries"]["core0/hbm"]
  _patch(image, e["offset"], b"\x00\x7c", fix_crc=False)
  _error(image)
  monkeypatch.setattr(image_file, "VERIFY_LIMIT", os.path.getsize(image))
  read_image(image)
  assert "CRC mismatch in section 'core0/hbm'" in _error(image, verify=True)


def _entry_field(image, name, field):
  e = _layout(image)["entries"][name]
  return e, e["at"] + {"offset": 0, "nbytes": 8}[field]


def test_table_overlap(image):
  lay = _layout(image)
  hbm = lay["entries"]["core0/hbm"]
  _, at = _entry_field(image, "core0/prog", "offset")
  _patch(image, at, struct.pack("<Q", hbm["offset"]))
  msg = _error(image)
  assert "section table inconsistent" in msg and "overlap" in msg
  assert "'core0/prog'" in msg and "'core0/hbm'" in msg


def test_table_offset_inside_header(image):
  _, at = _entry_field(image, "core0/hbm", "offset")
  _patch(image, at, struct.pack("<Q", 0))
  msg = _error(image)
  assert "'core0/hbm'" in msg and "offset 0 is inside the header" in msg


def test_table_offset_misaligned(image):
  e, at = _entry_field(image, "core0/hbm", "offset")
  _patch(image, at, struct.pack("<Q", e["offset"] + 2))
  assert f"offset {e['offset'] + 2} is not a multiple of 4096" in _error(image)


def test_table_offset_out_of_range(image):
  _, at = _entry_field(image, "core0/prog", "offset")
  _patch(image, at, struct.pack("<Q", 1 << 40))
  msg = _error(image)
  assert "truncated: expected 80 bytes for section 'core0/prog'" in msg
  assert f"at bytes [{1 << 40}, " in msg


def test_table_length_disagrees_with_shape(image):
  _, at = _entry_field(image, "core0/symbols", "nbytes")
  _patch(image, at, struct.pack("<Q", 29))
  msg = _error(image)
  assert "'core0/symbols'" in msg and "29 bytes" in msg and "needs 28" in msg


def test_table_section_count(image):
  _patch(image, 32, struct.pack("<I", 4))
  assert "the 4 entries end at byte" in _error(image)
  _patch(image, 32, struct.pack("<I", 9))
  assert "runs past the end of the table" in _error(image)
  _patch(image, 32, struct.pack("<I", 1 << 30))
  assert "need at least" in _error(image)


def test_table_bad_dtype_string(image):
  lay = _layout(image)
  at = lay["data"].index(b"<i4", lay["meta_end"])
  _patch(image, at, b"|O8")
  msg = _error(image)
  assert "'core0/symbols'" in msg and "not a storable numpy dtype" in msg


def test_missing_section_lists_the_others(image):
  img = read_image(image)
  with pytest.raises(KeyError) as e:
    img["core0/hmb"]
  msg = str(e.value)
  assert str(image) in msg and "'core0/hmb'" in msg
  for name in _sections():
    assert name in msg
  assert "did you mean core0/hbm" in msg
  assert img.sections.get("core0/hmb") is None


# --- writing -----------------------------------------------------------------

def _listing(d):
  return {p.name: p.read_bytes() for p in d.iterdir()}


@pytest.mark.parametrize("meta, where", [
  ({"symbols": {"wte": {1, 2}}}, "meta['symbols']['wte'] is a set"),
  ({"scale": float("nan")}, "meta['scale'] is nan"),
  ({"ids": {3: "x"}}, "meta['ids'] has key 3 of type int"),
  ({"w": [0, np.zeros(3)]}, "meta['w'][1] is a ndarray"),
  ([1, 2], "meta must be a dict"),
])
def test_bad_meta_leaves_old_file(image, meta, where):
  before = _listing(image.parent)
  with pytest.raises(ImageFormatError) as e:
    write_image(image, meta, {"core0/hbm": np.zeros(4, np.float16)})
  assert str(e.value).startswith(f"{image}: ") and where in str(e.value)
  assert _listing(image.parent) == before


def test_circular_meta(tmp_path):
  loop = {"a": []}
  loop["a"].append(loop)
  with pytest.raises(ImageFormatError, match=r"meta\['a'\]\[0\] contains"):
    write_image(tmp_path / "x", loop, {})
  assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("sections, what", [
  ({"o": np.array([object()])}, "'o' holds Python objects"),
  ({"s": np.zeros(2, [("a", "<f4"), ("b", "<i2")])}, "'s' has the structured"),
  ({"l": [1, 2, 3]}, "'l' is a list, not a numpy array"),
  ({"": np.zeros(2)}, "section name '' is not"),
  ({7: np.zeros(2)}, "section name 7 is not"),
])
def test_bad_sections_leave_old_file(image, sections, what):
  before = _listing(image.parent)
  with pytest.raises(ImageFormatError, match=what.replace("(", r"\(")):
    write_image(image, {}, sections)
  assert _listing(image.parent) == before


def test_failure_mid_write_leaves_old_file(image, monkeypatch):
  before = _listing(image.parent)
  real = image_file._write_payload
  calls = []

  def disk_full(f, arr):
    calls.append(1)
    if len(calls) == 2:
      f.write(b"\x01" * 100)
      raise OSError(28, "No space left on device")
    return real(f, arr)

  monkeypatch.setattr(image_file, "_write_payload", disk_full)
  with pytest.raises(OSError, match="No space"):
    write_image(image, {"new": 1}, _sections())
  assert len(calls) == 2
  assert _listing(image.parent) == before


def test_interrupted_replace_leaves_old_file(image, monkeypatch):
  before = _listing(image.parent)

  def interrupted(src, dst):
    raise KeyboardInterrupt

  monkeypatch.setattr(image_file.os, "replace", interrupted)
  with pytest.raises(KeyboardInterrupt):
    write_image(image, {}, {"x": np.ones(3)})
  monkeypatch.undo()
  assert _listing(image.parent) == before


@pytest.mark.skipif(sys.platform == "win32",
                    reason="Windows cannot replace a mapped file")
def test_rewrite_while_mapped(image):
  old = read_image(image)
  hbm = np.array(old["core0/hbm"])
  write_image(image, {"v": 2}, {"core0/hbm": np.ones((64, 32), np.float16)})
  assert np.array_equal(old["core0/hbm"], hbm) and old.meta == META
  new = read_image(image)
  assert new.meta == {"v": 2} and (new["core0/hbm"] == 1).all()


def test_new_file_mode_follows_umask(tmp_path):
  old = os.umask(0o027)
  try:
    write_image(tmp_path / "x", {}, {})
  finally:
    os.umask(old)
  if sys.platform != "win32":
    assert (tmp_path / "x").stat().st_mode & 0o777 == 0o640


# --- more corruptions, one parametrized table ------------------------------------

def _entry_byte(lay, name, field_at):
  return lay["entries"][name]["at"] + field_at


@pytest.mark.parametrize("patch, named", [
  (lambda lay: (8, struct.pack("<I", 0), False), "unsupported format version 0"),
  (lambda lay: (12, struct.pack("<I", 1 << 31), True), "unknown flags 0x80000000"),
  (lambda lay: (36, struct.pack("<I", lay["hcrc"] ^ 1), False), "header CRC mismatch"),
  (lambda lay: (16, struct.pack("<Q", 1 << 62), False), "truncated inside the metadata JSON"),
  (lambda lay: (_entry_byte(lay, "core0/prog", 23), bytes([65]), True),
   "65 dimensions, numpy allows at most"),
  (lambda lay: (lay["data"].index(b"core0/hbm", lay["meta_end"]), b"\xff", True),
   "name or dtype is not valid text"),
  (lambda lay: (lay["data"].index(b"core1/hbm", lay["meta_end"]), b"core0/hbm", True),
   ("section 'core0/hbm' (entry 3", "the name appears twice")),
  (lambda lay: (_entry_byte(lay, "core1/hbm", 0), struct.pack("<Q", 4096), True),
   ("section 'core1/hbm'", "empty, so its offset must be 0, not 4096")),
])
def test_more_corruptions(image, patch, named):
  """Header fields and table entries not covered above; nothing is written."""
  at, new, fix_crc = patch(_layout(image))
  _patch(image, at, new, fix_crc=fix_crc)
  before = _listing(image.parent)
  msg = _error(image)
  assert all(n in msg for n in ((named,) if isinstance(named, str) else named)), msg
  assert _listing(image.parent) == before
