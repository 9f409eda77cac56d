"""Messages name the real cause: hints cite only the command's own options
and possible values, no message carries the command's prefix twice or a
unit's internal wording, user and model text is printed with its control
characters escaped, and flags show no default in --help.  Then odd inputs
a hostile user tried, each one clear line.
"""

import json
import os
import subprocess
import sys
import types

import pytest

from pymtl_dfx.bounds import MAX_JOBS_PER_CPU, cpu_count, max_jobs
from pymtl_dfx.cli import _parser, main
from pymtl_dfx.printable import shown, stream_text


def _main(argv):
  """main's exit code, also when argparse exits (a usage error)."""
  try:
    return main(argv)
  except SystemExit as e:
    return e.code


def _line(capsys, argv, code):
  """Run argv; exit `code` and exactly one line on stderr, no traceback;
  with --json the same error as a JSON object on stdout.  Returns the line."""
  got = _main(argv)
  out, err = capsys.readouterr()
  assert got == code, err
  assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, err
  assert _main(argv + ["--json"]) == code
  out, err_json = capsys.readouterr()
  assert err_json == err and json.loads(out)["error"]["message"] in err
  return err


# --- hints: the command's own options, possible values ------------------------------

IDS_128 = ",".join(["1"] * 128)


@pytest.mark.parametrize("argv, hint", [
  (["generate", "--model", "tiny", "--prompt-ids", "1,2", "--new-tokens", "127"],
   "use --new-tokens <= 126 or a shorter prompt"),
  (["generate", "--model", "tiny", "--prompt-ids", "1,2", "--new-tokens", "200"],
   "use --new-tokens <= 126"),
  (["generate", "--model", "tiny", "--prompt-ids", IDS_128],
   "the prompt alone fills them: use a prompt of at most 127 tokens"),
  (["perf", "--model", "tiny", "--in", "100", "--out", "100"], "use --out <= 28 or --in <= 28"),
  (["perf", "--model", "tiny", "--in", "10", "--out", "200"], "use --out <= 118"),
  (["perf", "--model", "tiny", "--in", "128", "--out", "1"],
   "the prompt alone fills them: use --in <= 127"),
  (["perf", "--model", "tiny", "--in", "500", "--out", "9"],
   "the prompt alone fills them: use --in <= 127"),
  (["sweep", "--model", "tiny", "--grid", "d=32", "--io", "100:100", "--out", "x"],
   "use O (--io I:O) <= 28 or I (--io I:O) <= 28"),
  (["sweep", "--model", "tiny", "--grid", "d=32", "--io", "128:4", "--out", "x"],
   "the prompt alone fills them: use I (--io I:O) <= 127"),
  (["demo", "--prompt", "the " * 300, "--paper", "skip"],
   "the prompt alone fills them: use a prompt of at most 255 tokens"),
  (["demo", "--prompt", "the " * 250, "--new-tokens", "100", "--paper", "skip"],
   "or a shorter prompt"),
])
def test_context_hints_name_the_commands_options(capsys, tmp_path, monkeypatch, argv, hint):
  monkeypatch.chdir(tmp_path)
  line = _line(capsys, argv, 2)
  assert hint in line
  assert "<= 0" not in line and "<= -" not in line
  if argv[0] in ("perf", "sweep"):
    assert "--new-tokens" not in line
  if argv[0] in ("generate", "demo"):
    assert "--out" not in line and "--in " not in line


# --- no internal wording -------------------------------------------------------------

@pytest.mark.parametrize("setting, says, never", [
  ("hbm_channel_gbps=1e-9", "hbm_channel_gbps=1e-09 (must be at least 1e-06", "rate queue"),
  ("ddr_gbps=1e-7", "ddr_gbps=1e-07 (must be at least 1e-06", "rate queue"),
  ("ring_gbps=4e-7", "ring_gbps=4e-07 (must be at least 1e-06", "rate queue"),
  ("host_step_us=1e306", "host_step_us=1e+306 (too long", "infinity"),
  ("hbm_latency_ns=1e307", "hbm_latency_ns=1e+307 (too long", "infinity"),
  ("ddr_latency_ns=1e308", "ddr_latency_ns=1e+308 (too long", "infinity"),
  ("ring_latency_ns=1e307", "ring_latency_ns=1e+307 (too long", "infinity"),
  ("hbm_channels=1", "hbm_channels=1 (must be at least 2", "DMA:"),
  ("ddr_gbps=10", "ddr_gbps=10.0 (must be more than 12.8 at clock_mhz=200 and d=64", "DMA:"),
  ("ring_gbps=inf", "ring_gbps=inf (must be a positive number)", "infinity"),
  ("ring_gbps=nan", "ring_gbps=nan (must be a positive number)", "convert"),
  ("d=inf", "d='inf' (must be an integer)", "infinity"),
])
@pytest.mark.parametrize("command", ["perf", "generate", "sweep", "verilog", "report"])
def test_config_values_are_refused_by_field(capsys, tmp_path, monkeypatch, command, setting,
                                            says, never):
  monkeypatch.chdir(tmp_path)
  argv = {"perf": ["perf", "--model", "tiny", "--in", "1", "--out", "1", "--no-cache"],
          "generate": ["generate", "--model", "tiny", "--prompt-ids", "1"],
          "sweep": ["sweep", "--model", "tiny", "--grid", "l=16", "--out", "s", "--no-cache"],
          "verilog": ["verilog", "--out", "v"],
          "report": ["report", "--out", "r", "--no-cache"]}[command]
  line = _line(capsys, argv + ["--set", setting], 2)
  assert says in line and never not in line
  assert list(tmp_path.iterdir()) == []


def test_no_doubled_prefix(capsys, tmp_path):
  (tmp_path / "busy").mkdir()
  (tmp_path / "busy" / "f").write_text("x")
  assert main(["verilog", "--out", str(tmp_path / "busy"), "--set", "d=8", "--json"]) == 1
  out, err = capsys.readouterr()
  assert err.count("dfx verilog:") == 1 and err.startswith("dfx verilog: "), err
  assert json.loads(out)["error"]["message"].count("dfx verilog") == 0


def test_main_drops_a_prefix_the_message_already_has(capsys, monkeypatch):
  from pymtl_dfx.cli import perf as perf_cli

  def fail(*a, **k):
    raise ValueError("dfx perf: dfx perf: something")
  monkeypatch.setattr(perf_cli, "run", fail)
  line = _line(capsys, ["perf", "--model", "tiny", "--in", "1", "--out", "1"], 1)
  assert line == "dfx perf: something\n"


# --- control characters -------------------------------------------------------------

@pytest.mark.parametrize("text, one_line, streamed", [
  ("plain é ☃ 🙂", "plain é ☃ 🙂", "plain é ☃ 🙂"),
  ("\x1b[2J\x1b]0;title\x07", "\\x1b[2J\\x1b]0;title\\x07", "\\x1b[2J\\x1b]0;title\\x07"),
  ("a\nb\tc\rd", "a\\nb\\tc\\rd", "a\nb\tc\\rd"),
  ("\x00\x08\x7f\x9b31m\x85", "\\x00\\x08\\x7f\\x9b31m\\x85", "\\x00\\x08\\x7f\\x9b31m\\x85"),
  ("a\udcffb", "a\\xffb", "a\udcffb"),
  # format characters (Cf): a bidi override or isolate reorders the rest of a
  # message's line, so messages escape them; the generated text keeps them
  ("ab\u202ecd.txt", "ab\\u202ecd.txt", "ab\u202ecd.txt"),
  ("\u2066x\u2069\u200f\ufeff\xad", "\\u2066x\\u2069\\u200f\\ufeff\\xad",
   "\u2066x\u2069\u200f\ufeff\xad"),
  ("👩\u200d💻 \U000e0041", "👩\\u200d💻 \\U000e0041", "👩\u200d💻 \U000e0041"),
])
def test_escapes(text, one_line, streamed):
  assert shown(text) == one_line and stream_text(text) == streamed


def test_streamed_prompt_and_text_are_escaped(capsys):
  assert main(["generate", "--prompt", "\x1b[2J\x1b[31mhi\tthere\x9b", "--new-tokens", "2"]) == 0
  out = capsys.readouterr().out
  assert out.startswith("\\x1b[2J\\x1b[31mhi\tthere\\x9b")
  assert all(c in "\n\t" or c.isprintable() for c in out), repr(out)


@pytest.mark.parametrize("argv, says", [
  (["generate", "--model", "tiny\x1b[2J", "--prompt-ids", "1"], "--model 'tiny\\x1b[2J'"),
  (["generate", "--model", "tiny", "--prompt-ids", "1\x1b,2"], "--prompt-ids '1\\x1b,2'"),
  (["generate", "--model", "tiny", "--prompt-ids", "1", "--image", "a\nb"], "a\\nb: does not exist"),
  (["generate", "--model", "tiny", "--prompt-ids", "1", "--level", "\x1bx"], "'\\x1bx'"),
  (["perf", "--model", "tiny", "--in", "1\x07", "--out", "1"], "'1\\x07' is not an integer"),
  (["generate", "--model", "tiny", "--prompt-ids", "1,\x1b,"],
   "--prompt-ids '1,\\x1b,' has an empty item"),
  # bytes that are not UTF-8 reach Python as lone surrogates: shown as the bytes
  (["generate", "--prompt", "ab\udcff\udcfe"],
   "--prompt 'ab\\xff\\xfe' is not UTF-8 text: byte \\xff at character 2"),
  (["demo", "--prompt", "\udcff", "--paper", "skip"], "--prompt '\\xff' is not UTF-8 text"),
  (["generate", "--model", "tiny", "--prompt-ids", "1", "--image", "a\udcffb"],
   "a\\xffb: does not exist"),
  # a right-to-left override would show "1,2" as given where the prompt is not
  (["generate", "--model", "tiny", "--prompt-ids", "\u202e2,1"], "--prompt-ids '\\u202e2,1'"),
  (["generate", "--model", "tiny\u2067", "--prompt-ids", "1"], "--model 'tiny\\u2067'"),
])
def test_echoed_text_is_escaped(capsys, argv, says):
  code = _main(argv)
  out, err = capsys.readouterr()
  assert code in (1, 2) and says in err and err.count("\n") == 1, err
  assert not any(c in err[:-1] for c in "\x1b\x07\n\udcff\u202e\u2067")


# --- help: flags show no default --------------------------------------------------------

def test_flags_show_no_default():
  ap = _parser()
  subs = next(a for a in ap._actions if hasattr(a, "choices") and a.choices).choices
  assert set(subs) >= {"generate", "demo", "verilog", "perf", "report", "sweep", "numerics"}
  for name, p in subs.items():
    text = " ".join(p.format_help().split())
    assert "default: True" not in text and "default: False" not in text, name
  verilog = " ".join(subs["verilog"].format_help().split())
  assert "--no-lint skip the Verilator lint" in verilog and "--no-lint skip the Verilator lint (" \
    not in verilog


def test_help_describes_every_level_and_the_profiles_once():
  """issue #38: --level kernel and --wave at kernel were undescribed, and
  every command's help repeated the profiles' descriptions."""
  from pymtl_dfx.profiles import PROFILES
  subs = next(a for a in _parser()._actions if hasattr(a, "choices") and a.choices).choices
  gen = " ".join(subs["generate"].format_help().split())
  assert "kernel: the U280 kernel's RTL (each card's core behind its AXI adapters, with HBM " \
    "and DDR models and the ring's link models) co-simulated in Verilator" in gen
  assert "(the simulated levels: fl, cl, rtl, verilog, kernel;" in gen
  assert "Verilator's trace of every internal signal at verilog and kernel" in gen
  for name, p in subs.items():
    text = " ".join(p.format_help().split())
    if not any(a.dest == "profile" for a in p._actions):
      continue
    assert ", ".join(PROFILES) in text, name
    for prof in PROFILES.values():
      assert (" ".join(prof.description.split()) in text) == (name == "perf"), (name, prof.name)
    if name != "perf":
      assert "`dfx perf --help` describes each" in text, name
  perf = " ".join(subs["perf"].format_help().split())
  assert f"(default: the CPU count, {cpu_count()} here; at most {MAX_JOBS_PER_CPU} x the CPU " \
    f"count, {max_jobs()} here)" in perf


# --- odd inputs a hostile user tried -------------------------------------------------------

G = ["generate", "--model", "tiny"]
P = ["perf", "--model", "tiny", "--in", "1", "--out", "1", "--no-cache"]


@pytest.mark.parametrize("argv, code, says", [
  (G + ["--prompt-ids", "1,,2"], 2, "--prompt-ids '1,,2' has an empty item"),
  (G + ["--prompt-ids", "1,"], 2, "--prompt-ids '1,' has an empty item"),
  (G + ["--prompt-ids", ""], 2, "prompt ids must be 1 or more ids"),
  (G + ["--prompt", ""], 2, "--prompt is empty: the model needs at least one token"),
  (["demo", "--prompt", "", "--paper", "skip"], 2, "--prompt is empty"),
  (G + ["--prompt-ids", "-1"], 2, "out of range: [-1]"),
  (G + ["--prompt-ids", "9" * 30], 2, "out of range: [999999"),
  (G + ["--prompt-ids", "1", "--new-tokens", "9" * 30], 2, "use --new-tokens <= 127"),
  (G + ["--prompt-ids", "1", "--temperature", "nan"], 2, "nan must be a finite number >= 0"),
  (G + ["--prompt-ids", "1", "--temperature", "1e400"], 2, "must be a finite number >= 0"),
  (G + ["--prompt-ids", "1", "--temperature", "-1"], 2, "-1 must be a finite number >= 0"),
  (G + ["--prompt-ids", "1", "--seed", "-5"], 2, "-5 must be at least 0"),
  (G + ["--prompt-ids", "1", "--set", "d=32", "--set", "d=64"], 2, "d is set twice (32, 64)"),
  (G + ["--prompt-ids", "1", "--set", "d=1e400"], 2, "d='1e400' (must be an integer)"),
  (G + ["--prompt-ids", "1", "--set", "ring_gbps=-inf"], 2, "ring_gbps=-inf"),
  (G + ["--prompt-ids", "1", "--set", "="], 2, "'=' (expected key=value)"),
  (G + ["--prompt-ids", "1", "--set", "é=1"], 2, "'é' is not a DFXConfig field"),
  (G + ["--prompt-ids", "1", "--image", ""], 2, "--image: the path is empty"),
  (G + ["--prompt-ids", "1", "--image", "."], 1, ".: is a directory, not a file"),
  # issue #38: each said something else, or the wrong thing
  (G + ["--prompt-ids", "1", "--profile", "paper", "--profile", "streaming"], 2,
   "--profile given twice (paper, streaming); a profile is one named set: use --set on top "
   "of one"),
  (G + ["--prompt-ids", "1", "--level", "cl", "--trace", "t", "--wave-cycles", "-1:3"], 2,
   "--wave-cycles: '-1:3': the first cycle -1 is negative"),
  (G + ["--prompt-ids", "1", "--bogus"], 2, "unrecognized arguments: --bogus (see dfx generate "
   "--help)"),
  (["--bogus"] + G + ["--prompt-ids", "1"], 2,
   "dfx: error: unrecognized arguments: --bogus (see dfx --help)"),
  (G + ["--prompt-ids", "1", "--set", "d=8"], 2, "cannot compile for DFX: l <= d: register file "
   "manager: l=16 > d=8"),
  (P + ["--set", "d=8"], 2, "l <= d"),
  (["report", "--out", "r", "--no-cache", "--set", "d=8"], 2, "l <= d"),
  (G + ["--prompt-ids", "1", "--level", "fpga"], 2, "--level fpga needs --xclbin FILE"),
  (["sweep", "--model", "tiny", "--grid", "d=32", "--out", "s", "--no-cache", "--dask",
    "not a url"], 1, "--dask not a url: not a scheduler address; expected tcp://HOST:PORT"),
  (["generate", "--model", "", "--prompt-ids", "1"], 2, "--model '' is neither"),
  (["generate", "--model", "/dev/null", "--prompt-ids", "1"], 2, "--model /dev/null: is a character device"),
  (["generate", "--model", "/", "--prompt-ids", "1"], 1, "/config.json: file not found"),
  (P[:-1] + ["--cache", "/dev/null/x"], 1, "--cache /dev/null/x: /dev/null is a character "
   "device, not a directory"),
  (["perf", "--model", "tiny", "--in", "-3", "--out", "1"], 2, "-3 must be at least 1"),
  (["perf", "--model", "tiny", "--in", "1e3", "--out", "1"], 2, "'1e3' is not an integer"),
  (["perf", "--model", "tiny", "--in", "1", "--out", "nan"], 2, "'nan' is not an integer"),
  (P + ["--samples", "0"], 2, "0 must be at least 1"),
  (P + ["--jobs", "-1"], 2, "-1 must be at least 1"),
  # issue #38: --jobs 100000 started a process per step on 2 CPUs, and said nothing
  (P + ["--jobs", "100000"], 2, f"argument --jobs: 100000 is above its bound {max_jobs()} "
   f"({MAX_JOBS_PER_CPU} x this machine's {cpu_count()} CPU(s)"),
  (["report", "--out", "r", "--no-cache", "--jobs", "100000"], 2, "100000 is above its bound"),
  (["sweep", "--model", "tiny", "--grid", "d=32", "--out", "s", "--jobs", "100000"], 2,
   "100000 is above its bound"),
  (["sweep", "--model", "tiny", "--grid", "d=", "--out", "s"], 2, "--grid 'd=': an empty value"),
  (["sweep", "--model", "tiny", "--grid", "d=3", "--out", "s"], 2, "d=3 (must be a power of two)"),
  (["sweep", "--model", "tiny", "--grid", "d=32", "--io", "1:0", "--out", "s"], 2,
   "--io '1:0': expected I:O"),
  (["sweep", "--model", "tiny", "--grid", "d=32", "--context", "999", "--out", "s"], 2,
   "--context 999 is past model 'tiny''s n_positions=128"),
  (["report", "--out", "r", "--set", "cores=2"], 2, "--set cores is not allowed"),
  (["verilog", "--out", "v", "--cores", "0"], 2, "0 must be at least 1"),
  (["verilog", "--out", "v", "--set", "l=3"], 2, "l=3 (must be a power of two)"),
  (["demo", "--cores", "0"], 2, "0 must be at least 1"),
  (["demo", "--new-tokens", "-1"], 2, "-1 must be at least 1"),
  (["demo", "--paper", "maybe"], 2, "invalid choice: 'maybe'"),
])
def test_hostile_inputs(capsys, tmp_path, monkeypatch, argv, code, says):
  monkeypatch.chdir(tmp_path)
  line = _line(capsys, argv, code)
  assert says in line
  assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux's /proc")
@pytest.mark.parametrize("argv", [["verilog", "--out", "/proc/x"], ["fpga", "--out", "/proc/x"],
                                  ["report", "--no-cache", "--out", "/proc/x"],
                                  G + ["--prompt-ids", "1", "--save-image", "/proc/x"]])
def test_an_output_nothing_can_create_is_refused_before_the_announcement(capsys, argv):
  # /proc takes nothing new, though its mode bits let root write there
  assert _main(argv) == 1
  out, err = capsys.readouterr()
  assert out == "" and err.count("\n") == 1, (out, err)
  assert err.startswith(f"dfx {argv[0]}: {argv[-2]} /proc/x: cannot create it"), err


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="Linux's /proc")
def test_the_step_cache_is_named(capsys, monkeypatch):
  monkeypatch.delenv("DFX_PERF_CACHE", raising=False)
  monkeypatch.setenv("XDG_CACHE_HOME", "/proc/nope")
  line = _line(capsys, ["perf", "--model", "tiny", "--in", "1", "--out", "1"], 1)
  assert line.startswith("dfx perf: the step cache at /proc/nope/pymtl_dfx/perf: cannot "
                         "create it"), line


def test_a_closed_stdout_is_an_error():
  # `dfx generate ... >&-`: Python's stdout is None, and print() drops the text
  p = subprocess.run([sys.executable, "-m", "pymtl_dfx.cli", *G, "--prompt-ids", "1",
                      "--new-tokens", "2"], stderr=subprocess.PIPE, timeout=120,
                     preexec_fn=lambda: os.close(1))
  assert p.returncode == 1 and p.stderr == (b"dfx generate: stdout is closed (>&-): the output "
                                            b"would be lost; send it to a file, or to /dev/null "
                                            b"to discard it\n"), p.stderr


class _Pyxrt(types.ModuleType):
  """XRT's bindings, failing where `fails` says with XRT's RuntimeError."""

  def __init__(self, fails):
    super().__init__("pyxrt")
    boom = RuntimeError(f"{fails} failed")

    def raiser(*a):
      raise boom
    self.xclbin = raiser if fails == "xclbin" else lambda path: types.SimpleNamespace(
      get_mems=lambda: [])
    load = raiser if fails == "load_xclbin" else lambda x: "uuid"
    self.device = lambda index: types.SimpleNamespace(load_xclbin=load)
    self.ip = raiser


@pytest.mark.parametrize("fails, says", [
  # what XRT raises for garbage: "Invalid xclbin"
  ("xclbin", "XRT cannot read it as an xclbin (xclbin failed)"),
  ("load_xclbin", "card 0 cannot load it (load_xclbin failed)"),
  ("ip", "no kernel dfx_kernel in it (ip failed)"),
])
def test_a_bad_xclbin_is_one_line_naming_it(capsys, monkeypatch, tmp_path, fails, says):
  monkeypatch.setitem(sys.modules, "pyxrt", _Pyxrt(fails))
  xclbin = tmp_path / "garbage.xclbin"
  xclbin.write_bytes(b"garbage")
  line = _line(capsys, G + ["--prompt-ids", "1", "--new-tokens", "1", "--level", "fpga",
                            "--xclbin", str(xclbin)], 1)
  assert line.startswith(f"dfx generate: --xclbin {xclbin}: {says}"), line
