"""Error bound: the chain on build_dot's DAG, its arithmetic steps, scalar replays against the
reference's wide sum."""

from __future__ import annotations

import random

import pytest

from tcspec.proofs.core import (
    CHAIN,
    PROVED,
    REFUTED,
    UNKNOWN,
    WITNESS,
    Settings,
    arithmetic_query,
    decide,
)
from tcspec.proofs.error_bound import (
    REQUIRED,
    WITNESS_REQUIRED,
    align_query,
    before_script,
    bound_chain,
    bound_query,
    check,
    check_witness,
    compose_script,
    encode_reading_script,
    lane_reading_script,
    ranges_of,
    window_of,
    witness_query,
)
from tcspec.proofs.stages import formats_of, rebuilds_datapath, traced_inputs, window_from_operands
from tcspec.spec.catalog import build_dot, input_layout, lookup
from tcspec.spec.specials import decode_operands
from tests.limits import SOLVER_LIMIT

FAST = Settings(second_solver=None, timeout=SOLVER_LIMIT)


def _desc(name: str):
    return lookup(name).descriptor


@pytest.mark.parametrize("name", ["dense-tf32", "dense-bf16", "dense-f16", "dense-e4m3",
                                  "dense-e2m1", "dense-e5m2",
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


def test_rounding_alignment_breaks_the_floor_lemma() -> None:
    outcome = decide(align_query(_desc("dense-e4m3"), "product", rounding="rne"), "bitwuzla",
                     SOLVER_LIMIT)
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


def test_chain_proves_a_small_row_and_witnesses_are_found() -> None:
    row = check(_desc("dense-e2m1"), 2, FAST)
    assert row.result == PROVED and row.method == CHAIN, row.detail
    names = [lem["name"] for lem in row.lemmas]
    assert names[0] == "hypothesis-satisfiable" and names[-1] == "bound (n = 3)"
    assert {lem["solver"] for lem in row.lemmas} == {"bitwuzla", "z3"}
    row = check_witness(_desc("dense-e4m3"), 2, FAST)
    assert row.result == WITNESS
    violated, words = bound_query(_desc("dense-e4m3"), 2).replay(
        {name: value for name, value in row.words.items() if name not in ("d", "quantum")})
    assert not violated and 0 < words["error"] < words["bound"]


def test_arithmetic_steps_are_proved_and_fail_when_weakened() -> None:
    """Each composition step is unsat as stated and sat with one premise or margin off, so
    none holds vacuously."""
    for script in (lane_reading_script, encode_reading_script, lambda: compose_script(9),
                   lambda: encode_reading_script(nearest=True), lambda: before_script(9)):
        assert decide(arithmetic_query("step", script), "bitwuzla", SOLVER_LIMIT).result == PROVED
    weakened = [
        lambda: lane_reading_script().replace("(< A (+ (to_real M) 1.0))", "true"),
        lambda: encode_reading_script().replace("(> lam 0.0)", "true").replace(
            "(< (ite (>= (to_real S) 0.0) (to_real S) (- (to_real S))) (+ mag lam))", "true"),
        lambda: compose_script(9).replace("(+ 9.0 lam)", "(+ 8.0 lam)"),
        lambda: encode_reading_script(nearest=True).replace("(> mag 0.0) (= neg (< S 0))",
                                                            "false false"),
        lambda: before_script(9).replace(" 9.0))", " 8.0))"),
    ]
    for script in weakened:
        outcome = decide(arithmetic_query("weakened", script), "z3", SOLVER_LIMIT)
        assert outcome.result == UNKNOWN and "satisfiable" in outcome.reason


def test_chain_stops_at_its_window_query_on_a_wrong_quantum() -> None:
    """The chain reads the spec's quanta: a window one bit wider is refuted at ``window``."""
    import dataclasses

    from tcspec.proofs import error_bound

    queries = bound_chain(_desc("dense-tf32"), 2)
    window = next(q for q in queries if q.name == "window")

    def wrong(ops, values):  # the window query, with the reference quantum one lower
        run = error_bound.bound_run(ops, _desc("dense-tf32"), 2, values)
        q = ops.sub(run.parts.quantum, 1)
        held = ops.eq(ops.resize_signed(run.align_q, q.width), q)
        return ops.and_(run.parts.inputs_ok, ops.not_(held)), {}

    outcome = decide(dataclasses.replace(window, body=wrong, lift=None), "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == REFUTED


def test_the_witness_reaches_the_loss_of_narrow_formats_and_replays() -> None:
    """e2m1 products keep at most 2 fraction bits, so each loses at most 3/4 of a quantum:
    the witness (replayed on the scalar lowering by ``decide``) reaches (K - 1) 3/4 quanta
    and stays below the bound."""
    desc = _desc("dense-e2m1")
    outcome = decide(witness_query(desc, 4), "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == WITNESS
    inputs = {n: v for n, v in outcome.words.items() if n not in ("d", "quantum")}
    violated, words = bound_query(desc, 4).replay(inputs)
    assert not violated and 0 < words["error"] < words["bound"]


def test_f16_d_and_sparse_paths_are_bounded_f16_d_has_no_witness() -> None:
    """An F16 D rounds to nearest (half an ulp); a sparse path sums its selected lanes."""
    assert "mixed-e4m3-e4m3-f16" in REQUIRED and "sparse-e2m1" in REQUIRED
    assert "mixed-e4m3-e4m3-f16" not in WITNESS_REQUIRED
    for name, k in (("mixed-e2m1-e2m1-f16", 2), ("sparse-e2m1", 4)):
        row = check(_desc(name), k, FAST)
        assert row.result == PROVED, (name, row.detail)
        assert any(lem["name"].startswith("sum before the conversion") for lem in row.lemmas)


@pytest.mark.full
@pytest.mark.parametrize("name", REQUIRED)
def test_required_rows(name: str) -> None:
    desc = _desc(name)
    row = check(desc, desc.k, Settings())
    assert row.result == PROVED, row.detail
    if name in WITNESS_REQUIRED:
        assert check_witness(desc, desc.k, Settings()).result == WITNESS


@pytest.mark.full
def test_witness_query_reaches_k_quanta_at_full_tf32() -> None:
    desc = _desc("dense-tf32")
    assert decide(witness_query(desc, desc.k), "bitwuzla", 120).result == WITNESS


@pytest.mark.parametrize("name", ["dense-tf32", "dense-f16"])
def test_chain_of_a_required_row_at_small_k_is_proved(name: str) -> None:
    row = check(_desc(name), 2, FAST)
    assert row.result == PROVED and all(lem["result"] in (PROVED, WITNESS)
                                        for lem in row.lemmas), row.detail


@pytest.mark.parametrize("name", ["sm_70-mma-m8n8k4-f16-f16-c32-d32",
                                  "sm_89-mma-m16n8k16-e4m3-e4m3-c32-d32"])
def test_other_architectures_one_window_dots_are_bounded(name: str) -> None:
    """ARCHITECTURES.md 1.3-1.4: F from the table (Volta 23, Ada fp8 13 with the e8m13
    accumulator), every term in R with a zero at -126, C in its own format."""
    desc = _desc(name)
    assert name in REQUIRED and name in WITNESS_REQUIRED
    window = window_of(desc)
    assert (window.fraction_bits, window.zero_exponent) in ((23, -126), (13, -126))
    row = check(desc, desc.k, FAST)
    assert row.result == PROVED, row.detail
    assert f"F = {window.fraction_bits}" in row.detail


def test_split_k_dots_are_not_stated_as_one_window() -> None:
    assert "sm_80-mma-m16n8k16-f16-f16-c32-d32" not in REQUIRED
    assert "sm_90-mma-m16n8k16-f16-f16-c32-d32" in REQUIRED
