"""`tcspec check` on the FMA-chain and CDNA3 line files (SEMANTICS.md section 11).

The lines name their datapath by architecture and MMA-Sim qualifier; check replays them on
the batch lowering and compares NaN by class (the model's NaN is the host's).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from tcspec.ref.vectorfiles import ARCH_DIR, read_vectors
from tcspec.spec.catalog import ARCH_CATALOG
from tcspec.validate import check_files

AMD_FILES = sorted(p for p in ARCH_DIR.glob("*.jsonl*")
                   if p.name.startswith(("cdna", "ours__cdna3")) or ".f64." in p.name)


def test_check_passes_every_fma_chain_and_cdna3_line():
    report = check_files(AMD_FILES)
    total = report.total
    assert len(AMD_FILES) == 48
    assert total.cases == 4700 + 11 and total.passed == total.cases
    assert not report.bad_lines and not report.mismatches
    assert len(report.tallies) == 47


def test_the_lines_name_the_registered_families():
    families = {ARCH_CATALOG[r.datapath].descriptor.algorithm  # type: ignore[union-attr]
                for path in AMD_FILES for r in read_vectors(Path(path))
                if hasattr(r, "datapath")}
    assert families == {"fma-chain", "cdna3-rd"}


def test_a_wrong_nan_class_is_still_a_mismatch(tmp_path):
    """NaN by class only: a NaN where the model has a number fails."""
    with gzip.open(ARCH_DIR / "cdna3__mfma__f32_32x32x4_xf32.jsonl.gz", "rt") as f:
        line = next(r for r in map(json.loads, f) if r["expected_class"] == "normal")
    line["expected"], line["expected_class"] = 0x7FC00000, "nan"
    if "expected_hex" in line:
        line["expected_hex"] = "0x7FC00000"
    path = tmp_path / "wrong.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert check_files([path]).total.mismatched == 1
