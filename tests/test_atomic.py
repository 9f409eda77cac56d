"""Atomic writes: a file appears whole or not at all, old content survives an
interrupted write, no temporary file is left behind, modes follow the umask.

Every writer of the project is checked the same way: the helper itself, the
checkpoint (config.json + model.safetensors) and the compiled image file.
"""

import os
import sys

import numpy as np
import pytest
import safetensors.numpy

from pymtl_dfx import atomic
from pymtl_dfx.compiler import image_file
from pymtl_dfx.config import gpt2_preset
from pymtl_dfx.gpt2 import checkpoint, load_checkpoint, random_weights, save_checkpoint


class Interrupted(BaseException):
  """Stands for Ctrl-C or a kill arriving in the middle of a write."""


def _listing(d):
  return sorted(p.name for p in d.iterdir())


def _contents(d):
  return {p.name: p.read_bytes() for p in d.iterdir() if p.is_file()}


@pytest.mark.parametrize("writer", ["text", "bytes", "open_w", "open_wb", "path"])
def test_complete_write_replaces(tmp_path, writer):
  target = tmp_path / "out"
  target.write_text("old")
  if writer == "text":
    atomic.write_text(target, "new ✓")
  elif writer == "bytes":
    atomic.write_bytes(target, "new ✓".encode())
  elif writer == "path":
    with atomic.atomic_path(target) as tmp:
      with open(tmp, "w", encoding="utf-8") as f:
        f.write("new ✓")
  else:
    mode = "w" if writer == "open_w" else "wb"
    with atomic.atomic_open(target, mode) as f:
      f.write("new ✓" if mode == "w" else "new ✓".encode())
  assert target.read_text(encoding="utf-8") == "new ✓"
  assert _listing(tmp_path) == ["out"]


@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), Interrupted()])
@pytest.mark.parametrize("old", [None, b"old content"])
@pytest.mark.parametrize("how", ["open", "path"])
def test_interrupted_write_leaves_old_or_nothing(tmp_path, exc, old, how):
  target = tmp_path / "out"
  if old is not None:
    target.write_bytes(old)
  with pytest.raises(type(exc)):
    if how == "open":
      with atomic.atomic_open(target, "wb") as f:
        f.write(b"half of it")
        raise exc
    else:
      with atomic.atomic_path(target) as tmp:
        with open(tmp, "wb") as f:
          f.write(b"half of it")
        raise exc
  assert _listing(tmp_path) == ([] if old is None else ["out"])
  if old is not None:
    assert target.read_bytes() == old


def test_failed_replace_leaves_no_temp(tmp_path, monkeypatch):
  def refused(src, dst):
    raise PermissionError(13, "Permission denied")
  monkeypatch.setattr(atomic.os, "replace", refused)
  with pytest.raises(PermissionError):
    atomic.write_text(tmp_path / "x", "y")
  monkeypatch.undo()
  assert _listing(tmp_path) == []


def test_only_whole_file_modes(tmp_path):
  with pytest.raises(ValueError, match="mode 'w' or 'wb', not 'a'"):
    with atomic.atomic_open(tmp_path / "x", "a"):
      pass
  assert _listing(tmp_path) == []


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes")
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_mode_follows_umask(tmp_path, umask, mode):
  old = os.umask(umask)
  try:
    atomic.write_text(tmp_path / "a", "x")
    with atomic.atomic_path(tmp_path / "b") as tmp:
      safetensors.numpy.save_file({"t": np.zeros(2, np.float32)}, tmp)
  finally:
    os.umask(old)
  assert (tmp_path / "a").stat().st_mode & 0o777 == mode
  assert (tmp_path / "b").stat().st_mode & 0o777 == mode


# --- the project's writers --------------------------------------------------

@pytest.fixture(scope="module")
def tiny():
  return random_weights(gpt2_preset("tiny"), 1)


@pytest.mark.parametrize("fail_in", ["safetensors", "config"])
@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), Interrupted()])
def test_interrupted_checkpoint_save(tmp_path, tiny, monkeypatch, fail_in, exc):
  ckpt = tmp_path / "ckpt"
  if fail_in == "safetensors":
    real = safetensors.numpy.save_file

    def half(tensors, filename, metadata=None):
      real(tensors, filename, metadata=metadata)
      with open(filename, "r+b") as f:
        f.truncate(100)
      raise exc
    monkeypatch.setattr(checkpoint.safetensors.numpy, "save_file", half)
  else:
    monkeypatch.setattr(checkpoint, "write_text",
                        lambda p, text: _write_then_fail(p, text, exc))
  with pytest.raises(type(exc)):
    save_checkpoint(ckpt, tiny)
  # the weights land first; a failure in config.json leaves them and no
  # temporary file, and the checkpoint is refused by name, not half-read
  assert _listing(ckpt) == ([] if fail_in == "safetensors" else ["model.safetensors"])
  monkeypatch.undo()
  if fail_in == "config":
    with pytest.raises(checkpoint.CheckpointError, match="config.json: file not found"):
      load_checkpoint(ckpt)


def _write_then_fail(path, text, exc):
  with atomic.atomic_open(path, "w") as f:
    f.write(text[:10])
    raise exc


def test_interrupted_checkpoint_resave_keeps_old(tmp_path, tiny, monkeypatch):
  ckpt = tmp_path / "ckpt"
  save_checkpoint(ckpt, tiny)
  before = _contents(ckpt)

  def interrupted(tensors, filename, metadata=None):
    with open(filename, "wb") as f:
      f.write(b"\x00" * 64)
    raise Interrupted()
  monkeypatch.setattr(checkpoint.safetensors.numpy, "save_file", interrupted)
  with pytest.raises(Interrupted):
    save_checkpoint(ckpt, random_weights(gpt2_preset("tiny"), 2))
  assert _contents(ckpt) == before
  monkeypatch.undo()
  load_checkpoint(ckpt)


@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), Interrupted()])
@pytest.mark.parametrize("old", [False, True])
def test_interrupted_image_write(tmp_path, monkeypatch, exc, old):
  path = tmp_path / "model.dfx"
  if old:
    image_file.write_image(path, {"v": 1}, {"a": np.zeros(3, np.float16)})
  before = _contents(tmp_path)

  def fails(f, arr):
    f.write(b"\x01" * 10)
    raise exc
  monkeypatch.setattr(image_file, "_write_payload", fails)
  with pytest.raises(type(exc)):
    image_file.write_image(path, {"v": 2}, {"a": np.ones(5000, np.float16)})
  assert _contents(tmp_path) == before
