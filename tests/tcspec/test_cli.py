"""The tcspec command line (tcspec/cli.py): outputs, exit codes, and one-line errors."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from tcspec.cli import main
from tcspec.ref.vectorfiles import REFERENCE_DIR

ONE = "0x3f800000"
EIGHT_ONES = ",".join([ONE] * 8)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_every_datapath_with_status(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    assert "dense-tf32" in out and "validated: B200 words" in out
    assert "mixed-f16-f16-f16" in out and "unvalidated" in out
    code, out, _ = run(capsys, "list", "--json")
    rows = json.loads(out)
    assert sum(r["hardware_validated_family"] for r in rows) == 46
    tf32 = next(r for r in rows if r["name"] == "dense-tf32")
    assert tf32["b200_words"] == 9 and tf32["reference_vectors"] == 600
    assert tf32["arch"] == "sm_100" and tf32["evidence"] == "hardware words (B200)"
    hopper = next(r for r in rows if r["name"] == "sm_90-mma-m16n8k16-f16-f16-c32-d32")
    assert hopper["evidence"] == "published model only" and hopper["arch_vectors"] == 100


def test_list_arch_shows_one_architecture_with_evidence(capsys):
    code, out, _ = run(capsys, "list", "--arch", "sm_90", "--json")
    rows = json.loads(out)
    assert code == 0 and {r["arch"] for r in rows} == {"sm_90"}
    assert {r["evidence"] for r in rows} == {"published model only"}
    assert any(r["instruction"] == "wgmma" for r in rows)
    code, out, _ = run(capsys, "list", "--arch", "sm_100")
    assert "dense-tf32" in out and "sm_100-mma-m16n8k8-f16-f16-c32-d32" in out
    code, _, err = run(capsys, "list", "--arch", "sm_33")
    assert code == 2 and "unknown architecture 'sm_33'" in err


def test_eval_prints_hex_and_value(capsys):
    code, out, _ = run(capsys, "eval", "--datapath", "dense-tf32", "--a", EIGHT_ONES,
                       "--b", EIGHT_ONES, "--c", "0x0")
    assert code == 0
    assert "D = 0x41000000  (8.0)" in out
    code, out, _ = run(capsys, "eval", "--datapath", "tf32", "--a", EIGHT_ONES, "--b",
                       ",".join(["3f800000"] * 8), "--c", "0x7f800000")
    assert "0x7F800000  (inf)" in out
    code, out, _ = run(capsys, "eval", "--a-format", "s8", "--d-type", "s32", "--saturate",
                       "--a", ",".join(["0x7f"] * 32), "--b", ",".join(["0x7f"] * 32),
                       "--c", "0x7fffffff")
    assert code == 0 and "0x7FFFFFFF  (2147483647)" in out


def test_eval_json_is_a_vector_line_that_check_accepts(capsys, tmp_path):
    code, out, _ = run(capsys, "eval", "--a-format", "e2m1", "--b-format", "e4m3", "--d-type",
                       "f16", "--a", ",".join(["0x2"] * 32), "--b", ",".join(["0x38"] * 32),
                       "--json")
    assert code == 0
    line = json.loads(out)
    assert line["datapath"] == "mixed-e2m1-e4m3-f16" and line["expected"] == 0x5000
    path = tmp_path / "mine.jsonl"
    path.write_text(out)
    code, out, _ = run(capsys, "check", str(path))
    assert code == 0 and "mixed-e2m1-e4m3-f16" in out


@pytest.mark.parametrize("argv, message", [
    (["eval", "--datapath", "dense-tf32", "--a", "0x1,zz", "--b", EIGHT_ONES],
     r"--a\[1\]: 'zz' is not a hex word"),
    (["eval", "--datapath", "dense-tf32", "--a", ",".join([ONE] * 7), "--b", EIGHT_ONES],
     "takes K=8 A words, got 7"),
    (["eval", "--datapath", "dense-tf64", "--a", EIGHT_ONES, "--b", EIGHT_ONES],
     "unknown datapath 'dense-tf64'"),
    (["eval", "--a-format", "fp64", "--a", EIGHT_ONES, "--b", EIGHT_ONES],
     "unknown a_format 'fp64'"),
    (["eval", "--datapath", "tf32", "--a", EIGHT_ONES, "--b", EIGHT_ONES, "--c", "0x1ffffffff"],
     "does not fit in 32 bits"),
    (["eval", "--a", EIGHT_ONES, "--b", EIGHT_ONES], "give --datapath"),
    (["eval", "--datapath", "tf32", "--a-format", "tf32", "--a", EIGHT_ONES, "--b", EIGHT_ONES],
     "either --datapath or descriptor fields"),
    (["eval", "--a-format", "tf32", "--b-format", "bf16", "--a", EIGHT_ONES, "--b", EIGHT_ONES],
     "tf32 A requires tf32 B"),
    (["check", "/nonexistent/file.jsonl"], "no such vector file"),
    (["smtlib", "--datapath", "nope"], "unknown datapath"),
])
def test_bad_input_is_one_line_exit_2_no_traceback(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tcspec: error: ")
    assert __import__("re").search(message, lines[0]), lines[0]


def test_validate_reports_and_passes(capsys):
    code, out, _ = run(capsys, "validate")
    assert code == 0
    assert "0 mismatch" in out and "B200 frozen words:" in out


def test_check_reference_file_has_no_mismatch(capsys):
    code, out, _ = run(capsys, "check", str(REFERENCE_DIR / "dense-tf32.jsonl.gz"))
    assert code == 0
    assert "dense-tf32" in out and "600     600" in out


def test_check_reports_mismatches_as_hex_and_exits_1(capsys, tmp_path):
    with gzip.open(REFERENCE_DIR / "dense-tf32.jsonl.gz", "rt") as handle:
        lines = handle.read().splitlines()[:3]
    doctored = json.loads(lines[1])
    doctored["expected"] ^= 1
    path = tmp_path / "doctored.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(doctored), "garbage", lines[2]]) + "\n")
    code, out, err = run(capsys, "check", str(path))
    assert code == 1
    assert "tcspec: error: malformed line 3" in err and "malformed" not in out
    assert f"expected 0x{doctored['expected']:08X}, got 0x{doctored['expected'] ^ 1:08X}" in out
    assert "total" in out and "     3       2          1" in out


def test_check_with_only_malformed_lines_exits_2(capsys, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"a": [1]}\n')
    code, _out, err = run(capsys, "check", str(path))
    assert code == 2 and "missing field 'descriptor'" in err and "tcspec: error:" in err


def test_smtlib_to_stdout_and_file(capsys, tmp_path):
    code, out, _ = run(capsys, "smtlib", "--datapath", "dense-tf32")
    assert code == 0 and "(set-logic QF_BV)" in out
    target = tmp_path / "tf32.smt2"
    code, out, _ = run(capsys, "smtlib", "--datapath", "tf32", "-o", str(target))
    assert code == 0 and target.read_text().startswith("; tcspec datapath dense-tf32")


def test_tour_and_bench_run(capsys):
    code, out, _ = run(capsys, "tour")
    assert code == 0 and "0x3F7FFFFE" in out
    code, out, _ = run(capsys, "bench", "--datapath", "tf32", "--rows", "200",
                       "--scalar-seconds", "0.05")
    assert code == 0 and "dense-tf32" in out and "NumPy on" in out and "of 1 datapaths" in out
    code, out, _ = run(capsys, "bench", "--datapath", "tf32", "--rows", "200",
                       "--scalar-seconds", "0.02", "--markdown")
    assert code == 0 and out.startswith("| datapath | K |") and "\n| dense-tf32 | 8 | " in out
    code, _, err = run(capsys, "bench", "--all", "--datapath", "tf32")
    assert code == 2 and "--all or --datapath" in err
    code, _, err = run(capsys, "bench", "--json", "--markdown")
    assert code == 2 and "--json or --markdown" in err


def test_bench_ratio_summary():
    from tcspec.bench import ratio_summary

    rows = [{"datapath": "x", "kernel": 300.0, "numpy": 10.0},
            {"datapath": "y", "kernel": 150.0, "numpy": 10.0},
            {"datapath": "z", "kernel": None, "numpy": 10.0}]
    assert ratio_summary(rows) == ("kernel >= 20x NumPy on 1 of 2 datapaths; median 30.0x; "
                                   "lowest: y 15.0x, x 30.0x")
    assert ratio_summary([]) is None


def test_module_entry_point_exits_with_status():
    proc = subprocess.run([sys.executable, "-m", "tcspec.cli", "eval", "--datapath", "tf32",
                           "--a", "nothex", "--b", EIGHT_ONES], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("tcspec: error: --a[0]: 'nothex' is not a hex word")


def test_installed_console_script():
    """`tcspec` on PATH (after `pip install`) runs the same main()."""
    import shutil

    script = shutil.which("tcspec")
    if script is None:
        pytest.skip("tcspec is not installed on PATH")
    proc = subprocess.run([script, "list", "--json"], capture_output=True, text=True)
    assert proc.returncode == 0 and json.loads(proc.stdout)


def test_check_empty_and_corrupt_files_exit_2(capsys, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    code, _, err = run(capsys, "check", str(empty))
    assert code == 2 and "no usable vector line" in err
    corrupt = tmp_path / "corrupt.jsonl.gz"
    corrupt.write_bytes(b"this is not gzip")
    code, _out, err = run(capsys, "check", str(corrupt))
    assert code == 2 and "unreadable" in err


def test_conform_runs_every_lowering_and_reports_disagreement(capsys, monkeypatch):
    code, out, _ = run(capsys, "conform", "--datapath", "tf32", "--cases", "3")
    assert code == 0 and "dense-tf32" in out and "agree" in out
    import tcspec.conformance as conformance

    broken = dict(conformance.LOWERINGS)
    broken["numpy"] = lambda desc, cases: [w ^ 1 for w in conformance.numpy_batch(desc, cases)]
    monkeypatch.setattr(conformance, "LOWERINGS", broken)
    code, out, _ = run(capsys, "conform", "--datapath", "i8-s8-s8-wrap", "--cases", "2")
    assert code == 1 and "DISAGREE" in out and "numpy=0x" in out


def test_check_model_runs_a_candidate_and_skips_lines_it_does_not_apply_to(capsys):
    candidates = str(REFERENCE_DIR.parent / "candidates" / "mma-sim.jsonl")
    code, out, _ = run(capsys, "check", "--model", "mma-sim", candidates)
    assert code == 0 and "against model mma-sim" in out and " 124     124 " in out
    code, out, _ = run(capsys, "check", "--model", "nvfp4-k16", candidates)
    assert code == 1 and "112 line(s) skipped" in out
    code, out, _ = run(capsys, "check", "--model", "hardware", candidates)
    assert code == 1


@pytest.mark.parametrize("argv, message", [
    (["check", "--model", "exact-rn", str(REFERENCE_DIR / "dense-tf32.jsonl.gz")],
     "unknown model 'exact-rn'"),
    (["check", "--model", "nvfp4-k16", str(REFERENCE_DIR / "dense-tf32.jsonl.gz")],
     "model 'nvfp4-k16' applies to none of the 600 lines"),
])
def test_check_model_bad_input_is_one_line_exit_2(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and message in lines[0], err


def test_list_candidates_prints_where_each_applies(capsys):
    code, out, _ = run(capsys, "list", "--candidates")
    assert code == 0
    for name in ("exact-rne", "two-stage", "window-rne-align", "nvfp4-k16", "mma-sim"):
        assert name in out
    assert "tf32 and bf16 datapaths" in out
    code, out, _ = run(capsys, "list", "--candidates", "--json")
    rows = {row["name"]: row for row in json.loads(out)}
    assert "dense-nvfp4" in rows["nvfp4-per-product"]["datapaths"]
    assert rows["window-no-clamp"]["datapaths"] == ["dense-tf32", "dense-bf16", "sparse-tf32",
                                                     "sparse-bf16"]
