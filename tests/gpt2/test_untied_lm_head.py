"""An untied LM head (config.json `tie_word_embeddings: false` with its own
`lm_head.weight`): read, written, compiled and run as its own matrix, and
refused where the file and the config disagree."""

import dataclasses
import json

import numpy as np
import pytest
import safetensors.numpy

from pymtl_dfx.cli import main
from pymtl_dfx.config import ConfigError, GPT2Config, gpt2_preset
from pymtl_dfx.gpt2 import (CheckpointError, DFXForward, ReferenceModel, generate,
                            greedy_token, load_checkpoint, random_weights, save_checkpoint)
from pymtl_dfx.gpt2.weights import GPT2Weights
from test_gpt2_dfx_vs_fp32 import BOUND_FACTOR, U

pytestmark = pytest.mark.no_verilog   # nothing to translate

UNTIED = dataclasses.replace(gpt2_preset("tiny"), tie_word_embeddings=False, name="untied")
PROMPT = [5, 77, 200]
N_NEW = 6


@pytest.fixture(scope="module")
def untied():
  """Random weights whose lm_head.weight (drawn last) differs from wte."""
  w = random_weights(UNTIED, seed=3)
  assert not np.array_equal(w["lm_head.weight"], w["wte.weight"])
  return w


def _tied(w):
  """The same weights with the head tied to wte."""
  cfg = dataclasses.replace(w.config, tie_word_embeddings=True, name="tied")
  return GPT2Weights(cfg, {k: v for k, v in w.tensors.items() if k != "lm_head.weight"})


@pytest.fixture(scope="module")
def untied_dir(tmp_path_factory, untied):
  path = tmp_path_factory.mktemp("untied") / "model"
  save_checkpoint(path, untied)
  return path


def test_config_round_trips_the_flag():
  hf = UNTIED.to_hf_dict()
  assert hf["tie_word_embeddings"] is False
  assert GPT2Config.from_hf_dict(hf) == UNTIED != gpt2_preset("tiny")
  assert GPT2Config.from_hf_dict({k: v for k, v in hf.items() if k != "tie_word_embeddings"}
                                 ).tie_word_embeddings is True
  assert UNTIED.n_params == gpt2_preset("tiny").n_params + UNTIED.vocab_size * UNTIED.n_embd
  with pytest.raises(ConfigError, match=r"tie_word_embeddings='no' \(must be true or false\)"):
    GPT2Config(tie_word_embeddings="no")


def test_checkpoint_keeps_the_head(untied_dir, untied):
  with open(untied_dir / "config.json") as f:
    assert json.load(f)["tie_word_embeddings"] is False
  stored = safetensors.numpy.load_file(str(untied_dir / "model.safetensors"))
  assert np.array_equal(stored["lm_head.weight"], untied["lm_head.weight"])
  loaded = load_checkpoint(untied_dir)
  assert loaded.config == UNTIED
  assert np.array_equal(loaded.lm_head, untied["lm_head.weight"])


def _copy(src, dst, edit_tensors=None, edit_config=None):
  dst.mkdir()
  t = safetensors.numpy.load_file(str(src / "model.safetensors"))
  if edit_tensors:
    edit_tensors(t)
  safetensors.numpy.save_file(t, str(dst / "model.safetensors"))
  hf = json.loads((src / "config.json").read_text())
  if edit_config:
    edit_config(hf)
  (dst / "config.json").write_text(json.dumps(hf))
  return dst


def test_untied_without_its_tensor_is_refused(tmp_path, untied_dir):
  path = _copy(untied_dir, tmp_path / "m", edit_tensors=lambda t: t.pop("lm_head.weight"))
  with pytest.raises(CheckpointError, match=r"missing tensor 'lm_head.weight' \(expected shape "
                                            r"\(256, 128\)\)"):
    load_checkpoint(path)


def test_tied_config_with_a_different_head_is_refused(tmp_path, untied_dir):
  path = _copy(untied_dir, tmp_path / "m",
               edit_config=lambda hf: hf.pop("tie_word_embeddings"))
  with pytest.raises(CheckpointError) as e:
    load_checkpoint(path)
  assert str(e.value) == (
    f"{path / 'model.safetensors'}: tensor 'lm_head.weight' differs from 'wte.weight', but "
    f"config.json ties the LM head to wte (tie_word_embeddings is true or absent); set "
    f"\"tie_word_embeddings\": false to use 'lm_head.weight', or remove it")
  # an exact copy of wte (older GPT2LMHeadModel files) is the tied head
  same = _copy(untied_dir, tmp_path / "same", edit_config=lambda hf: hf.pop("tie_word_embeddings"),
               edit_tensors=lambda t: t.update({"lm_head.weight": t["wte.weight"]}))
  assert load_checkpoint(same).config.tie_word_embeddings


def test_dfx_numerics_agree_with_fp32(untied):
  """The tolerance of test_gpt2_dfx_vs_fp32, with the untied head's rows in
  the error scale; and the head is really used: the tied logits differ."""
  ref, dfx, tied = ReferenceModel(untied), DFXForward(untied), ReferenceModel(_tied(untied))
  head_abs = np.abs(untied["lm_head.weight"])
  agree = []
  for tok in [1, 50, 99, 7, 250, 3, 128, 64]:
    trace = {}
    l16 = dfx.step(tok, trace=trace)
    l32 = ref.step(tok)
    scale = U * (np.abs(trace["ln_f"].astype(np.float32)) @ head_abs.T)
    assert np.all(np.abs(l16.astype(np.float64) - l32) <= BOUND_FACTOR * scale)
    assert not np.allclose(l32, tied.step(tok), atol=1e-3)
    agree.append(greedy_token(l16) == greedy_token(l32))
  assert np.mean(agree) >= 0.75


def test_dfx_generate_uses_the_untied_head(capsys, untied_dir, untied, tmp_path):
  want = generate(DFXForward(untied), PROMPT, N_NEW)
  assert want != generate(DFXForward(_tied(untied)), PROMPT, N_NEW)
  ids = ",".join(map(str, PROMPT))
  image = tmp_path / "untied.dfx"
  assert main(["generate", "--model", str(untied_dir), "--prompt-ids", ids, "--new-tokens",
               str(N_NEW), "--cores", "2", "--json", "--save-image", str(image)]) == 0
  assert json.loads(capsys.readouterr().out)["tokens"] == want
  # the saved image carries the head: run from it, no compile
  assert main(["generate", "--model", str(untied_dir), "--prompt-ids", ids, "--new-tokens",
               str(N_NEW), "--image", str(image), "--json"]) == 0
  assert json.loads(capsys.readouterr().out)["tokens"] == want
  # an image of the tied model is not this model's
  tied_dir = tmp_path / "tied"
  save_checkpoint(tied_dir, _tied(untied))
  tied_image = tmp_path / "tied.dfx"
  assert main(["generate", "--model", str(tied_dir), "--prompt-ids", ids, "--new-tokens", "1",
               "--save-image", str(tied_image)]) == 0
  capsys.readouterr()
  assert main(["generate", "--model", str(untied_dir), "--prompt-ids", ids, "--new-tokens", "1",
               "--image", str(tied_image)]) == 2
  assert (f"--image {tied_image} holds model 'tied' (n_layer=2, n_embd=128, vocab_size=256, "
          f"tie_word_embeddings=True), not --model "
          f"{untied_dir}") in capsys.readouterr().err
