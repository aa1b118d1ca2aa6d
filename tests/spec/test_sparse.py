"""Sparse datapaths (spec/sparse.py, SEMANTICS.md section 5).

The selection is checked against a separate reading of section 5 written
here with plain ints (nibbles, fields, pairs), and the arithmetic against
the independent rational oracle on the compacted operands and on the full
logical K with disabled lanes zeroed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from tcspec import evaluate, mma, mma_dot
from tcspec.cli import main
from tcspec.ref import oracle
from tcspec.ref.compiled import compiled_dot
from tcspec.ref.vectorfiles import frozen_record
from tcspec.smt.formula import reparsed_z3, traced, z3_formula
from tcspec.spec.catalog import CATALOG
from tcspec.spec.formats import FORMATS
from tcspec.spec.window import default_clamp
from tcspec.strategies import dot_words

SPARSE = [n for n, e in CATALOG.items() if e.descriptor.sparse]


def kept_positions(desc, words):
    """Section 5 on ints: the kept logical positions, in ascending order."""
    size, rule = desc.sparse_chunk
    kept = []
    for chunk in range(desc.k // size):
        selector = (words[chunk // 8] >> (4 * (chunk % 8))) & 0xF
        base = chunk * size
        if rule == "one":
            kept.append(base + (1 if selector == 0xE else 0))
            continue
        fields = sorted({selector & 3, selector >> 2})
        if rule == "two":
            kept += [base + f for f in fields]
        else:
            kept += [base + 2 * p + i for p in fields for i in (0, 1)]
    return kept


def test_eighteen_sparse_datapaths_are_catalogued():
    assert len(SPARSE) == 18


@pytest.mark.parametrize("category", ["raw", "edge"])
@pytest.mark.parametrize("name", SPARSE)
def test_sparse_is_the_dense_arithmetic_on_the_selected_operands(name, category):
    desc = CATALOG[name].descriptor
    dot = compiled_dot(desc)
    k = desc.k
    s = desc.scale_count

    @settings(max_examples=20, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(words=dot_words(desc, category))
    def check(words):
        a, b, c = words[:k], words[k:2 * k], words[2 * k]
        scale_a, scale_b = words[2 * k + 1:2 * k + 1 + s], words[2 * k + 1 + s:2 * k + 1 + 2 * s]
        kept = kept_positions(desc, words[2 * k + 1 + 2 * s:])
        a_active, b_active = [a[i] for i in kept], [b[i] for i in kept]
        if desc.family == "window":
            clamp = default_clamp(FORMATS[desc.a_format], FORMATS[desc.b_format])
            want = oracle.window_model(a_active, b_active, c, a_format=desc.a_format,
                                       clamp=clamp)
            zeroed_a = [w if i in kept else 0 for i, w in enumerate(a)]
            zeroed_b = [w if i in kept else 0 for i, w in enumerate(b)]
            assert oracle.window_model(zeroed_a, zeroed_b, c, a_format=desc.a_format,
                                       clamp=clamp) == want
        else:
            family = oracle.block_family(desc.kind, desc.scaling)
            want = oracle.block_model(a_active, b_active, c, scale_a, scale_b,
                                      a_format=desc.a_format, scaling=desc.scaling,
                                      family=family, block=desc.scale_block)
        assert dot(*words) == want

    check()


def test_disabled_lanes_never_reach_the_decoders():
    nan, one = 0x7FC00000, 0x3F800000
    a = [one, nan] * 8
    b = [one, 0x7F800000] * 8
    assert mma_dot(a, b, 0, a_format="tf32", sparse_metadata=0x44444444) == 0x41000000
    assert mma_dot(a, b, 0, a_format="tf32", sparse_metadata=0x4444444E) == 0x7FFFFFFF


def _e4m3(value):
    return next(w for w in range(0x7F) if oracle.decode("e4m3", w)[0] == value)


def test_nibbles_are_read_least_significant_first_and_one_word_is_reused():
    """Chunk j holds j+1 at its first position; dropping one chunk shows which nibble did."""
    a = [w for j in range(16) for w in (_e4m3(j + 1), 0, 0, 0)]
    ones = [_e4m3(1)] * 64

    def total(metadata):
        word = mma_dot(a, ones, 0, a_format="e4m3", sparse_metadata=metadata)
        return oracle.decode("f32", word)[0]

    assert total(0x44444444) == total([0x44444444, 0x44444444]) == 136
    assert total([0x4444444E, 0x44444444]) == 135, "nibble 0 of word 0 is chunk 0"
    assert total([0xE4444444, 0x44444444]) == 128, "nibble 7 of word 0 is chunk 7"
    assert total([0x44444444, 0x4444444E]) == 127, "word 1 starts at chunk 8"
    assert total(0x4444444E) == 126, "one word is reused for chunks 8..15"
    with pytest.raises(ValueError, match="needs 2 to cover every chunk"):
        mma_dot(a, ones, 0, a_format="e4m3", sparse_metadata=[0x44444444])


@pytest.mark.parametrize("metadata, chunk, selector", [
    (0x44444445, 0, 0x5), (0x44404444, 4, 0x0), ([0x44444444, 0xF4444444], 15, 0xF),
])
def test_illegal_selectors_are_refused_naming_chunk_and_selector(metadata, chunk, selector):
    with pytest.raises(ValueError, match=f"chunk {chunk} .*illegal selector 0x{selector:X}"):
        mma_dot([0] * 64, [0] * 64, 0, a_format="e4m3", sparse_metadata=metadata)


def test_tf32_accepts_only_lower_and_upper():
    with pytest.raises(ValueError, match=r"illegal selector 0x8; sparse-tf32 allows 0x4, 0xE"):
        mma_dot([0] * 16, [0] * 16, 0, a_format="tf32", sparse_metadata=0x44444448)


def test_batch_and_matrix_apis_take_metadata():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1 << 32, size=(4, 16), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, size=(4, 16), dtype=np.uint64).astype(np.uint32)
    c = np.zeros(4, dtype=np.uint32)
    meta = np.array([[0x44444444], [0xEEEEEEEE], [0x4E4E4E4E], [0xE4E4E4E4]], dtype=np.uint32)
    got = evaluate("sparse-tf32", a, b, c, sparse_metadata=meta)
    for i in range(4):
        assert got[i] == mma_dot(a[i].tolist(), b[i].tolist(), 0, a_format="tf32",
                                 sparse_metadata=int(meta[i, 0]))
    assert evaluate("sparse-tf32", a, b, c, sparse_metadata=0x44444444).tolist() == \
        evaluate("sparse-tf32", a, b, c, sparse_metadata=[0x44444444]).tolist()
    bad = meta.copy()
    bad[2, 0] = 0x4E4E4E40
    with pytest.raises(ValueError, match="row 2: sparse_metadata chunk 0"):
        evaluate("sparse-tf32", a, b, c, sparse_metadata=bad)
    with pytest.raises(ValueError, match="needs sparse_metadata"):
        evaluate("sparse-tf32", a, b, c)
    d = mma(a[:2], b[:2].T, a_format="tf32", sparse_metadata=meta[:2])
    assert d[1, 0] == mma_dot(a[1].tolist(), b[0].tolist(), 0, a_format="tf32",
                              sparse_metadata=int(meta[1, 0]))


def test_symbolic_metadata_in_the_formulas():
    """Metadata is a formula input: evaluated at concrete values, and legality is explicit."""
    desc = CATALOG["sparse-nvfp4"].descriptor
    record = frozen_record("sparse-nvfp4-pairwise")
    formula = z3_formula(record.descriptor)
    assert formula.evaluate(record.words) == record.expected
    assert formula.is_legal(record.words)
    illegal = record.words[:-1] + [0x44444441]
    assert not formula.is_legal(illegal)
    assert not reparsed_z3(record.descriptor).is_legal(illegal)
    assert reparsed_z3(record.descriptor).is_legal(record.words)
    assert "(define-fun metadata_legal () Bool" in traced(desc).smtlib()


def test_cli_metadata_option(capsys):
    ones = ",".join(["0x3f800000"] * 16)
    assert main(["eval", "--datapath", "sparse-tf32", "--a", ones, "--b", ones,
                 "--metadata", "0x44444444"]) == 0
    assert "D = 0x41000000" in capsys.readouterr().out
    assert main(["eval", "--a-format", "tf32", "--a", ones, "--b", ones,
                 "--metadata", "0x44444444"]) == 0
    assert "sparse-tf32" in capsys.readouterr().out
    assert main(["eval", "--datapath", "sparse-tf32", "--a", ones, "--b", ones]) == 2
    assert "needs --metadata" in capsys.readouterr().err
    assert main(["eval", "--datapath", "sparse-tf32", "--a", ones, "--b", ones,
                 "--metadata", "0x44444443"]) == 2
    assert "illegal selector 0x3" in capsys.readouterr().err


def test_cli_json_line_spells_out_every_metadata_word(capsys, tmp_path):
    lanes = ",".join(["0x2"] * 128)
    assert main(["eval", "--datapath", "sparse-nvfp4", "--a", lanes, "--b", lanes,
                 "--metadata", "0x44444444", "--scale-a", "38,38,38,38", "--scale-b",
                 "38,38,38,38", "--json"]) == 0
    line = capsys.readouterr().out
    assert json.loads(line)["sparse_metadata"] == [0x44444444, 0x44444444]
    path = tmp_path / "sparse.jsonl"
    path.write_text(line)
    assert main(["check", str(path)]) == 0
