"""Malformed files and odd paths, through the CLI: every JSON the project
reads (a checkpoint's config.json, a compiled image's metadata, a step-cache
entry) x every kind of malformation, and every kind of path that is not a
readable regular file.  Each ends in exit 1 or 2 with one line on stderr
naming the file (and the field), no traceback and, with --json, the same
error as a JSON object on stdout; a corrupt cache entry instead warns once,
is timed again and rewritten, and the result is the clean cache's.

The tests run as root, where chmod 000 does not deny a read: a permission
error is made by patching os.open (and by chmod as well when not root).
"""

import errno
import json
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import zlib

import pytest

from pymtl_dfx import files
from pymtl_dfx.cli import main
from pymtl_dfx.compiler import image_file
from pymtl_dfx.compiler.image_file import read_image, write_image
from pymtl_dfx.perf.sampled import StepCache, record_problem

DEEP = b"[" * 100000 + b"]" * 100000


class Blocked(BaseException):
  """Not an Exception: main must not turn it into a one-line error."""


@pytest.fixture
def no_block():
  """Fail (instead of hanging) if a read waits on a FIFO."""
  def expired(*_):
    raise Blocked("the command blocked")
  old = signal.signal(signal.SIGALRM, expired)
  signal.alarm(30)
  yield
  signal.alarm(0)
  signal.signal(signal.SIGALRM, old)


def _one_line(capsys, argv, *named, codes=(1, 2)):
  """Run argv, then argv with --json: exit 1 or 2 both times, exactly one
  line on stderr naming each of `named`, nothing on stdout without --json
  and the same error as one JSON object with it.  Returns the line."""
  code = main(argv)
  out, err = capsys.readouterr()
  assert code in codes, err
  assert err.count("\n") == 1 and err.endswith("\n"), err
  assert "Traceback" not in err and out == "", err
  for n in named:
    assert n in err, err
  assert main(argv + ["--json"]) == code
  out, err_json = capsys.readouterr()
  assert err_json == err
  e = json.loads(out)["error"]
  assert e["exit_code"] == code and e["message"] in err
  return err


# --- malformed JSON: the same kinds for every JSON file ----------------------

# (content, what the line says)
MALFORMED = {
  "empty": (b"", "not readable JSON: the file is empty"),
  "blank": (b" \n\t ", "not readable JSON"),
  "truncated": (b'{"n_layer": 2, "n_em', "not readable JSON: Unterminated string"),
  "not JSON": (b"n_layer = 2", "not readable JSON: Expecting value (line 1 column 1"),
  "not UTF-8": (b'{"n_layer": "\xff\xfe"}', "not readable JSON: not UTF-8 at file byte"),
  "UTF-16": ('{"n_layer": 2}'.encode("utf-16"), "not UTF-8"),
  "nested 100000 deep": (DEEP, "nested too deeply"),
  "nested in a field": (b'{"n_layer": ' + DEEP + b"}", "nested too deeply"),
  "NaN": (b'{"n_layer": NaN}', "NaN is not a number a file may hold"),
  "Infinity": (b'{"layer_norm_epsilon": -Infinity}', "-Infinity is not a number"),
  "1e400": (b'{"layer_norm_epsilon": 1e400}', "1e400 is out of range (overflows to infinity)"),
  "10**400": (b'{"n_layer": 1' + b"0" * 400 + b"}", "is out of range (more than 64 bits)"),
  "5000 digits": (b'{"n_layer": ' + b"7" * 5000 + b"}", "(5000 digits) is out of range"),
  "a list": (b"[1, 2]", "expected a JSON object, found a list"),
  "null": (b"null", "found null"),
  "a string": (b'"gpt2"', "found a string"),
  "a number": (b"12", "found an integer"),
}

# config.json fields with the wrong type: (field, value, what the line says)
CONFIG_FIELDS = [
  ("n_layer", "2", "n_layer='2' (must be an integer)"),
  ("n_layer", [2], "n_layer=[2] (must be an integer)"),
  ("n_layer", None, "n_layer=None (must be an integer)"),
  ("n_layer", True, "n_layer=True (must be an integer)"),
  ("n_layer", 2.0, "n_layer=2.0 (must be an integer)"),
  ("n_embd", {"a": 1}, "n_embd={'a': 1} (must be an integer)"),
  ("n_head", -2, "n_head=-2 (must be positive)"),
  ("vocab_size", "x" * 10000, "vocab_size='xxxxx"),        # and cut short, below
  ("n_positions", [[[[]]]], "n_positions=[[[[]]]]"),
  ("layer_norm_epsilon", "1e-5", "layer_norm_epsilon='1e-5'"),
  ("layer_norm_epsilon", False, "layer_norm_epsilon=False"),
  ("model_type", ["gpt2"], "model_type=['gpt2'] (supported: 'gpt2')"),
  ("n_inner", {"x": 1}, "n_inner={'x': 1} (supported: 4 * n_embd)"),
  ("activation_function", None, "activation_function=None"),
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, tiny_weights):
  from pymtl_dfx.gpt2 import save_checkpoint
  path = tmp_path_factory.mktemp("model") / "ckpt"
  save_checkpoint(path, tiny_weights)
  return path


@pytest.fixture
def folder(tmp_path, model_dir):
  """A copy of the checkpoint folder for a test to damage."""
  return shutil.copytree(model_dir, tmp_path / "ckpt")


COMMANDS = {
  "generate": lambda m: ["generate", "--model", m, "--prompt-ids", "1"],
  "perf": lambda m: ["perf", "--model", m, "--in", "1", "--out", "1", "--no-cache"],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("kind", MALFORMED)
def test_malformed_config_json(capsys, folder, command, kind):
  content, says = MALFORMED[kind]
  (folder / "config.json").write_bytes(content)
  _one_line(capsys, COMMANDS[command](str(folder)), f"{folder}/config.json: ", says)


@pytest.mark.parametrize("field, value, says", CONFIG_FIELDS)
def test_wrongly_typed_config_field(capsys, folder, field, value, says):
  cfg = json.loads((folder / "config.json").read_text())
  cfg[field] = value
  (folder / "config.json").write_text(json.dumps(cfg))
  line = _one_line(capsys, COMMANDS["generate"](str(folder)), f"{folder}/config.json: ", says)
  assert len(line) < 400       # a bad value is quoted, not dumped


# --- compiled images ------------------------------------------------------------

@pytest.fixture(scope="module")
def image(tmp_path_factory):
  path = tmp_path_factory.mktemp("image") / "tiny.dfx"
  assert main(["generate", "--model", "tiny", "--prompt-ids", "1", "--new-tokens", "1",
               "--cores", "2", "--save-image", str(path), "--json"]) == 0
  return path


def _raw_image(path, meta_bytes):
  """An image of no sections whose metadata is `meta_bytes`, with a right
  header CRC (so that the metadata itself is what is checked)."""
  F = image_file
  head = F._HEADER.pack(F.MAGIC, F.FORMAT_VERSION, 0, len(meta_bytes), 0, 0, 0)
  crc = zlib.crc32(meta_bytes, zlib.crc32(head[:36]))
  path.write_bytes(head[:36] + struct.pack("<I", crc) + meta_bytes)


IMAGE_ARGV = ["generate", "--model", "tiny", "--prompt-ids", "1"]


@pytest.mark.parametrize("kind", MALFORMED)
def test_malformed_image_metadata(capsys, tmp_path, kind):
  content, says = MALFORMED[kind]
  path = tmp_path / "bad.dfx"
  _raw_image(path, content)
  says = {"blank": "not readable JSON: empty", "empty": "not readable JSON: empty",
          "a list": "a list, not an object", "null": "null, not an object",
          "a string": "a string, not an object", "a number": "an integer, not an object",
          # images hold integers of any size: the metadata is then checked field by field
          "10**400": "metadata: not a compiled GPT-2 image (kind=None)",
          }.get(kind, says)
  _one_line(capsys, IMAGE_ARGV + ["--image", str(path)], f"{path}: ", says)


def _meta_change(key, value):
  def change(meta):
    where = meta
    *parents, last = key.split(".")
    for p in parents:
      where = where[p]
    if value is KeyError:
      del where[last]
    else:
      where[last] = value(where[last]) if callable(value) else value
  return change


IMAGE_FIELDS = [
  ("kind", "something else", "not a compiled GPT-2 image (kind='something else')"),
  ("kind", KeyError, "not a compiled GPT-2 image (kind=None)"),
  ("gpt", [1], "field 'gpt': expected an object, found a list"),
  ("dfx", None, "field 'dfx': expected an object, found null"),
  ("layout", "x", "field 'layout': expected an object, found a string"),
  ("gpt_name", 7, "field 'gpt_name': expected a string, found an integer"),
  ("gpt.n_layer", "2", "n_layer='2' (must be an integer)"),
  ("gpt.n_embd", KeyError, "missing ['n_embd']"),
  ("dfx.d", True, "d=True (must be an integer)"),
  ("dfx.l", [16], "l=[16] (must be an integer)"),
  ("dfx.ring_gbps", None, "ring_gbps=None (must be a positive number)"),
  ("dfx.psum_entries", KeyError, "field 'dfx' lacks psum_entries"),
  ("dfx.bogus", 1, "unknown field(s) ['bogus']"),
  ("layout.cores", "2", "field 'layout.cores': expected an integer, found a string"),
  ("layout.cores", True, "field 'layout.cores': expected an integer, found true or false"),
  ("layout.cores", 2**62, "layout.cores=4611686018427387904, but the image holds 4 sections"),
  ("layout.cores", 10**400, "layout.cores=1000000000000000000000000000000000000000000000000000"
   "00000..., but the image holds 4 sections"),
  ("layout.cores", 1, "layout.cores=1, but dfx.cores=2"),
  ("layout.cores", 0, "layout.cores=0"),
  ("layout.max_tokens", None, "field 'layout.max_tokens': expected an integer, found null"),
  ("layout.max_tokens", 10**6, "layout.max_tokens=1000000 (must be 1 to the model's "
   "n_positions=128)"),
  ("layout.hbm.words", lambda w: w + 1, "the layout is not the one this compiler plans"),
  ("layout.rf", KeyError, "the layout is not the one this compiler plans"),
  ("layout.split", lambda s: [s], "the layout is not the one this compiler plans"),
  ("gpt.n_layer", 3, "the layout is not the one this compiler plans"),
  ("dfx.cores", 3, "layout.cores=2, but dfx.cores=3"),
  ("dfx.l", 8, "the layout is not the one this compiler plans"),
]


@pytest.mark.parametrize("key, value, says", IMAGE_FIELDS)
def test_wrongly_typed_image_field(capsys, tmp_path, image, key, value, says):
  img = read_image(image, mmap=False)
  meta = json.loads(json.dumps(img.meta))
  _meta_change(key, value)(meta)
  path = tmp_path / "bad.dfx"
  write_image(path, meta, dict(img.sections))
  _one_line(capsys, IMAGE_ARGV + ["--image", str(path)], f"{path}: metadata", says)


@pytest.mark.parametrize("section, change, says", [
  ("core1/hbm", lambda a: a[:-1], "section 'core1/hbm' is float16"),
  ("core0/ddr", lambda a: a.astype("float32"), "section 'core0/ddr' is float32"),
  ("core1/ddr", None, "no section 'core1/ddr'"),        # (renamed: 4 sections still)
])
def test_image_sections_against_the_layout(capsys, tmp_path, image, section, change, says):
  img = read_image(image, mmap=False)
  sections = dict(img.sections)
  if change is None:
    sections[section + "x"] = sections.pop(section)
  else:
    sections[section] = change(sections[section])
  path = tmp_path / "bad.dfx"
  write_image(path, img.meta, sections)
  _one_line(capsys, IMAGE_ARGV + ["--image", str(path)], f"{path}: ", says)


# --- paths that are not a readable regular file ------------------------------------

def _make(kind, path, tmp_path):
  """Put `kind` of thing at path; returns what the line must say."""
  if kind == "missing":
    return "does not exist"
  if kind == "directory":
    path.mkdir()
    return "is a directory, not a file"
  if kind == "FIFO":
    os.mkfifo(path)
    return "is a named pipe (FIFO), not a regular file"
  if kind == "symlink loop":
    os.symlink(path.name, path)
    return "is a symlink loop"
  if kind == "dangling symlink":
    os.symlink(tmp_path / "nowhere", path)
    return "does not exist"
  if kind == "symlink to a device":
    os.symlink("/dev/null", path)
    return "is a character device, not a regular file"
  raise AssertionError(kind)


PATH_KINDS = ["missing", "directory", "FIFO", "symlink loop", "dangling symlink",
              "symlink to a device"]


@pytest.mark.parametrize("kind", PATH_KINDS)
def test_odd_image_paths(capsys, tmp_path, no_block, kind):
  path = tmp_path / "x.dfx"
  says = _make(kind, path, tmp_path)
  _one_line(capsys, IMAGE_ARGV + ["--image", str(path)], f"{path}: {says}")


@pytest.mark.parametrize("image_arg, says", [
  ("/dev/null", "/dev/null: is a character device, not a regular file"),
  ("/dev/zero", "/dev/zero: is a character device, not a regular file"),
  ("/", "/: is a directory, not a file"),
  ("", "--image: the path is empty"),
  ("{f}/inside", "{f}/inside: is not reachable: {f} is not a directory"),
  ("{d}/no/such/x.dfx", "{d}/no/such/x.dfx: does not exist (nor does the directory {d}/no/such)"),
  ("x\x1b[2Jy\nz", "x\\x1b[2Jy\\nz: does not exist"),
])
def test_more_image_paths(capsys, tmp_path, monkeypatch, image_arg, says):
  monkeypatch.chdir(tmp_path)
  (tmp_path / "afile").write_text("x")
  fill = dict(f=str(tmp_path / "afile"), d=str(tmp_path))
  _one_line(capsys, IMAGE_ARGV + ["--image", image_arg.format(**fill)], says.format(**fill))


def test_a_fifo_image_is_refused_at_once(tmp_path):
  """In a real process with a time limit: nothing writes to the FIFO, so a
  reader that opened it would wait for ever."""
  fifo = tmp_path / "fifo.dfx"
  os.mkfifo(fifo)
  r = subprocess.run([sys.executable, "-m", "pymtl_dfx.cli"] + IMAGE_ARGV
                     + ["--image", str(fifo), "--json"],
                     capture_output=True, text=True, timeout=60)
  assert r.returncode == 1
  assert r.stderr == f"dfx generate: {fifo}: is a named pipe (FIFO), not a regular file\n"
  assert json.loads(r.stdout)["error"]["exit_code"] == 1


MODEL_FILES = ["config.json", "model.safetensors", "tokenizer.json", "vocab.json", "merges.txt"]


@pytest.mark.parametrize("name", MODEL_FILES)
@pytest.mark.parametrize("kind", ["directory", "FIFO", "symlink loop", "symlink to a device"])
def test_odd_files_in_the_model_folder(capsys, folder, no_block, tmp_path, name, kind):
  path = folder / name
  if os.path.lexists(path):
    path.unlink()
  says = _make(kind, path, tmp_path)
  _one_line(capsys, COMMANDS["generate"](str(folder)), f"{path}: {says}")


def test_missing_model_files(capsys, folder):
  (folder / "model.safetensors").unlink()
  _one_line(capsys, COMMANDS["generate"](str(folder)), f"{folder}/model.safetensors: file "
            "not found")
  (folder / "config.json").unlink()
  _one_line(capsys, COMMANDS["generate"](str(folder)), f"{folder}/config.json: file not found "
            "(a GPT-2 checkpoint directory needs config.json and model.safetensors)")


@pytest.mark.parametrize("model, says", [
  ("/dev/null", "--model /dev/null: is a character device; expected a checkpoint directory or a preset"),
  ("{f}", "--model {f}: is a regular file; expected a checkpoint directory"),
  ("{loop}", "--model {loop}: is a symlink loop"),
  ("{fifo}", "--model {fifo}: is a named pipe (FIFO); expected"),
  ("", "--model '' is neither a checkpoint directory nor a preset"),
  ("gpt5", "--model 'gpt5' is neither a checkpoint directory nor a preset"),
])
def test_odd_model_paths(capsys, tmp_path, no_block, model, says):
  fill = dict(f=str(tmp_path / "afile"), loop=str(tmp_path / "loop"), fifo=str(tmp_path / "p"))
  (tmp_path / "afile").write_text("x")
  os.symlink("loop", tmp_path / "loop")
  os.mkfifo(tmp_path / "p")
  _one_line(capsys, COMMANDS["perf"](model.format(**fill)), says.format(**fill))


def _deny(monkeypatch, target):
  """os.open of `target` fails as a permission problem does (EACCES)."""
  real = os.open

  def fake(path, *a, **k):
    if os.fspath(path) == os.fspath(target):
      raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
    return real(path, *a, **k)
  monkeypatch.setattr(os, "open", fake)


@pytest.mark.parametrize("which", ["image", "config.json", "model.safetensors"])
def test_permission_denied(capsys, monkeypatch, folder, image, which):
  target = image if which == "image" else folder / which
  _deny(monkeypatch, target)
  argv = IMAGE_ARGV + ["--image", str(image)] if which == "image" else \
    COMMANDS["generate"](str(folder))
  _one_line(capsys, argv, f"{target}: permission denied")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_permission_denied_by_chmod(capsys, folder):
  (folder / "config.json").chmod(0)
  _one_line(capsys, COMMANDS["generate"](str(folder)), f"{folder}/config.json: permission denied")


# --- step-cache entries: warned about, timed again, rewritten -------------------------

PERF = ["perf", "--model", "tiny", "--in", "1", "--out", "2", "--jobs", "1", "--json"]


@pytest.fixture(scope="module")
def clean_cache(tmp_path_factory):
  """A cache of every step of PERF, and PERF's result from it."""
  import contextlib
  import io
  where = tmp_path_factory.mktemp("cache") / "steps"
  out = io.StringIO()
  with contextlib.redirect_stdout(out):
    assert main(PERF + ["--cache", str(where)]) == 0
  rec = json.loads(out.getvalue())
  rec.pop("seconds")
  return where, rec


def _result(capsys, cache):
  assert main(PERF + ["--cache", str(cache)]) == 0
  out, err = capsys.readouterr()
  rec = json.loads(out)
  rec.pop("seconds")
  return rec, err


def _typed(change):
  """An entry: a real one from the clean cache, changed."""
  def make(good):
    rec = json.loads(good)
    change(rec)
    return json.dumps(rec).encode()
  return make


def _set(path, value):
  def change(rec):
    where = rec
    for k in path[:-1]:
      where = where[k]
    if value is KeyError:
      del where[path[-1]]
    else:
      where[path[-1]] = value
  return change


# (how to corrupt the entry's bytes, or a kind of non-file, and what the warning says)
CACHE_DAMAGE = {
  **{kind: (lambda good, c=content: c, says) for kind, (content, says) in MALFORMED.items()},
  # a valid JSON value that is not an object: the record's shape says so
  **{kind: (lambda good, c=MALFORMED[kind][0]: c, f"expected an object, found {found}")
     for kind, found in (("a list", "a list"), ("null", "null"), ("a string", "a string"),
                         ("a number", "an integer"))},
  "cycles a string": (_typed(_set(["cycles"], "12")), "cycles: expected a count"),
  "cycles a bool": (_typed(_set(["cycles"], True)), "cycles: expected a count"),
  "cycles a float": (_typed(_set(["cycles"], 1.5)), "cycles: expected a count"),
  "cycles negative": (_typed(_set(["cycles"], -1)), "cycles: expected a count"),
  "cycles off by one": (_typed(lambda r: r.update(cycles=r["cycles"] + 1)),
                        "but its classes add up to"),
  "classes a list": (_typed(_set(["classes"], [1])), "classes: expected an object, found a list"),
  "busy a dict": (_typed(_set(["busy"], {})), "busy: expected a list of 1, found an object"),
  "busy too long": (_typed(lambda r: r["busy"].append(r["busy"][0])),
                    "busy: expected a list of 1, found 2"),
  "stalls null": (_typed(_set(["stalls"], None)), "stalls: expected a list of 1, found null"),
  "a stall a string": (_typed(lambda r: r["stalls"][0]["mpu"].update(wait="0")),
                       "stalls[0].mpu.wait: expected a count"),
  "a key missing": (_typed(_set(["busy"], KeyError)), "missing key(s) busy"),
  "a key too many": (_typed(_set(["extra"], 1)), "unexpected key(s) 'extra'"),
  "a class renamed": (_typed(lambda r: r["classes"].update(bogus=r["classes"].pop("host"))),
                      "classes: unexpected key(s) 'bogus'; missing key(s) host"),
  "directory": ("directory", "is a directory, not a file"),
  "FIFO": ("FIFO", "is a named pipe (FIFO), not a regular file"),
}


def _damage(entry, how):
  good = entry.read_bytes()
  entry.unlink()
  if how == "directory":
    entry.mkdir()
  elif how == "FIFO":
    os.mkfifo(entry)
  else:
    entry.write_bytes(how(good))
  return good


@pytest.mark.parametrize("kind", CACHE_DAMAGE)
def test_corrupt_cache_entry_is_ignored(capsys, tmp_path, clean_cache, no_block, kind):
  """StepCache.get: None and one warning naming the entry, for every kind."""
  how, says = CACHE_DAMAGE[kind]
  cache = shutil.copytree(clean_cache[0], tmp_path / "steps")
  entry = sorted(cache.iterdir())[0]
  good = _damage(entry, how)
  assert record_problem(json.loads(good), 1) is None
  got = StepCache(cache).get(entry.stem, 1)
  out, err = capsys.readouterr()
  assert got is None and out == ""
  assert err.count("\n") == 1 and err.startswith(
    f"warning: ignoring the corrupt step-cache entry {entry} ("), err
  assert says in err, err


@pytest.mark.parametrize("kind", ["truncated", "empty", "not UTF-8", "nested 100000 deep",
                                  "10**400", "cycles off by one", "a stall a string",
                                  "directory", "FIFO"])
def test_perf_with_a_corrupt_cache_entry(capsys, tmp_path, clean_cache, no_block, kind):
  """`dfx perf` with one corrupt entry: the clean cache's result, one
  warning, and the entry repaired (left alone if it is not a file)."""
  how, says = CACHE_DAMAGE[kind]
  cache = shutil.copytree(clean_cache[0], tmp_path / "steps")
  entry = sorted(cache.iterdir())[0]
  good = _damage(entry, how)
  rec, err = _result(capsys, cache)
  assert rec == clean_cache[1]
  assert err.count("\n") == 1 and str(entry) in err and says in err, err
  if how in ("directory", "FIFO"):
    assert "it stays, as it is not a file" in err and not entry.is_file()
  else:
    assert entry.read_bytes() == good
    assert _result(capsys, cache) == (clean_cache[1], "")    # repaired: no warning now


# --- the shared rules, directly --------------------------------------------------------

@pytest.mark.parametrize("code, says", [
  (errno.ENOENT, "p: does not exist"),
  (errno.EISDIR, "p: is a directory, not a file"),
  (errno.EACCES, "p: permission denied"),
  (errno.EPERM, "p: permission denied"),
  (errno.ELOOP, "p: is a symlink loop"),
  (errno.ENOSPC, "p: no space left on the device"),
  (errno.EROFS, "p: is on a read-only file system"),
  (errno.ENAMETOOLONG, "p: the name is too long"),
  (errno.EIO, "p: input/output error"),
])
def test_describe_os_error(code, says):
  assert files.describe_os_error(OSError(code, os.strerror(code), "p")).startswith(says)


def test_describe_os_error_in_main(capsys, monkeypatch):
  """An OSError from anywhere in a command is said in words, once."""
  from pymtl_dfx.cli import perf as perf_cli

  def fail(*a, **k):
    raise FileNotFoundError(errno.ENOENT, "No such file or directory", "/x/y")
  monkeypatch.setattr(perf_cli, "run", fail)
  line = _one_line(capsys, ["perf", "--model", "tiny", "--in", "1", "--out", "1"],
                   "dfx perf: /x/y: does not exist")
  assert "Errno" not in line


def test_load_json_reads_what_is_valid(tmp_path):
  p = tmp_path / "ok.json"
  p.write_bytes(b'\xef\xbb\xbf{"a": [1, 2.5, -3, "\\u00e9", true, null], "b": 18446744073709551615}')
  assert files.load_json(p) == {"a": [1, 2.5, -3, "é", True, None], "b": 2**64 - 1}


@pytest.mark.parametrize("value, kind, says", [
  ("1", int, "expected an integer, found a string"),
  (True, int, "expected an integer, found true or false"),
  (None, dict, "expected an object, found null"),
  ([], dict, "expected an object, found a list"),
  (1, str, "expected a string, found an integer"),
])
def test_expect(value, kind, says):
  with pytest.raises(files.InputFileError) as e:
    files.expect(value, kind, "f: field 'x'")
  assert str(e.value) == f"f: field 'x': {says}"


def test_expect_passes_good_values():
  assert files.expect(3, int, "w") == 3 and files.expect(2, float, "w") == 2
  assert files.expect({}, dict, "w") == {}


def test_open_input_does_not_block_on_a_fifo(tmp_path, no_block):
  os.mkfifo(tmp_path / "p")
  with pytest.raises(files.InputFileError, match="named pipe"):
    files.open_input(tmp_path / "p")
  assert stat.S_ISFIFO(os.stat(tmp_path / "p").st_mode)


def test_sweep_with_a_corrupt_cache_entry(capsys, tmp_path):
  """A sweep reads the cache twice (cache-only, then computing the missing
  points): the corrupt entry is still warned about once."""
  argv = ["sweep", "--model", "tiny", "--grid", "l=8,16", "--context", "2", "--jobs", "1",
          "--cache", str(tmp_path / "steps"), "--out", str(tmp_path / "out"), "--json"]

  def run():
    assert main(argv) == 0
    out, err = capsys.readouterr()
    rec = json.loads(out)
    rec.pop("seconds")
    return rec, err
  clean, _ = run()
  entry = sorted((tmp_path / "steps").iterdir())[0]
  good = _damage(entry, lambda good: good[:len(good) // 2])
  again, err = run()
  assert again == clean
  assert err.count("\n") == 1 and f"corrupt step-cache entry {entry} (" in err, err
  assert entry.read_bytes() == good


def test_describe_os_error_names_a_renames_target():
  """os.replace(tmp, target) failing names the user's target, not the
  temporary name."""
  e = OSError(errno.EISDIR, "Is a directory", ".out.dfx.1a2b.tmp", None, "out.dfx")
  assert files.describe_os_error(e) == "out.dfx: is a directory, not a file"
