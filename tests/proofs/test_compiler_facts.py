"""Facts for compiler writers (proofs/compiler_facts.py)."""

from __future__ import annotations

import struct

import pytest

from tcspec.chaining import gemm
from tcspec.proofs import compiler_facts as facts
from tcspec.proofs.core import PROVED, REFUTED, WITNESS, Settings, decide
from tcspec.spec.catalog import lookup
from tcspec.spec.scalar import SCALAR
from tests.limits import SOLVER_LIMIT

FAST = Settings(second_solver=None, timeout=SOLVER_LIMIT)
TF32 = lookup("dense-tf32").descriptor


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


@pytest.mark.parametrize(("a", "b", "expected"), [
    (f32(1.5), f32(1.5), f32(2.25)),
    (f32(-3.0), f32(0.5), f32(-1.5)),
    (f32(2.0 ** 100), f32(2.0 ** 100), 0x7F800000),
    (f32(-(2.0 ** -70)), f32(2.0 ** -70), 0x80000200),
    (f32(2.0 ** -100), f32(2.0 ** -100), 0),
    (0x80000000, f32(5.0), 0),
])
def test_independent_rz_product(a: int, b: int, expected: int) -> None:
    word = facts.rz_product_f32(SCALAR, "tf32", "tf32", SCALAR.const(a, 32),
                                SCALAR.const(b, 32))
    assert word.node == expected


def test_single_lane_is_rz_product_at_k2() -> None:
    assert decide(facts.single_lane_query(TF32, 2, 1), "bitwuzla", SOLVER_LIMIT).result == PROVED


def test_single_lane_row_shows_its_hypothesis_witness() -> None:
    """Each lane's hypothesis (C = +0, other A lanes zero, finite words, by the reference's
    decoder) has a replayed witness, listed in the row's lemmas and its detail."""
    row = facts.check_single_lane(TF32, 2, FAST)
    assert row.result == PROVED, row.detail
    names = [lem["name"] for lem in row.lemmas]
    assert names == ["hypothesis-satisfiable (lane 0, a nonzero product word)", "lane 0",
                     "hypothesis-satisfiable (lane 1, a nonzero product word)", "lane 1"]
    witness = row.lemmas[0]
    assert witness["result"] == WITNESS and witness["words"]["c"] == 0
    assert witness["words"]["d"] == witness["words"]["rz_product"]
    assert witness["words"]["rz_product"] != 0
    assert "hypothesis-satisfiable (lane 0, a nonzero product word): witness replayed" in row.detail
    assert not row.words


def test_the_statement_reads_no_spec_format() -> None:
    """A spec format with another bias moves D but not the right-hand side (issue 30's bf16
    breaker): the right-hand side is written from proofs/reference's field table."""
    one = 0x3F800000
    assert facts.rz_product_f32(SCALAR, "bf16", "bf16", SCALAR.const(one, 32),
                                SCALAR.const(one, 32)).node == one
    import inspect

    source = inspect.getsource(facts)
    assert "FORMATS" not in source and "decode_float" not in source


def test_single_lane_fails_with_c_one() -> None:
    outcome = decide(facts.single_lane_query(TF32, 2, 0, c_value=f32(1.0)), "bitwuzla",
                     SOLVER_LIMIT)
    assert outcome.result == REFUTED and outcome.words["d"] != outcome.words["rz_product"]


def test_k_order_witness_replays_through_gemm() -> None:
    outcome = decide(facts.k_order_query(TF32), "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == WITNESS
    w = outcome.words
    a = [[w[f"a{i}"] for i in range(16)]]
    b = [[w[f"b{i}"]] for i in range(16)]
    ascending = gemm(a, b, [[w["c"]]], a_format="tf32")[0][0]
    descending = gemm(a, b, [[w["c"]]], k_order=[1, 0], a_format="tf32")[0][0]
    assert (ascending, descending) == (w["ascending"], w["descending"])
    assert ascending != descending


def test_monotonicity_witness() -> None:
    outcome = decide(facts.monotonicity_query(TF32, 8), "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == WITNESS
    w = outcome.words
    key = lambda word: -(word & 0x7FFFFFFF) if word >> 31 else word  # noqa: E731
    assert key(w["c"]) < key(w["c_larger"]) and key(w["d"]) > key(w["d_larger"])


def test_low_bits_row() -> None:
    assert facts.check_low_bits(TF32, 8, FAST).result == PROVED


@pytest.mark.full
@pytest.mark.parametrize("name", ["dense-tf32", "dense-bf16"])
def test_single_lane_full_k(name: str) -> None:
    desc = lookup(name).descriptor
    assert facts.check_single_lane(desc, desc.k, Settings(second_solver=None)).result == PROVED
