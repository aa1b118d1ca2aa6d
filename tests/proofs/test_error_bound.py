"""Error bound: stage rebuild, lemmas on free values, scalar replays against the wide sum."""

from __future__ import annotations

import random

import pytest

from tcspec.proofs.core import LEMMAS, PROVED, REFUTED, UNKNOWN, WITNESS, Settings, decide
from tcspec.proofs.error_bound import (
    REQUIRED,
    align_query,
    bound_query,
    check,
    check_witness,
    lemma_queries,
    ranges_of,
    witness_query,
)
from tcspec.proofs.stages import formats_of, rebuilds_datapath, traced_inputs, window_from_operands
from tcspec.spec.catalog import build_dot, input_layout, lookup
from tcspec.spec.specials import decode_operands

FAST = Settings(second_solver=None, timeout=60)


def _desc(name: str):
    return lookup(name).descriptor


@pytest.mark.parametrize("name", [*REQUIRED, "dense-e2m1", "dense-e5m2",
                                  "mixed-e2m1-e4m3-f16", "dense-mx-e4m3", "dense-mx-e2m1"])
def test_stage_rebuild_is_the_datapath_node(name: str) -> None:
    desc = _desc(name)
    small = desc.scale_block or 2
    assert rebuilds_datapath(desc, small) and rebuilds_datapath(desc, desc.k)


def test_a_changed_stage_is_not_the_datapath_node() -> None:
    ops, inputs = traced_inputs(_desc("dense-tf32"), 2)
    desc = _desc("dense-tf32")
    fa, fb, fd = formats_of(desc)
    operands = decode_operands(ops, fa, fb, fd, inputs.a, inputs.b, inputs.c)
    unclamped = window_from_operands(ops, operands, fd, None).word.node
    assert unclamped is not build_dot(ops, desc, inputs, any_k=True).node


def test_grouped_block_paths_rebuild_unless_they_merge_with_c() -> None:
    assert rebuilds_datapath(_desc("dense-nvfp4"), 16)
    with pytest.raises(ValueError, match="merges groups with C"):
        rebuilds_datapath(_desc("dense-mxf4"), 64)


def test_quantum_range_follows_the_clamp() -> None:
    assert ranges_of(_desc("dense-tf32")).quantum == (-133 - 25, 256 - 25)
    assert ranges_of(_desc("dense-f16")).quantum[0] == -126 - 25


def test_lemmas_of_a_small_row_are_proved() -> None:
    queries, facts = lemma_queries(_desc("dense-e2m1"), 2)
    assert "cannot wrap" in facts
    for query in queries:
        assert decide(query, "bitwuzla", 60).result == PROVED, query.name


def test_rounding_alignment_breaks_the_floor_lemma() -> None:
    outcome = decide(align_query(_desc("dense-e4m3"), "product", rounding="rne"), "bitwuzla",
                     60)
    assert outcome.result == REFUTED and "units" in outcome.words


def _finite_word(rng: random.Random, frac_bits: int, cleared: int) -> int:
    exponent = rng.choice([0, rng.randint(100, 140)])
    return (rng.getrandbits(1) << 31) | (exponent << 23) | (rng.getrandbits(frac_bits) << cleared)


def test_bound_holds_on_random_finite_tf32_inputs_and_is_nearly_reached() -> None:
    desc, k = _desc("dense-tf32"), 8
    query = bound_query(desc, k)
    rng = random.Random(8)
    largest = 0.0
    for _ in range(150):
        model = {spec.name: _finite_word(rng, 10, 13) for spec in input_layout(desc, k)}
        violated, words = query.replay(model)
        assert not violated, model
        if words["bound"]:
            largest = max(largest, words["error"] / words["bound"])
    assert 0 < largest < 1


def test_lemma_rows_are_not_proved_and_witnesses_are_found() -> None:
    row = check(_desc("dense-e2m1"), 2, FAST)
    assert row.result == UNKNOWN and row.method == LEMMAS and "prose" in row.detail
    assert all(lem["result"] == PROVED for lem in row.lemmas)
    row = check_witness(_desc("dense-e4m3"), 2, FAST)
    assert row.result == WITNESS
    violated, words = bound_query(_desc("dense-e4m3"), 2).replay(
        {name: value for name, value in row.words.items() if name not in ("d", "quantum")})
    assert not violated and 0 < words["error"] < words["bound"]


def test_no_e2m1_witness_under_the_search_hints() -> None:
    assert decide(witness_query(_desc("dense-e2m1"), 4), "bitwuzla", 60).result == REFUTED


@pytest.mark.full
@pytest.mark.parametrize("name", REQUIRED)
def test_required_rows(name: str) -> None:
    desc = _desc(name)
    row = check(desc, desc.k, Settings())
    assert row.result == UNKNOWN and "prose" in row.detail
    assert check_witness(desc, desc.k, Settings()).result == WITNESS


@pytest.mark.full
def test_witness_query_reaches_k_quanta_at_full_tf32() -> None:
    desc = _desc("dense-tf32")
    assert decide(witness_query(desc, desc.k), "bitwuzla", 120).result == WITNESS


def test_bound_chain_window_query_is_proved_and_its_hypothesis_witnessed() -> None:
    """The chain's cheap queries (its wide-register ones do not finish: the row stays
    ``lemmas``, see proofs/error_bound.py)."""
    from tcspec.proofs.error_bound import bound_chain

    queries = {q.name: q for q in bound_chain(_desc("dense-tf32"), 2)}
    assert next(iter(queries)) == "hypothesis satisfiable"
    assert decide(queries["hypothesis satisfiable"], "bitwuzla", 60).result == WITNESS
    assert decide(queries["window"], "bitwuzla", 60).result == PROVED
    assert {"aligned", "sum (units cut)", "encode (sum cut)",
            "bound (D, sum, exact cut)"} <= set(queries)
