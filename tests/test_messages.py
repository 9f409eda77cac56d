"""Messages name the real cause: hints cite only the command's own options
and possible values, no message carries the command's prefix twice or a
unit's internal wording, user and model text is printed with its control
characters escaped, and flags show no default in --help.  Then odd inputs
a hostile user tried, each one clear line.
"""

import json

import pytest

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
])
def test_echoed_text_is_escaped(capsys, argv, says):
  code = _main(argv)
  out, err = capsys.readouterr()
  assert code in (1, 2) and says in err and err.count("\n") == 1, err
  assert not any(c in err[:-1] for c in "\x1b\x07\n\udcff")


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


# --- odd inputs a hostile user tried -------------------------------------------------------

G = ["generate", "--model", "tiny"]
P = ["perf", "--model", "tiny", "--in", "1", "--out", "1", "--no-cache"]


@pytest.mark.parametrize("argv, code, says", [
  (G + ["--prompt-ids", "1,,2"], 2, "--prompt-ids '1,,2' has an empty item"),
  (G + ["--prompt-ids", "1,"], 2, "--prompt-ids '1,' has an empty item"),
  (G + ["--prompt-ids", ""], 2, "prompt ids must be 1 or more ids"),
  (G + ["--prompt", ""], 2, "prompt ids must be 1 or more ids"),
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
