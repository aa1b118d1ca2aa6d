"""equals-reference (issue 30): the spec's D against the rule book's, through the engine.

Limits are generous (300 s a query) so that a busy machine slows these rows down but
never turns a verdict into ``unknown``; alone they take about 1 s (integer) and 15-30 s
(dense-tf32, sparse-tf32) on 2 cores."""

from __future__ import annotations

from tcspec.proofs import equals_reference, rulebook
from tcspec.proofs.core import PROVED, REFUTED, Settings
from tcspec.spec.catalog import lookup

SLOW_OK = Settings(timeout=300.0, second_solver=None)


def _row(name: str):
    desc = lookup(name).descriptor
    return equals_reference.check(desc, desc.k, SLOW_OK)


def test_an_integer_path_is_proved_equal_for_every_input():
    row = _row("i8-s8-u8-saturate")
    assert row.result == PROVED, row.detail
    assert row.key and row.method == equals_reference.EQUIVALENCE
    assert "D equal for every input" in row.detail


def test_dense_tf32_is_proved_equal_with_no_hypothesis():
    row = _row("dense-tf32")
    assert row.result == PROVED, row.detail
    assert not row.detail.startswith("hypothesis")
    assert [lemma["name"] for lemma in row.lemmas] == ["d-equal"]


def test_a_sparse_path_is_proved_by_composition_after_its_legality_predicates():
    """Section 5: each text's D is its dense sibling's on its own compacted lanes; the row
    proves the legality predicates equal, then the lanes, then the dense sibling's row."""
    row = _row("sparse-tf32")
    assert row.result == PROVED, row.detail
    assert [lemma["name"] for lemma in row.lemmas] == [
        "legality-equal", "lanes-equal", "dense-equal (dense-tf32)"]
    assert row.detail.startswith("hypothesis: every metadata selector legal")
    assert "by composition" in row.detail


def test_a_wrong_selection_is_refuted_on_the_lanes_with_replayed_words(monkeypatch):
    """spec/sparse.py reading 0x4 as "keep the upper element": the lanes differ, and the
    words give two different lanes on the executable lowerings."""
    def upper_first(ops, rule, lanes, selectors):
        return [ops.ite(ops.eq(sel, 0x4), lanes[2 * i + 1], lanes[2 * i])
                for i, sel in enumerate(selectors)]

    monkeypatch.setattr("tcspec.spec.catalog.select_active", upper_first)
    row = _row("sparse-tf32")
    assert row.result == REFUTED, row.detail
    assert [lemma["name"] for lemma in row.lemmas] == ["legality-equal", "lanes-equal"]
    assert "the compacted lanes differ (replayed)" in row.detail


def test_both_texts_take_the_same_input_words_on_every_datapath():
    for name in ("dense-tf32", "sparse-nvfp4", "dense-mxf4nvf4-4x-ue4m3",
                 "sm_89-mma-m16n8k32-e4m3-e4m3-c32-d32", "cdna3-mfma-16x16x8-xf32-xf32-c32-d32"):
        desc = lookup(name).descriptor
        assert equals_reference.layout_difference(desc, desc.k) == "", name


def test_samples_cover_every_input_word_at_its_width():
    name = "sparse-nvfp4"
    samples = equals_reference.samples_for(name, count=40)
    widths = dict(rulebook.layout(name))
    assert set(samples) == set(widths)
    for word, values in samples.items():
        assert len(values) == 40
        assert all(0 <= v < (1 << widths[word]) for v in values), word
    assert samples == equals_reference.samples_for(name, count=40)


def test_the_row_key_moves_with_the_traced_dags_and_the_limits():
    desc = lookup("dense-tf32").descriptor
    traced = equals_reference.trace_both(desc)
    key = equals_reference.row_key(traced, SLOW_OK)
    assert key == equals_reference.row_key(equals_reference.trace_both(desc), SLOW_OK)
    assert key != equals_reference.row_key(traced, Settings(timeout=60.0))
    other = equals_reference.trace_both(lookup("dense-bf16").descriptor)
    assert key != equals_reference.row_key(other, SLOW_OK)


def test_a_decided_row_is_reused_while_its_key_is_unchanged():
    from tcspec.proofs.runner import RowSpec, run_rows
    desc = lookup("i8-s8-u8-saturate").descriptor
    prop = equals_reference.PROPERTIES[0]
    first = run_rows([RowSpec(prop, desc, desc.k)], SLOW_OK)[0]
    assert first.result == PROVED and not getattr(first, "from_cache", False)
    previous = {(prop.name, desc.name, desc.k): first}
    again = run_rows([RowSpec(prop, desc, desc.k)], SLOW_OK, previous=previous)[0]
    assert getattr(again, "from_cache", False) and again.result == PROVED
    changed = run_rows([RowSpec(prop, desc, desc.k)], Settings(timeout=200.0, second_solver=None),
                       previous=previous)[0]
    assert not getattr(changed, "from_cache", False)


def test_the_low_regime_reaches_below_the_tf32_clamp():
    """equiv's LOW samples: C zero in some, and the largest product's raw exponent below
    -133 (SEMANTICS.md 2.4's clamp acts only there); the default cycle never asks for it."""
    samples = equals_reference.samples_for("dense-tf32", count=200,
                                           regimes=(equals_reference.LOW,))

    def raw(word: int) -> int:
        return ((word >> 23) & 0xFF) - 127

    below = [i for i in range(4, 200) if samples["c"][i] == 0 and
             max(raw(samples[f"a{k}"][i]) + raw(samples[f"b{k}"][i]) for k in range(8)) < -133]
    assert len(below) >= 20
    assert equals_reference.LOW not in equals_reference.REGIMES
