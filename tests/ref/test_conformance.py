"""One-source conformance: every lowering returns the same word for the same input.

The matrix is every specified datapath of the catalog x every lowering of
``tests/lowerings.py`` (interpreted scalar, compiled scalar, NumPy batch,
Z3 formula evaluated, SMT-LIB2 text re-parsed and evaluated), over random
raw, finite-only and edge-heavy inputs, over the vendored reference
vectors and over the architecture datapaths' MMA-Sim vectors. The default suite samples;
``pytest -m full`` runs the whole matrix.
"""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings

from tcspec.ref.inputs import prepare_dot
from tcspec.ref.vectorfiles import REFERENCE_DIR, Record, arch_vector_files, read_vectors
from tcspec.spec.catalog import CATALOG
from tcspec.strategies import CATEGORIES, dot_words
from tests.lowerings import LOWERINGS, SPECIFIED, compare

SAMPLE_EXAMPLES = 4
FULL_EXAMPLES = 40
SAMPLE_REFERENCE_LINES = 3


def _agree(desc, cases):
    comparison = compare(desc, cases)
    assert set(comparison.results) == set(LOWERINGS)
    assert comparison.disagreements() == [], f"lowerings disagree on {desc.name}: {cases}"
    return comparison.reference


def _matrix(name: str, category: str, examples: int) -> None:
    desc = CATALOG[name].descriptor

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(words=dot_words(desc, category))
    def check(words):
        _agree(desc, [words])

    check()


SAMPLE = [(name, category) for name in SPECIFIED for category in CATEGORIES
          if CATALOG[name].is_tcgen05 or category == "edge"]
"""The default sample: every category on tcgen05; edge cases on the architecture datapaths,
whose raw and finite lines the MMA-Sim vector sample below covers."""


@pytest.mark.parametrize("name, category", SAMPLE)
def test_lowerings_agree_sample(name, category):
    _matrix(name, category, SAMPLE_EXAMPLES)


@pytest.mark.full
@pytest.mark.parametrize("category", CATEGORIES)
@pytest.mark.parametrize("name", SPECIFIED)
def test_lowerings_agree_full(name, category):
    _matrix(name, category, FULL_EXAMPLES)


def _reference_cases(name: str, per_category: int | None):
    path = REFERENCE_DIR / f"{name}.jsonl.gz"
    index = json.loads((REFERENCE_DIR / "INDEX.json").read_text())
    entry = next(f for f in index["files"] if f["file"] == path.name)
    wanted = set()
    for ranges in entry["category_lines"].values():
        for first, last in ranges:
            stop = last if per_category is None else min(last, first + per_category - 1)
            wanted.update(range(first, stop + 1))
    cases = []
    with gzip.open(path, "rt") as handle:
        for number, line in enumerate(handle, 1):
            if number in wanted:
                rec = json.loads(line)
                desc = CATALOG[name].descriptor
                words = prepare_dot(desc, rec["a"], rec["b"], rec["c"], rec.get("scale_a"),
                                    rec.get("scale_b"), rec.get("sparse_metadata"))
                cases.append((words, rec["expected"]))
    return cases


def _reference_matrix(name: str, per_category: int | None) -> None:
    cases = _reference_cases(name, per_category)
    got = _agree(CATALOG[name].descriptor, [w for w, _ in cases])
    assert got == [expected for _, expected in cases]


WITH_REFERENCE = [n for n in SPECIFIED if (REFERENCE_DIR / f"{n}.jsonl.gz").exists()]


@pytest.mark.parametrize("name", WITH_REFERENCE)
def test_lowerings_agree_on_reference_vectors_sample(name):
    _reference_matrix(name, SAMPLE_REFERENCE_LINES)


@pytest.mark.full
@pytest.mark.parametrize("name", WITH_REFERENCE)
def test_lowerings_agree_on_every_reference_vector(name):
    _reference_matrix(name, None)


ARCH_FILES = arch_vector_files()
"""The architecture datapaths with MMA-Sim vectors (SEMANTICS.md section 10)."""


def _arch_matrix(name: str, per_mode: int | None) -> None:
    """Every lowering on the shipped MMA-Sim lines of ``name`` (the first ``per_mode`` lines of
    each generation mode), and the reference lowering equal to the expected words (NaN by
    class where the datapath's NaN is the host's)."""
    records = [r for r in read_vectors(ARCH_FILES[name]) if isinstance(r, Record)]
    if per_mode is not None:
        seen: dict[str, int] = {}
        chosen = []
        for record in records:
            mode = record.raw.get("mode", "")
            if seen.get(mode, 0) < per_mode:
                seen[mode] = seen.get(mode, 0) + 1
                chosen.append(record)
        records = chosen
    got = _agree(CATALOG[name].descriptor, [r.words for r in records])
    assert all(r.matches(w) for r, w in zip(records, got)), name


@pytest.mark.parametrize("name", sorted(ARCH_FILES))
def test_lowerings_agree_on_arch_vectors_sample(name):
    _arch_matrix(name, 1)


@pytest.mark.full
@pytest.mark.parametrize("name", sorted(ARCH_FILES))
def test_lowerings_agree_on_every_arch_vector(name):
    _arch_matrix(name, None)


def _pad(words, k):
    return list(words) + [0] * (k - len(words))


BOUNDARY_CASES = [
    # F16 D: ties to even, carry into infinity, negative results that round to +0
    ("mixed-e4m3-e4m3-f16", [0x08], [0x10], 0x3C00, 0x3C00),
    ("mixed-e4m3-e4m3-f16", [0x08] * 3, [0x10] * 3, 0x3C00, 0x3C02),
    ("mixed-e4m3-e4m3-f16", [0x48], [0x48], 0x7BFF, 0x7C00),
    ("mixed-e4m3-e4m3-f16", [0xC8], [0x48], 0xFBFF, 0xFC00),
    ("mixed-e5m2-e4m3-f16", [0x01], [0x01], 0x8001, 0x0000),
    ("mixed-e5m2-e4m3-f16", [0x81], [0x01], 0x0000, 0x0000),
    ("mixed-e5m2-e4m3-f16", [0x81] * 3, [0x01] * 3, 0x0000, 0x8002),
    ("mixed-e5m2-e4m3-f16", [0x01], [0x01], 0x03FF, 0x0400),
    # integer saturation at both ends, and the wrap it replaces
    ("i8-s8-s8-saturate", [0x01], [0x01], 0x7FFFFFFF, 0x7FFFFFFF),
    ("i8-s8-s8-wrap", [0x01], [0x01], 0x7FFFFFFF, 0x80000000),
    ("i8-s8-s8-saturate", [0xFF], [0x01], 0x80000000, 0x80000000),
    ("i8-s8-s8-wrap", [0xFF], [0x01], 0x80000000, 0x7FFFFFFF),
    ("i8-u8-u8-saturate", [0xFF] * 32, [0xFF] * 32, 0x7FFFFFFF, 0x7FFFFFFF),
    ("i8-s8-u8-saturate", [0x80] * 32, [0xFF] * 32, 0x80000000, 0x80000000),
]


@pytest.mark.parametrize("name, a, b, c, expected", BOUNDARY_CASES)
def test_lowerings_agree_on_rounding_and_saturation_boundaries(name, a, b, c, expected):
    desc = CATALOG[name].descriptor
    words = prepare_dot(desc, _pad(a, desc.k), _pad(b, desc.k), c)
    assert _agree(desc, [words]) == [expected]
