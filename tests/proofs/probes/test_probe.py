"""Probes, separating suites and sensitivity (proofs/probes/: probe, separate, sensitivity).

Small solver queries only: dense-tf32 with at most two active lanes.
"""

from __future__ import annotations

import csv
import io
import json

import pytest

from tcspec.cli import main
from tcspec.proofs.probes.probe import (
    EQUIVALENT,
    FOUND,
    Constraints,
    check_constraints,
    csv_header,
    find_probes,
    fixed_inputs,
    probe_record,
    render_probes,
)
from tcspec.proofs.probes.sensitivity import rule_constants
from tcspec.proofs.probes.separate import separating_suite
from tcspec.ref.compiled import compiled_model
from tcspec.spec.catalog import lookup
from tests.limits import SOLVER_LIMIT

TF32 = lookup("dense-tf32").descriptor
NVFP4 = lookup("dense-nvfp4").descriptor
TWO_LANES = Constraints(active_lanes=2)


@pytest.fixture(scope="module")
def window24_probes():
    return find_probes(TF32, "hardware", "window-24", TWO_LANES, count=3, timeout=SOLVER_LIMIT)


def test_probe_separates_on_the_compiled_lowerings(window24_probes):
    report = window24_probes
    assert report.status == FOUND and len(report.probes) == 3
    for probe in report.probes:
        hardware = compiled_model("hardware", TF32)(*probe.words)
        window24 = compiled_model("window-24", TF32)(*probe.words)
        assert hardware != window24
        assert probe.predicted == {"hardware": hardware, "window-24": window24}
        assert probe.profile[0] <= 2
        assert all(w & 0x1FFF == 0 for w in probe.words[:2 * TF32.k])


def test_count_gives_pairwise_different_inputs(window24_probes):
    inputs = {tuple(p.words) for p in window24_probes.probes}
    assert len(inputs) == 3


def test_equivalence_under_constraints_is_not_a_failure():
    zero = Constraints(shape="c-only", c="zero")
    report = find_probes(TF32, "hardware", "window-no-clamp", zero, timeout=SOLVER_LIMIT)
    assert report.status == EQUIVALENT and not report.probes
    assert "equivalent" in report.text(TF32, report.models, zero)


@pytest.mark.parametrize("constraints", [
    Constraints(active_lanes=9), Constraints(exp_range=(5, 1)),
    Constraints(exp_range=(300, 400)), Constraints(shape="cancel", active_lanes=1),
    Constraints(fixed=(("scale_a0", 1),)),
])
def test_contradictory_constraints_are_bad_input(constraints):
    with pytest.raises(ValueError):
        check_constraints(TF32, constraints)


def test_fixed_scales_reuse_one_byte_and_check_metadata():
    assert fixed_inputs(NVFP4, [0x38]) == tuple((f"scale_a{i}", 0x38) for i in range(4))
    with pytest.raises(ValueError, match="no scale bytes"):
        fixed_inputs(TF32, [0x7F])
    with pytest.raises(ValueError):
        fixed_inputs(lookup("sparse-tf32").descriptor, metadata=[0x11111111])


def test_records_and_csv_columns(window24_probes):
    probe = window24_probes.probes[0]
    record = probe_record(probe, "p0", "tcspec probe ...")
    assert "expected" not in record and record["predicted"] == probe.predicted
    assert record["source"].startswith("tcspec")
    line = json.loads(render_probes([record], TF32, ["hardware", "window-24"], "jsonl"))
    assert line["a"] == probe.words[:8] and line["c"] == probe.words[16]
    rows = list(csv.reader(io.StringIO(render_probes([record], TF32,
                                                     ["hardware", "window-24"], "csv"))))
    header = csv_header(TF32, ["hardware", "window-24"])
    assert rows[0] == header
    assert header[9:11] == ["a0", "a1"] and header[-3:] == ["c", "d_hardware", "d_window-24"]
    assert int(rows[1][header.index("b1")], 16) == probe.words[9]
    assert rows[1][-1] == f"0x{probe.predicted['window-24']:08X}"


def test_separating_suite_covers_every_pair():
    suite = separating_suite(TF32, ["hardware", "window-24", "window-26"], TWO_LANES,
                             timeout=SOLVER_LIMIT)
    assert len(suite.covered()) == 3 and not suite.equivalent and not suite.undecided
    assert 1 <= len(suite.suite) <= 3
    assert suite.pool_minimum is not None and suite.pool_minimum <= len(suite.suite)


def test_rule_constants_and_their_neighbours():
    tf32 = {c.name: c for c in rule_constants(TF32)}
    assert tf32["window width"].value == 25 and tf32["clamp of R"].value == -133
    assert [v for v, _ in tf32["clamp of R"].neighbours] == [-134, -132]
    nvfp4 = {c.name: c for c in rule_constants(NVFP4)}
    assert nvfp4["product window"].value == 39 and nvfp4["scale window"].value == 35
    assert [v for v, _ in nvfp4["product group"].neighbours] == [2, 8]
    low, high = nvfp4["C-dominant group"].neighbours
    assert low[0] == 8 and high[1] is None
    assert "clamp of R" not in {c.name for c in rule_constants(lookup("dense-e4m3").descriptor)}


@pytest.mark.parametrize("argv", [
    ["--vs", "nvfp4-k16"],
    ["--vs", "no-such-model"],
    ["--vs", "window-24", "--active-lanes", "9"],
    ["--vs", "window-24", "--exp-range", "3"],
    ["--vs", "window-24", "--separate", "hardware,window-24"],
    ["--separate", "hardware"],
])
def test_cli_bad_input_is_one_line_and_exit_2(argv, capsys):
    assert main(["probe", "--datapath", "dense-tf32", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tcspec: error:")


def test_cli_writes_csv(tmp_path, capsys):
    out = tmp_path / "p.csv"
    assert main(["probe", "--datapath", "dense-tf32", "--vs", "window-24", "--active-lanes",
                 "2", "--count", "2", "--format", "csv", "--out", str(out),
                 "--timeout", str(SOLVER_LIMIT)]) == 0
    rows = out.read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("name,datapath,a_format")
    assert "verified probe" in capsys.readouterr().out
