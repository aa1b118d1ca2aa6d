"""Honest exit codes and streams, bounded inputs, and a CLI a newcomer can drive (issue 19):
errors on stderr as ``tcspec: error:``, no verdict without a usable line, sizes refused
before conversion, help with values and examples, "did you mean", ``--json``, words from
a file, a heartbeat on solver runs, and an explain picture with nothing clipped."""

from __future__ import annotations

import argparse
import json
import time
import xml.etree.ElementTree as ET

import pytest

import tcspec.smt.progress
import tcspec.words
from tcspec.cli import main
from tcspec.cli_args import build_parser
from tcspec.ref.vectorfiles import FROZEN_FILE, BadLine, read_vectors

ONE = "0x3f800000"
EIGHT_ONES = ",".join([ONE] * 8)
SVG = "{http://www.w3.org/2000/svg}"
CHAR_W = 6.7
"""Advance of one character of 11 px monospace (DejaVu Sans Mono: 0.602 em), rounded up."""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _frozen_line(name: str) -> int:
    for number, text in enumerate(FROZEN_FILE.read_text().splitlines(), 1):
        if json.loads(text).get("name") == name:
            return number
    raise AssertionError(name)


def _tf32_line() -> str:
    return f"{FROZEN_FILE}:{_frozen_line('tf32-1')}"


# ------------------------------------------------------------------ exit codes and streams


def test_classify_without_a_usable_line_is_bad_input_not_a_verdict(tmp_path, capsys):
    path = tmp_path / "observed.jsonl"
    path.write_text('{"a": [1]}\nnot json\n')
    code, out, err = run(capsys, "classify", str(path))
    assert code == 2 and "agree" not in out and "no candidate" not in out
    assert err.startswith("tcspec: error:") and "no usable line" in err


def test_classify_malformed_lines_go_to_stderr(tmp_path, capsys):
    good = FROZEN_FILE.read_text().splitlines()[0]
    path = tmp_path / "observed.jsonl"
    path.write_text(good + "\ngarbage\n")
    code, out, err = run(capsys, "classify", str(path))
    assert code == 2 and "malformed line" not in out and "survive" in out
    assert "tcspec: error: malformed line 2" in err


def test_check_malformed_lines_go_to_stderr_with_the_prefix(tmp_path, capsys):
    good = FROZEN_FILE.read_text().splitlines()[0]
    path = tmp_path / "v.jsonl"
    path.write_text(good + "\ngarbage\n")
    code, out, err = run(capsys, "check", str(path))
    assert code == 2 and "malformed line" not in out
    assert "tcspec: error: malformed line 2" in err


@pytest.mark.parametrize("argv", [["check", "--jobs", "0", "x"], ["validate", "--jobs", "-1"],
                                  ["gen", "--datapath", "tf32", "--cases", "1", "--out", "x",
                                   "--jobs", "0"], ["prove", "--jobs", "0"],
                                  ["check", "--jobs", "two", "x"]])
def test_jobs_is_validated_the_same_everywhere(argv, capsys):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.startswith("tcspec: error:") and "--jobs" in err
    assert len(err.strip().splitlines()) == 1


def test_parser_errors_are_one_prefixed_line(capsys):
    code, _, err = run(capsys, "eval", "--datapath")
    assert code == 2 and err.startswith("tcspec: error:") and len(err.strip().splitlines()) == 1


class _Huge:
    """A list-like A of 537M words that must never be iterated (the K check comes first)."""

    def __len__(self) -> int:
        return 537_000_000

    def __iter__(self):
        raise AssertionError("converted before the size check")

    def __getitem__(self, index):
        raise AssertionError("converted before the size check")


def test_sizes_are_checked_before_any_element_is_converted():
    from tcspec.ref.inputs import prepare_dot
    from tcspec.spec.catalog import lookup

    desc = lookup("dense-tf32").descriptor
    with pytest.raises(ValueError, match="K=8 A words, got 537000000"):
        prepare_dot(desc, _Huge(), [0] * 8, 0)


def test_a_line_longer_than_any_datapath_needs_is_refused_unparsed(tmp_path):
    path = tmp_path / "big.jsonl"
    good = FROZEN_FILE.read_text().splitlines()[0]
    path.write_text('{"a": [' + ",".join(["1"] * 400_000) + "]}\n" + good + "\n")
    started = time.monotonic()
    items = list(read_vectors(path))
    assert isinstance(items[0], BadLine) and "longer than" in items[0].problem
    assert not isinstance(items[1], BadLine) and time.monotonic() - started < 5


# ------------------------------------------------------------------ help, names, json, files


def _subparsers(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                for inner, subsub in _subparsers(sub):
                    yield f"{name} {inner}", subsub


def test_every_flag_has_help_and_every_command_has_examples():
    missing = []
    for name, sub in _subparsers(build_parser()):
        for action in sub._actions:
            if action.option_strings and not action.help:
                missing.append(f"{name} {action.option_strings[0]}")
        if " " not in name:
            assert "examples:" in sub.format_help(), name
    assert missing == []


@pytest.mark.parametrize(("argv", "suggestion"), [
    (["eval", "--datapath", "dense-tf23", "--a", "0", "--b", "0"], "dense-tf32"),
    (["eval", "--a-format", "e4m2", "--a", "0", "--b", "0"], "e4m3"),
    (["check", "--model", "exact-rme", "x"], "exact-rne"),
    (["prove", "--datapath", "dense-bf61"], "dense-bf16"),
])
def test_misspelled_names_get_a_suggestion(argv, suggestion, capsys):
    code, _, err = run(capsys, *argv)
    assert code == 2 and "did you mean" in err and suggestion in err


def test_json_for_check_classify_and_validate(tmp_path, capsys):
    path = tmp_path / "v.jsonl"
    path.write_text("\n".join(FROZEN_FILE.read_text().splitlines()[:3]) + "\n")
    code, out, _ = run(capsys, "check", "--json", str(path))
    assert code == 0 and json.loads(out)["files"][str(path)]["total"]["passed"] == 3
    code, out, _ = run(capsys, "classify", "--json", str(path))
    assert code == 0 and "hardware" in json.loads(out)["survivors"]
    code, out, _ = run(capsys, "validate", "--json")
    data = json.loads(out)
    assert code == 0 and data["ok"] and data["frozen"]["total"]["mismatched"] == 0


def test_words_from_a_file(tmp_path, capsys):
    words = tmp_path / "a.txt"
    words.write_text("# eight ones\n" + "\n".join([ONE] * 8) + "\n")
    code, out, _ = run(capsys, "eval", "--datapath", "tf32", "--a", f"@{words}",
                       "--b", EIGHT_ONES)
    assert code == 0 and "D = 0x41000000" in out
    code, _, err = run(capsys, "eval", "--datapath", "tf32", "--a", f"@{tmp_path}/none",
                       "--b", EIGHT_ONES)
    assert code == 2 and "cannot read" in err


# ------------------------------------------------------------------ progress


class _Slow:
    def text(self) -> str:
        return "table"


def test_probe_sensitivity_prints_a_heartbeat(capsys, monkeypatch):
    import tcspec.probe as probe

    monkeypatch.setattr(tcspec.smt.progress, "HEARTBEAT_SECONDS", 0.1)
    monkeypatch.setattr(probe, "sensitivity_table", lambda *a, **k: (time.sleep(1.0), _Slow())[1])
    code, out, err = run(capsys, "probe", "--datapath", "nvfp4", "--sensitivity")
    assert code == 0 and "table" in out and "still working" in err


def test_prove_prints_a_heartbeat_while_a_row_runs(capsys, monkeypatch):
    import tcspec.proof_matrix as prove

    monkeypatch.setattr(tcspec.smt.progress, "HEARTBEAT_SECONDS", 0.1)
    monkeypatch.setattr(prove, "run_rows",
                        lambda rows, settings, *progress: (time.sleep(1.0), [])[1])
    code, _, err = run(capsys, "prove", "--fast")
    assert code == 0 and "still working" in err


# ------------------------------------------------------------------ the explain picture


def _texts_fit(root: ET.Element) -> list[str]:
    """Texts whose estimated right edge runs past the canvas."""
    width = float(root.get("width"))
    overflow = []
    for text in root.iter(f"{SVG}text"):
        size = float(text.get("font-size", 11))
        right = float(text.get("x")) + len(text.text or "") * CHAR_W * size / 11
        if right > width:
            overflow.append(text.text or "")
    return overflow


def test_tf32_frozen_word_picture_has_no_clipped_text_and_a_legend(tmp_path, capsys):
    path = tmp_path / "p.svg"
    code, _, _ = run(capsys, "explain", "--line", _tf32_line(), "--svg", str(path))
    assert code == 0
    root = ET.parse(path).getroot()
    assert _texts_fit(root) == []
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "kept" in texts and "lost" in texts and "legend" in texts


def test_vs_draws_both_models(tmp_path, capsys):
    path = tmp_path / "p.svg"
    code, _, _ = run(capsys, "explain", "--line", _tf32_line(), "--vs", "window-24",
                     "--svg", str(path))
    assert code == 0
    root = ET.parse(path).getroot()
    titles = [t.text for t in root.iter(f"{SVG}text") if t.get("font-size") == "13"]
    assert any(t.endswith("hardware") for t in titles)
    assert any(t.endswith("window-24") for t in titles)
    assert _texts_fit(root) == []
    rows = [g for g in root.iter(f"{SVG}g") if g.get("class") == "sum"]
    assert len(rows) == 2


def test_vs_model_without_a_window_is_named_not_dropped(tmp_path, capsys):
    path = tmp_path / "p.svg"
    code, _, _ = run(capsys, "explain", "--line", _tf32_line(), "--vs", "exact-rne",
                     "--svg", str(path))
    texts = " ".join(t.text or "" for t in ET.parse(path).getroot().iter(f"{SVG}text"))
    assert code == 0 and "exact-rne" in texts and "no window alignment" in texts
