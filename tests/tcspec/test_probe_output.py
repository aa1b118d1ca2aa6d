"""``tcspec probe`` without ``--out`` writes only probe data on stdout, and every verdict
names the constraints it was reached under."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcspec.cli import main
from tcspec.proofs.probes.probe import EQUIVALENT, Constraints, ProbeReport
from tcspec.proofs.probes.separate import Suite
from tcspec.spec.catalog import lookup

TF32 = lookup("dense-tf32").descriptor


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_probe_to_stdout_is_data_only_and_check_reads_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "probe", "--datapath", "tf32", "--vs", "exact-rne")
    assert code == 0
    lines = out.splitlines()
    assert lines and all(json.loads(line)["datapath"] == "dense-tf32" for line in lines)
    assert "verified probe(s)" in err and "probe 0:" in err
    code, out, err = run(capsys, "probe", "--datapath", "tf32", "--vs", "exact-rne",
                         "--format", "csv")
    assert code == 0 and out.startswith("name,datapath,") and "verified probe" in err


def test_probe_with_out_keeps_its_summary_on_stdout(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "probe", "--datapath", "tf32", "--vs", "exact-rne", "--out",
                       str(tmp_path / "p.jsonl"))
    assert code == 0 and "verified probe(s)" in out and "wrote 1 probe(s)" in out


def test_an_equivalence_under_zero_active_lanes_names_the_constraint() -> None:
    report = ProbeReport(EQUIVALENT, ["hardware", "exact-rne"])
    text = report.text(TF32, ["hardware", "exact-rne"], Constraints(active_lanes=0))
    assert "equivalent under active_lanes=0:" in text
    assert Constraints(active_lanes=0).describe() == {"active_lanes": 0}
    plain = report.text(TF32, ["hardware", "exact-rne"], Constraints())
    assert "equivalent: no input makes them differ" in plain


def test_every_constraint_is_named() -> None:
    every = Constraints(finite=True, active_lanes=2, c="zero", exp_range=(100, 140),
                        shape="cancel", fixed=(("scale_a0", 0x7F),), spread=3)
    assert every.under() == (" under finite, active_lanes=2, c=zero, exp_range=100:140, "
                             "shape=cancel, spread=3, scale_a0=0x7F")


def test_a_separating_suite_names_its_constraints() -> None:
    suite = Suite(TF32, ["hardware", "exact-rne"], constraints=Constraints(c="zero"))
    assert "under c=zero" in suite.text().splitlines()[0]


@pytest.mark.parametrize("extra", [["--active-lanes", "0"], ["--finite"], ["--c", "zero"]])
def test_vs_datapath_refuses_constraints_it_would_ignore(
        extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "probe", "--datapath", "tf32", "--vs-datapath", "tf32",
                         *extra)
    assert code == 2 and out == "" and "takes no input constraints" in err
    assert err.count("\n") == 1


def test_vs_datapath_refuses_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "probe", "--datapath", "tf32", "--vs-datapath", "tf32",
                       "--out", str(tmp_path / "p.jsonl"))
    assert code == 2 and "writes no probes" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [["export", "--lang", "smtlib", "--datapath", "tf32"],
                                  ["export", "--lang", "smtlib", "--datapath", "tf32",
                                   "--form", "script"],
                                  ["smtlib", "--datapath", "tf32"]])
def test_export_without_output_writes_only_smtlib_to_stdout(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == ""
    assert all(line[:1] in ("", ";", "(", " ") for line in out.splitlines()), out[:300]
    assert "exported" not in out and "wrote" not in out
