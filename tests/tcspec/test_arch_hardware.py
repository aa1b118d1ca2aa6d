"""Hardware words of another architecture (ref/vectors/hardware/README.md): read by
``check`` (``--model``), ``classify`` and ``list``; a disagreement with the published model
is a finding, never an edited word.

The words here are not hardware observations: MMA-Sim's own lines, one of them given the
word that B200's zero rule predicts, stand in for an H200 file so that the plumbing is
exercised end to end.
"""

from __future__ import annotations

import gzip
import json

import pytest

from tcspec import cli
from tcspec.ref import vectorfiles
from tcspec.ref.compiled import compiled_model
from tcspec.ref.vectorfiles import ARCH_DIR, read_vectors
from tcspec.spec.catalog import ARCH_CATALOG

NAME = "sm_90-mma-m16n8k8-bf16-bf16-c32-d32"
SOURCE = "sm_90__mma__m16n8k8.f32.bf16.bf16.f32.jsonl.gz"


def _h200_file(tmp_path):
    """Six MMA-Sim lines as an 'H200' file; the first zero-times-huge line where B200's rule
    gives another word carries that word."""
    desc = ARCH_CATALOG[NAME].descriptor
    b200 = compiled_model("b200-zeros", desc)
    records = list(read_vectors(ARCH_DIR / SOURCE))
    with gzip.open(ARCH_DIR / SOURCE, "rt") as handle:
        lines = [json.loads(text) for text in handle]
    differing = next(i for i, r in enumerate(records) if b200(*r.words) != r.expected)
    chosen = [0, 1, 2, 10, 11, differing]
    out = []
    for i in chosen:
        line = dict(lines[i], gpu="H200", provenance="hardware", source="test stand-in")
        if i == differing:
            line["expected"] = b200(*records[i].words)
            line["expected_hex"] = f"0x{line['expected']:08X}"
        out.append(line)
    path = tmp_path / "h200.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in out))
    return path


def _run(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_check_reports_a_disagreement_as_a_finding_about_the_model(capsys, tmp_path):
    path = _h200_file(tmp_path)
    code, out, _ = _run(capsys, "check", str(path))
    assert code == 1 and "finding: 1 hardware word(s) (H200) disagree with the published" in out
    code, out, _ = _run(capsys, "check", str(path), "--model", "b200-zeros")
    assert code == 0 and "finding" not in out


def test_classify_names_the_candidates_the_observed_words_leave(capsys, tmp_path):
    code, out, _ = _run(capsys, "classify", str(_h200_file(tmp_path)))
    assert code == 0
    family = out.split("family sm_90 mma")[1].split("whole file")[0]
    survive = family.split("survive:")[1].split("\n")[0]
    assert "b200-zeros" in survive and "b200-rules" in survive
    assert "hardware" not in survive and "mma-sim" not in survive


def test_list_shows_hardware_words_of_the_gpu(capsys, tmp_path, monkeypatch):
    _h200_file(tmp_path)
    monkeypatch.setattr(vectorfiles, "HARDWARE_DIR", tmp_path)
    code, out, _ = _run(capsys, "list", "--arch", "sm_90", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0 and rows[NAME]["evidence"] == "hardware words (H200)"
    assert rows[NAME]["hardware_words"] == 6
    other = rows["sm_90-mma-m16n8k16-f16-f16-c32-d32"]
    assert other["evidence"] == "published model only" and other["hardware_words"] == 0


@pytest.mark.parametrize("field, value, problem", [
    ("arch", "sm_33", "unknown arch 'sm_33'"),
    ("k", 16, "k=16 but sm_90-mma-m16n8k8-bf16-bf16-c32-d32 has K=8"),
])
def test_a_bad_architecture_line_names_its_problem(tmp_path, field, value, problem):
    with gzip.open(ARCH_DIR / SOURCE, "rt") as handle:
        line = json.loads(handle.readline())
    line[field] = value
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (bad,) = list(read_vectors(path))
    assert problem in bad.problem


def test_check_reads_a_directory_of_architecture_line_files(capsys):
    code, out, _ = _run(capsys, "check", str(ARCH_DIR))
    total = out.split("\ntotal")[1].split()
    assert code == 0 and total[0] == total[1] and int(total[2]) == 0
    assert int(total[0]) >= 10_000
