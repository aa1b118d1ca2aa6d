"""Sparse masking equivalence and non-interference (proofs/sparse.py)."""

from __future__ import annotations

import dataclasses

import pytest

from tcspec.proofs import sparse
from tcspec.proofs.constants import SPARSE_CHUNK, SPARSE_KEPT, SPARSE_LEGAL, SPARSE_RULE
from tcspec.proofs.core import (
    CHAIN,
    PROVED,
    REFUTED,
    Query,
    Row,
    Settings,
    check_queries,
    decide,
)
from tcspec.proofs.runner import select_rows
from tcspec.proofs.stages import traced_inputs
from tcspec.smt.trace import TraceOps
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.catalog import build_dot, compact_sparse, logical_k_step, lookup
from tcspec.spec.descriptor import SPARSE_CHUNKS, Descriptor
from tcspec.spec.sparse import CHUNK_SIZES, LEGAL_SELECTORS, chunk_selectors
from tests.limits import SOLVER_LIMIT

FAST = Settings(second_solver=None, timeout=SOLVER_LIMIT)
UNSCALED = ("sparse-tf32", "sparse-bf16", "sparse-f16", "sparse-e4m3", "sparse-e5m2",
            "sparse-e2m3", "sparse-e3m2", "sparse-e2m1")


def swapped_halves(ops: Ops, selector: BV, position: int, rule: str) -> Bool:
    """A wrong tf32 mask: 0x4 taken to keep the upper element."""
    return sparse.keeps_position(ops, selector, 1 - position if rule == "one" else position, rule)


@pytest.mark.parametrize("name", sparse.SPARSE_PATHS)
def test_sparse_is_dense_sibling_of_compacted_lanes(name: str) -> None:
    """Non-interference's congruence step: the sparse node is the dense node of the
    compacted lanes, C and scales (nothing else of the input reaches it)."""
    desc = lookup(name).descriptor
    ops, inputs = traced_inputs(desc, logical_k_step(desc))
    dense_desc, active = compact_sparse(ops, desc, inputs)
    assert active.c is inputs.c and list(active.scale_a) == list(inputs.scale_a)
    assert build_dot(ops, desc, inputs, any_k=True).node is \
        build_dot(ops, dense_desc, active, any_k=True).node


def test_mask_reads_nibbles_least_significant_first() -> None:
    desc = lookup("sparse-f16").descriptor
    ops = TraceOps()
    word = 0x0000_00E4 | (0x9 << 28)
    metadata = [ops.const(word, 32)]
    flags = [bool(f.node.value) for f in sparse.active_mask(ops, desc, metadata, 32)]
    assert flags[:8] == [True, True, False, False, False, False, True, True]
    assert flags[28:] == [False, True, True, False]
    assert chunk_selectors(ops, metadata, 8)[1].node.value == 0xE


def test_masking_chain_proves_sparse_tf32_k4() -> None:
    row = sparse.check_masking(lookup("sparse-tf32").descriptor, 4, FAST)
    assert row.result == PROVED and row.method == CHAIN
    assert [lem["name"] for lem in row.lemmas] == [
        "hypothesis-satisfiable", "specials-agree", "chunk-maxima-agree (lanes 0-3)",
        "quanta-agree (chunk maxima cut)", "lanes-select (lanes 0-3)",
        "cleared-lanes-zero (lanes 0-3)", "chunk-sums-alike (units cut, lanes 0-3)",
        "sum-level 1 (level 0 cut)", "sum-level 2 (level 1 cut)",
        "word-equal (sums, quanta, special flags cut)"]
    assert all(lem["result"] in (PROVED, "witness") for lem in row.lemmas)


def test_masking_chain_refutes_a_wrong_mask_with_replayed_words() -> None:
    """With 0x4 read as "keep the upper element", a lemma of the chain fails and its model
    lifts to input words on which sparse and masked dense differ on the scalar lowering."""
    desc = lookup("sparse-tf32").descriptor
    queries, _ = sparse.masking_chain(desc, 4, swapped_halves)
    row = core_row(desc, queries)
    assert row.result == REFUTED
    assert row.words["sparse"] != row.words["masked_dense"]


def test_masking_chain_parts_cover_every_lane() -> None:
    queries, _ = sparse.masking_chain(lookup("sparse-e4m3").descriptor, 64)
    parts = [q.name for q in queries if q.name.startswith(("lanes-select", "cleared-lanes"))]
    assert parts == [f"{name} (lanes {i}-{i + 7})" for i in range(0, 64, 8)
                     for name in ("lanes-select", "cleared-lanes-zero")]


def test_kept_positions_follow_section_5() -> None:
    """Slots hold positions in ascending logical order: 0x9 keeps 1 and 2 (two of 4), and
    for pairs 0xD keeps pairs 1 and 3, i.e. elements 2, 3, 6, 7."""
    ops = TraceOps()
    held = [[p for p, f in enumerate(slot) if f.node.value]
            for slot in sparse.kept_positions(ops, ops.const(0x9, 4), "two")]
    assert held == [[1], [2]]
    held = [[p for p, f in enumerate(slot) if f.node.value]
            for slot in sparse.kept_positions(ops, ops.const(0xD, 4), "pairs")]
    assert held == [[2], [3], [6], [7]]
    held = [[p for p, f in enumerate(slot) if f.node.value]
            for slot in sparse.kept_positions(ops, ops.const(0xE, 4), "one")]
    assert held == [[1]]


def core_row(desc: Descriptor, queries: list[Query]) -> Row:
    return check_queries("sparse-masking", desc, 4, queries, FAST, CHAIN)


def test_sparse_constants_match_the_catalog() -> None:
    """proofs/constants' section-5 tables (what the properties state) agree with spec/'s
    (what the datapaths run) on the unbroken specification."""
    for kind, (size, rule) in SPARSE_CHUNKS.items():
        assert SPARSE_RULE[kind] == rule and SPARSE_CHUNK[rule] == size == CHUNK_SIZES[rule]
        assert SPARSE_LEGAL[rule] == LEGAL_SELECTORS[rule]
        assert SPARSE_KEPT[rule] * 2 == size


@pytest.mark.parametrize("name", [n for n in sparse.SPARSE_PATHS
                                  if lookup(n).descriptor.family == "block"])
def test_dense_rules_are_written_from_semantics_not_read_from_spec(name: str) -> None:
    """The dense side's rules come from proofs/constants (issue 30); on the unbroken spec they
    are its own rules with the FP4 exact-sum groups doubled, and blocks of twice the lanes."""
    from tcspec.spec.blockscaled import rules_for

    desc = lookup(name).descriptor
    rules = rules_for(desc.kind, desc.scaling or "")
    double = 1 if rules.product_group == rules.c_dominant_group == 1 else 2
    assert sparse.dense_rules(desc) == dataclasses.replace(
        rules, product_group=double * rules.product_group,
        c_dominant_group=double * rules.c_dominant_group)
    assert sparse.dense_block(desc) == 2 * desc.scale_block


def test_wrong_mask_is_refuted_and_replayed() -> None:
    desc = lookup("sparse-tf32").descriptor
    query = sparse.masking_query(desc, 2, swapped_halves)
    outcome = decide(query, "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == REFUTED
    assert outcome.words["sparse"] != outcome.words["masked_dense"]


def test_non_interference_chain_proves_on_build_dots_own_lanes() -> None:
    row = sparse.check_interference(lookup("sparse-nvfp4").descriptor, 32, FAST)
    assert row.result == PROVED and row.method == CHAIN
    assert [lem["name"] for lem in row.lemmas] == ["hypothesis-satisfiable", "selection",
                                                   "same-word (lanes cut)"]


def test_selection_lemma_refutes_agreement_on_the_wrong_positions() -> None:
    outcome = decide(sparse.selection_lemma(lookup("sparse-tf32").descriptor, 4,
                                            swapped_halves), "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == REFUTED and "meta0" in outcome.words


def test_rows_are_selectable() -> None:
    rows = select_rows("sparse-non-interference")
    assert len(rows) == 18 and {r.k for r in rows if r.desc.name == "sparse-nvfp4"} == {128}
    with pytest.raises(ValueError):
        select_rows("sparse-masking", "sparse-tf32", k=3)


@pytest.mark.full
@pytest.mark.parametrize("name", UNSCALED)
def test_masking_chain_rows(name: str) -> None:
    """Every window path's masking row proves as a chain."""
    desc = lookup(name).descriptor
    row = sparse.check_masking(desc, desc.k, Settings(second_solver=None))
    assert row.result == PROVED and row.method == CHAIN


@pytest.mark.full
@pytest.mark.parametrize("name", sparse.SPARSE_PATHS)
def test_non_interference_rows(name: str) -> None:
    desc = lookup(name).descriptor
    assert sparse.check_interference(desc, desc.k, Settings(second_solver=None)).result == PROVED


def test_masking_chain_asks_units_relate_whole_when_the_runs_are_not_one_dag(monkeypatch):
    """Without the one-DAG step (a spec whose two runs' units differ in shape) the chain asks
    the unit relation of the solver itself, and still proves."""
    monkeypatch.setattr(sparse, "one_unit_dag", lambda *args: False)
    row = sparse.check_masking(lookup("sparse-tf32").descriptor, 4, FAST)
    names = [lem["name"] for lem in row.lemmas]
    assert row.result == PROVED and "units-relate (quanta cut, lanes 0-3)" in names
    assert not any(name.startswith("lanes-select") for name in names)
