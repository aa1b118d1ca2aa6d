"""Sign symmetry as a chain of stage queries (per-architecture rows, breakers)."""

from __future__ import annotations

import dataclasses

from tcspec.proofs.core import CHAIN, PROVED, REFUTED, Row, Settings, check_queries, decide
from tcspec.proofs.sign import negated, sign_query, unit_chain
from tcspec.spec.catalog import lookup
from tcspec.spec.formats import FORMATS
from tcspec.spec.scalar import SCALAR
from tests.limits import SOLVER_LIMIT

FAST = Settings(second_solver=None, timeout=SOLVER_LIMIT)


def _desc(name: str):
    return lookup(name).descriptor


def _chain_row(desc, k: int) -> Row:
    """The window chain for A and C flipped, decided as one row."""
    return check_queries("sign-symmetry", desc, k, unit_chain(desc, k, "a"), FAST, CHAIN)


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
    """The window chain covers K + 1 units, read from the traced DAG: a lane count that
    differs is named."""
    from tcspec.proofs.sign import window_cover

    assert window_cover(_desc("dense-tf32"), 8, "a") == []
    assert window_cover(_desc("dense-tf32"), 8, "a", lanes=4) == [
        "aligned units (lanes and C): the chain covers 5, the DAG has 9",
        "terms (lanes and C): the chain covers 5, the DAG has 9",
        "aligned units of the flipped run: the chain covers 5, the DAG has 9",
        "terms of the flipped run: the chain covers 5, the DAG has 9"]


def test_negated_keeps_zero_and_nan() -> None:
    f32 = FORMATS["f32"]
    for word, expected in ((0, 0), (0x80000000, 0x80000000), (0x7FFFFFFF, 0x7FFFFFFF),
                           (0x3F800000, 0xBF800000), (0xFF800000, 0x7F800000)):
        assert negated(SCALAR, SCALAR.const(word, 32), f32).node == expected


def test_leaving_c_alone_is_refuted_with_a_replayed_counterexample() -> None:
    outcome = decide(sign_query(_desc("dense-e2m1"), 1, "a", flip_c=False), "bitwuzla",
                     SOLVER_LIMIT)
    assert outcome.result == REFUTED
    d = SCALAR.const(outcome.words["d"], 32)
    assert outcome.words["d_flipped"] != negated(SCALAR, d, FORMATS["f32"]).node


def test_the_unit_chain_proves_tf32_and_the_lane_0_breaker_stops_it(monkeypatch) -> None:
    from tcspec.spec import accumulate

    desc = _desc("dense-tf32")
    row = _chain_row(desc, 2)
    assert row.result == PROVED and row.method == CHAIN, row.detail
    assert [lem["name"] for lem in row.lemmas][:7] == [
        "terms-agree (a)", "quanta-agree (a, term raws and flags cut)",
        "units-negate (a, quanta cut)", "units-in-range (a)",
        "sum-negates (a, tree level 1, units cut)",
        "sum-negates (a, tree level 2, level below cut)", "word-negates (a, sum cut)"]
    original = accumulate.max_raw
    monkeypatch.setattr(accumulate, "max_raw", lambda ops, terms: original(ops, terms[1:]))
    broken = _chain_row(desc, 2)
    assert broken.result != PROVED, broken.detail


def test_the_unit_chain_keeps_the_units_cut_when_the_sum_is_not_the_tree(monkeypatch) -> None:
    """A sum over the units in another order keeps sign symmetry true: the chain falls
    back to ``word-negates`` with the units cut, and the row still proves."""
    from tcspec.spec import window

    desc = _desc("dense-tf32")
    original = window.exact_sum
    monkeypatch.setattr(window, "exact_sum", lambda ops, units: original(ops, units[::-1]))
    assert [q.name for q in unit_chain(desc, 2, "a")][-2:] == ["units-in-range (a)",
                                                               "word-negates (a, units cut)"]
    row = _chain_row(desc, 2)
    assert row.result == PROVED, row.detail
