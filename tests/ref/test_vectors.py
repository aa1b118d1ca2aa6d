"""Frozen B200 words and the vendored reference vectors (ref/vectors/).

A mismatch here is a finding about the specification, never a reason to
edit an expected word.
"""

from __future__ import annotations

import gzip
import json

import pytest

from tcspec.ref.vectorfiles import (
    FROZEN_FILE,
    REFERENCE_DIR,
    BadLine,
    read_vectors,
    reference_files,
)
from tcspec.spec.catalog import CATALOG, is_specified
from tcspec.validate import check_file, validate_frozen

REFERENCE_FILES = reference_files()


def test_vectors_are_vendored_with_their_provenance():
    assert FROZEN_FILE.is_file()
    assert "captured on NVIDIA B200 hardware" in (FROZEN_FILE.parent / "README.md").read_text()
    assert len(REFERENCE_FILES) == 89
    index = json.loads((REFERENCE_DIR / "INDEX.json").read_text())
    assert index["total_cases"] == 35100
    assert sum(1 for line in FROZEN_FILE.read_text().splitlines() if line.strip()) == 77


def test_every_frozen_b200_word_of_a_specified_datapath_passes():
    report = validate_frozen()
    assert not report.bad_lines
    assert [(m.record.name, hex(m.got)) for m in report.mismatches] == []
    specified = {r.name for r in report.passed_records}
    for name in ("tf32-0", "tf32-negative-zero", "tf32-minimum-subnormal", "tf32-nan",
                 "tf32-infinity", "tf32-infinity-times-zero", "tf32-low-payload-pretruncate",
                 "test_subnormal_window_floor[2]-tf32", "nvfp4-k4-product-carry",
                 "nvfp4-scale-nan", "mxf8f6f4-scale-nan", "mxf4nvf4-2x",
                 "mxf4nvf4-e2m1-4x-negative-zero-ue4m3", "mixed-e2m1-e4m3-f16-c-nan",
                 "i8-s8-s8-sat", "e4m3-nan", "bf16-low-payload-pretruncate"):
        assert name in specified
    assert report.total.passed + report.total.unspecified == 77
    for record in report.unspecified_names:
        assert not is_specified(record.descriptor)


@pytest.mark.parametrize("path", REFERENCE_FILES, ids=lambda p: p.name.split(".")[0])
def test_reference_file_replays_without_mismatch(path):
    report = check_file(path)
    assert not report.bad_lines
    assert report.total.mismatched == 0, [
        (m.record.line, hex(m.record.expected), hex(m.got)) for m in report.mismatches[:5]]
    name = path.name.split(".")[0]
    if is_specified(CATALOG[name].descriptor):
        assert report.total.passed == report.total.cases > 0


def test_reading_goes_on_past_bad_lines(tmp_path):
    with gzip.open(REFERENCE_DIR / "dense-tf32.jsonl.gz", "rt") as handle:
        good = handle.readline()
    record = json.loads(good)
    bad_hex = dict(record, a=["0x3f800000"] * 8)
    wrong_k = dict(record, a=record["a"][:7])
    bad_format = dict(record, descriptor={"a_format": "tf64"})
    wrong_name = dict(record, datapath="dense-bf16")
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([good.strip(), "{not json", json.dumps(bad_hex),
                               json.dumps(wrong_k), "", json.dumps(bad_format),
                               json.dumps(wrong_name), good.strip()]) + "\n")
    items = list(read_vectors(path))
    bad = [i for i in items if isinstance(i, BadLine)]
    assert [b.line for b in bad] == [2, 3, 4, 6, 7]
    assert "not JSON" in bad[0].problem
    assert "int raw word" in bad[1].problem
    assert "K=8" in bad[2].problem
    assert "tf64" in bad[3].problem
    assert "does not match its descriptor" in bad[4].problem
    report = check_file(path)
    assert report.total.passed == 2 and len(report.bad_lines) == 5
