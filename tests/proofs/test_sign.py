"""Sign symmetry: stage lemmas for the window paths, replayed counterexamples."""

from __future__ import annotations

import dataclasses

import pytest

from tcspec.proofs.core import CHAIN, LEMMAS, PROVED, REFUTED, UNKNOWN, Settings, decide
from tcspec.proofs.sign import (
    REQUIRED,
    apply_specials_query,
    check,
    encode_odd_query,
    group_units_query,
    grouped,
    grouped_lemmas,
    lemma_row,
    negated,
    sign_query,
    specials_query,
    staged,
)
from tcspec.proofs.stages import rebuilds_datapath
from tcspec.spec.catalog import lookup
from tcspec.spec.convert import encode_float
from tcspec.spec.formats import FORMATS
from tcspec.spec.scalar import SCALAR
from tests.limits import SOLVER_LIMIT

FAST = Settings(second_solver=None, timeout=SOLVER_LIMIT)


def _desc(name: str):
    return lookup(name).descriptor


def test_sign_bits_come_from_the_reference_not_the_spec(monkeypatch) -> None:
    """Issue 30's e2m1 breaker moved the spec's sign bit to bit 4: the statement keeps
    section 1's bit 3 (proofs/reference), so the flipped words are what SEMANTICS negates."""
    from tcspec.proofs import sign
    from tcspec.spec import formats

    monkeypatch.setitem(formats.FORMATS, "e2m1", dataclasses.replace(
        formats.FORMATS["e2m1"], container_bits=5))
    assert sign.sign_bit("e2m1") == 3 and sign.sign_bit("tf32") == 31
    assert sign.d_bits(_desc("dense-f16")) == 32 and sign.d_bits(_desc("dense-e4m3")) == 32


def test_the_chains_cover_the_dags_counts(monkeypatch) -> None:
    """The window chain covers K + 1 units; the block chain reads its counts (units, group
    sizes) from the traced DAG and checks them, so a spec with other group sizes is still
    covered (sign symmetry does not depend on them), and a lane count that differs is named."""
    from tcspec.proofs.sign import block_shape, window_cover
    from tcspec.spec import blockscaled

    assert window_cover(_desc("dense-tf32"), 8, "a") == []
    assert window_cover(_desc("dense-tf32"), 8, "a", lanes=4) == [
        "aligned units (lanes and C): the chain covers 5, the DAG has 9",
        "terms (lanes and C): the chain covers 5, the DAG has 9",
        "aligned units of the flipped run: the chain covers 5, the DAG has 9",
        "terms of the flipped run: the chain covers 5, the DAG has 9"]
    shape = block_shape(_desc("dense-nvfp4"), 16, "a")
    assert (shape.c_units, shape.product_units, shape.c_group, shape.product_group,
            shape.mismatches) == (2, 5, 16, 4, ())
    monkeypatch.setattr(blockscaled, "NVFP4_RULES", dataclasses.replace(
        blockscaled.NVFP4_RULES, c_dominant_group=8))
    shape = block_shape(_desc("dense-nvfp4"), 16, "a")
    assert (shape.c_units, shape.c_group, shape.mismatches) == (3, 8, ())


def test_negated_keeps_zero_and_nan() -> None:
    f32 = FORMATS["f32"]
    for word, expected in ((0, 0), (0x80000000, 0x80000000), (0x7FFFFFFF, 0x7FFFFFFF),
                           (0x3F800000, 0xBF800000), (0xFF800000, 0x7F800000)):
        assert negated(SCALAR, SCALAR.const(word, 32), f32).node == expected


@pytest.mark.parametrize(("name", "k"), [("dense-e2m1", 4), ("dense-mx-e4m3", 32)])
def test_lemma_rows_are_never_proved(name: str, k: int) -> None:
    row = lemma_row(_desc(name), k, FAST)
    assert row.result == UNKNOWN and row.method == LEMMAS and "prose" in row.detail
    assert all(lem["result"] == PROVED for lem in row.lemmas), row.detail
    names = [lem["name"] for lem in row.lemmas]
    assert {"flip-product-a", "flip-product-b", "flip-c", "encode-odd-f32",
            "apply-specials-odd", "align-product"} <= set(names)


def test_grouped_block_paths_are_not_staged() -> None:
    assert staged(_desc("dense-mx-e4m3")) and staged(_desc("dense-tf32"))
    assert not staged(_desc("dense-nvfp4")) and not staged(_desc("dense-mxf4"))
    assert grouped(_desc("dense-nvfp4")) and not grouped(_desc("dense-mxf4"))
    assert not grouped(_desc("dense-mx-e4m3"))


def test_grouped_rebuild_is_the_datapath() -> None:
    assert rebuilds_datapath(_desc("dense-nvfp4"), 64)
    assert rebuilds_datapath(_desc("dense-nvfp4"), 16)


def test_cheap_grouped_lemmas_are_proved() -> None:
    desc = _desc("dense-nvfp4")
    lemmas = {q.name: q for q in grouped_lemmas(desc, 16)}
    for name in ("group-units-4", "c-units", "encode-zero-f32", "raw-range-scale-pair",
                 "flip-c"):
        assert decide(lemmas[name], "bitwuzla", SOLVER_LIMIT).result == PROVED, name


def test_group_units_need_the_window_and_the_counterexample_replays() -> None:
    """Without ``top raw <= q + 39`` a group's units can be the minimum of their width."""
    unguarded = group_units_query(_desc("dense-nvfp4"), 4, guarded=False)
    outcome = decide(unguarded, "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == REFUTED  # replayed on the scalar lowering
    units = outcome.words["units"]
    assert bin(units).count("1") == 1 and units.bit_length() > 39


def test_leaving_c_alone_is_refuted_with_a_replayed_counterexample() -> None:
    outcome = decide(sign_query(_desc("dense-e2m1"), 1, "a", flip_c=False), "bitwuzla",
                     SOLVER_LIMIT)
    assert outcome.result == REFUTED
    d = SCALAR.const(outcome.words["d"], 32)
    assert outcome.words["d_flipped"] != negated(SCALAR, d, FORMATS["f32"]).node


def test_specials_and_apply_lemmas_are_proved() -> None:
    desc = _desc("dense-bf16")
    assert decide(specials_query(desc, 2, "a"), "bitwuzla", SOLVER_LIMIT).result == PROVED
    assert decide(apply_specials_query(desc), "bitwuzla", SOLVER_LIMIT).result == PROVED


def test_encode_is_not_odd_at_the_minimum_so_the_lemma_excludes_it() -> None:
    f32, width = FORMATS["f32"], 33
    minimum = SCALAR.const(1 << (width - 1), width)
    q = SCALAR.const(-40, 12)
    word = encode_float(SCALAR, minimum, q, f32, "rz")
    assert encode_float(SCALAR, SCALAR.neg(minimum), q, f32, "rz").node != \
        negated(SCALAR, word, f32).node
    assert encode_odd_query(_desc("dense-bf16"), width).replay(
        {"s": 1 << (width - 1), "q": (-40) % 4096})[0] is False


@pytest.mark.full
@pytest.mark.parametrize("name", REQUIRED)
def test_required_rows(name: str) -> None:
    desc = _desc(name)
    row = check(desc, desc.k, Settings())
    assert row.result in (PROVED, UNKNOWN) and row.method == CHAIN, row.detail


def test_the_unit_chain_proves_tf32_and_the_lane_0_breaker_stops_it(monkeypatch) -> None:
    from tcspec.spec import accumulate

    desc = _desc("dense-tf32")
    row = check(desc, 2, FAST)
    assert row.result == PROVED and row.method == CHAIN, row.detail
    assert [lem["name"] for lem in row.lemmas][:7] == [
        "terms-agree (a)", "quanta-agree (a, term raws and flags cut)",
        "units-negate (a, quanta cut)", "units-in-range (a)",
        "sum-negates (a, tree level 1, units cut)",
        "sum-negates (a, tree level 2, level below cut)", "word-negates (a, sum cut)"]
    original = accumulate.max_raw
    monkeypatch.setattr(accumulate, "max_raw", lambda ops, terms: original(ops, terms[1:]))
    broken = check(desc, 2, FAST)
    assert broken.result != PROVED, broken.detail


def test_the_unit_chain_keeps_the_units_cut_when_the_sum_is_not_the_tree(monkeypatch) -> None:
    """A sum over the units in another order keeps sign symmetry true: the chain falls
    back to ``word-negates`` with the units cut, and the row still proves."""
    from tcspec.proofs.sign import unit_chain
    from tcspec.spec import window

    desc = _desc("dense-tf32")
    original = window.exact_sum
    monkeypatch.setattr(window, "exact_sum", lambda ops, units: original(ops, units[::-1]))
    assert [q.name for q in unit_chain(desc, 2, "a")][-2:] == ["units-in-range (a)",
                                                               "word-negates (a, units cut)"]
    row = check(desc, 2, FAST)
    assert row.result == PROVED, row.detail


def test_block_chain_is_not_proved_when_c_keeps_its_sign(tmp_path) -> None:
    """A refuted lemma of the block chain stops the row, naming the lemma and its replayed
    words; the row is ``refuted`` only when those words violate the property."""
    from tcspec.proofs.core import check_queries
    from tcspec.proofs.sign import block_unit_chain

    desc = _desc("dense-nvfp4")
    queries = block_unit_chain(desc, 16, "a", flip_c=False)
    row = check_queries("sign-symmetry", desc, 16, queries, FAST, CHAIN)
    assert row.result in (REFUTED, UNKNOWN)
    failed = row.lemmas[-1]
    assert failed["result"] != PROVED and failed["name"].startswith("units-negate (a")
    lemma_violated, _ = next(q for q in queries if q.name == failed["name"]).replay(row.words)
    assert lemma_violated
    property_violated, _ = sign_query(desc, 16, "a", flip_c=False).replay(row.words)
    assert property_violated == (row.result == REFUTED)
    from tcspec.proofs.runner import write_report

    write_report([row], FAST, row.seconds, tmp_path / "r.json", tmp_path / "r.md")
    table = (tmp_path / "r.md").read_text()
    assert "terms-agree (a) (proved" in table and f"{failed['name']} ({failed['result']}" in table


def test_block_chain_lists_its_queries_in_order() -> None:
    from tcspec.proofs.sign import block_unit_chain

    names = [q.name for q in block_unit_chain(_desc("dense-nvfp4"), 16, "b")]
    assert names[:2] == ["terms-agree (b)", "quanta-agree (b, term raws and flags cut)"]
    assert names[-6:] == [
        "c-path-negates (b, tree level 1, units cut)",
        "product-path-negates (b, tree level 1, units cut)",
        "product-path-negates (b, tree level 2, level below cut)",
        "product-path-negates (b, tree level 3, level below cut)",
        "sum-negates (b, path sums cut)", "word-negates (b, sum cut)"]
    sums = [n for n in names if n.startswith("group-sums-negate")]
    terms = [n for n in names if n.startswith("group-terms-negate")]
    negate = [n for n in names if n.startswith("units-negate")]
    in_range = [n for n in names if n.startswith("units-in-range")]
    assert names[2:-6] == sums + terms + negate + in_range
    assert sums[0] == "group-sums-negate (b, C-dominant groups, tree level 0, leaves 0-15)"
    assert sums[4] == "group-sums-negate (b, C-dominant groups, tree level 4, level below cut)"
    assert sums[7] == "group-sums-negate (b, product groups, tree level 2, level below cut)"
    assert len(sums) == 8 and len(terms) == 2 and len(negate) == 4 and len(in_range) == 4
    assert negate[2] == "units-negate (b, quanta and group terms cut, units 2-5)"
    assert in_range == ["units-in-range (b, units 0-0)", "units-in-range (b, units 1-1)",
                        "units-in-range (b, units 2-5)", "units-in-range (b, units 6-6)"]


def test_block_chain_of_single_product_groups_cuts_only_the_quanta() -> None:
    from tcspec.proofs.sign import block_unit_chain

    names = [q.name for q in block_unit_chain(_desc("dense-mx-e4m3"), 32, "a")]
    assert not any(n.startswith("group-") for n in names)
    assert "units-negate (a, quanta cut, units 0-15)" in names
    assert [n for n in names if n.startswith("c-path")] == [
        "c-path-negates (a, tree level 1, units cut)",
        *(f"c-path-negates (a, tree level {i}, level below cut)" for i in range(2, 7))]


@pytest.mark.full
def test_block_chain_proves_the_smallest_nvfp4_row() -> None:
    row = check(_desc("dense-nvfp4"), 16, Settings(second_solver=None))
    assert row.result == PROVED and row.method == CHAIN, row.detail
    assert len(row.lemmas) == 52


def test_a_group_alignment_that_floors_negatives_stops_the_block_chain(monkeypatch) -> None:
    from tcspec.spec import blockscaled

    original = blockscaled.align_to_quantum

    def floors(ops, negative, mag, exponent, q, width, rounding="rz"):
        units = original(ops, negative, mag, exponent, q, width, rounding)
        return ops.ite(negative, ops.sub(units, 1), units)

    monkeypatch.setattr(blockscaled, "align_to_quantum", floors)
    row = check(_desc("dense-nvfp4"), 16, FAST)
    assert row.result != PROVED, row.detail
    assert "units-negate (a, quanta and group terms cut" in row.detail, row.detail
