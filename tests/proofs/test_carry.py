"""K-group carry preservation (proofs/carry.py)."""

from __future__ import annotations

import dataclasses
import random
from fractions import Fraction

import pytest

from tcspec.proofs import carry, floor
from tcspec.proofs.core import CHAIN, PROVED, REFUTED, UNKNOWN, WITNESS, Query, Settings, decide
from tcspec.proofs.cutpoints import observed
from tcspec.smt.trace import TraceOps
from tcspec.spec.accumulate import max_raw
from tcspec.spec.catalog import lookup
from tcspec.spec.formats import EXP_WIDTH
from tcspec.spec.scalar import SCALAR
from tests.limits import SOLVER_LIMIT

NVFP4 = lookup("dense-nvfp4").descriptor
FAST = Settings(second_solver=None, timeout=SOLVER_LIMIT)


def test_group_sizes_and_reachable_ends() -> None:
    assert carry.group_size(NVFP4) == 4
    assert carry.reachable_excess(NVFP4) == (3, 3)
    mxf4 = lookup("dense-mxf4").descriptor
    assert carry.group_size(mxf4) == 16 and carry.reachable_excess(mxf4) == (12, 11)


def test_both_ends_are_reached_for_nvfp4() -> None:
    row = carry.check_ends(NVFP4, 64, FAST)
    assert row.result == WITNESS
    names = [lemma["name"] for lemma in row.lemmas]
    assert names == ["same-sign excess 0 (nonzero sum)", "same-sign excess 3",
                     "mixed signs difference 3"]


def test_excess_of_g_minus_1_replays() -> None:
    outcome = decide(carry.end_queries(NVFP4)[1], "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == WITNESS
    difference = outcome.words["group_units"] - outcome.words["per_product_units"]
    assert abs(difference) == carry.group_size(NVFP4) - 1


def test_b200_carry_word_separates_group_from_per_product() -> None:
    """The B200 word nvfp4-k4-product-carry: per-product 0x49FCAFB6, hardware 0x49FCAFB7."""
    words = carry.carry_word_inputs(NVFP4)
    query = carry.differ_query(NVFP4, 64, words, "b200")
    holds, shown = query.replay({})
    assert holds and shown["hardware"] == 0x49FCAFB7 and shown["per_product"] == 0x49FCAFB6
    outcome = decide(query, "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == WITNESS and outcome.words["hardware"] == 0x49FCAFB7


@pytest.mark.full
def test_mxf4_ends() -> None:
    assert carry.check_ends(lookup("dense-mxf4").descriptor, 64, Settings(second_solver=None)
                            ).result == WITNESS


# ------------------------------------------------------------ the bound lemmas

MXF4 = lookup("dense-mxf4").descriptor


def _signed(word: int, width: int) -> int:
    return word - (1 << width) if word >> (width - 1) else word


@pytest.mark.parametrize("desc", [NVFP4, MXF4], ids=["nvfp4", "mxf4"])
def test_values_and_units_match_exact_arithmetic(desc) -> None:
    """On random groups: X_i 2^e is each product's value, the group units truncate their sum
    toward zero and each product's units truncate it alone (the lemmas' statements)."""
    rng = random.Random(7)
    checked = 0
    while checked < 40:
        values = {n: SCALAR.const(rng.getrandbits(w), w) for n, w in carry.group_variables(desc)}
        if desc is MXF4:
            for name in ("scale_a", "scale_b"):
                values[name] = SCALAR.const(rng.randint(110, 140), 8)
        terms = carry.group_terms(SCALAR, desc, values)
        top, nonzero = max_raw(SCALAR, terms.products)
        if not nonzero.node:
            continue
        q = _signed(top.node, EXP_WIDTH) - 39 + rng.choice([0, 1, 3, 9, 30])
        q_word = SCALAR.const(q % 4096, EXP_WIDTH)
        if not carry.group_usable(SCALAR, desc, terms, q_word).node:
            continue
        xs, e = carry.product_values(SCALAR, desc, terms)
        exact = [Fraction(-p.mag.node if p.negative.node else p.mag.node)
                 * Fraction(2) ** (_signed(p.raw.node, EXP_WIDTH) - p.frac_offset)
                 for p in terms.products]
        for x, value in zip(xs, exact):
            assert _signed(x.node, x.width) * Fraction(2) ** _signed(e.node, EXP_WIDTH) == value
        grouped, singles = carry.group_units(SCALAR, desc, terms, q_word)
        quantum = Fraction(2) ** q
        assert _signed(grouped.node, grouped.width) == int(sum(exact) / quantum)
        assert [_signed(u.node, u.width) for u in singles] == [int(v / quantum) for v in exact]
        checked += 1


def _chain_k(desc, k, index):
    return {q.name.removeprefix(f"group {index}: "): q for q in carry.dot_chain(desc, k, None,
                                                                              index)}


def _chain(desc, top=None, index=0):
    """The chain of product group ``index``, by query name without its group prefix."""
    return {q.name.removeprefix(f"group {index}: "): q
            for q in carry.dot_chain(desc, 64, top, index)}


def test_cheap_nvfp4_chain_queries_are_proved() -> None:
    """The chain's queries that take seconds on dense-nvfp4 (the rest: the full test)."""
    chain = _chain(NVFP4)
    for name, query in chain.items():
        if name.startswith(("carry tree level 1", "composition", "quantum", "group-value",
                            "group-bound", "group-truncates", "distributive",
                            "group-sum-elements")):
            assert decide(query, "bitwuzla", SOLVER_LIMIT).result == PROVED, name
    for name in ("hypothesis-satisfiable (same sign)", "hypothesis-satisfiable (mixed signs)"):
        assert decide(chain[name], "bitwuzla", SOLVER_LIMIT).result == WITNESS, name
    assert decide(chain["hypothesis-agrees"], "bitwuzla", SOLVER_LIMIT).result == PROVED


def test_a_wrong_bound_is_not_proved() -> None:
    """With G-2 in place of G-1 the last composition step fails (the ends witnesses reach
    G-1), and its model is not passed off as a counterexample."""
    chain = _chain(NVFP4, top=carry.group_size(NVFP4) - 2)
    name = "composition (positive or zero; g, u_i and the products' flags cut)"
    outcome = decide(chain[name], "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == UNKNOWN and "does not replay" in outcome.reason


def test_the_chain_reads_build_dots_own_group() -> None:
    """The group units are build_dot's groups-stage node, and replayed on the scalar
    lowering they truncate the group's exact sum (the B200 carry word)."""
    words = carry.carry_word_inputs(NVFP4)
    values = {n: SCALAR.const(words.get(n, 0), w)
              for n, w in carry.layout_variables(NVFP4, 64)}
    group = carry.dot_group(SCALAR, NVFP4, 64, values)
    xs, e = carry.product_values(SCALAR, NVFP4, carry.GroupTerms(
        (), group.scale_pair, group.elements, group.products))
    total = carry.values_sum(SCALAR, NVFP4, xs)
    shift = SCALAR.sub(e, group.quantum)
    assert floor.truncates(SCALAR, total, shift, group.grouped).node
    assert len(group.products) == carry.group_size(NVFP4)


def test_the_chain_names_its_queries() -> None:
    for desc, levels in ((NVFP4, 2), (MXF4, 4)):
        names = [q.name for q in carry.dot_chain(desc, 64)]
        assert names[:4] == ["group 0: hypothesis-satisfiable (same sign)",
                             "group 0: hypothesis-satisfiable (mixed signs)",
                             "group 0: hypothesis-agrees", "group 0: quantum"]
        assert "group 0: group-truncates (q, group sum and X_i cut)" in names
        assert sum(n.startswith("carry tree level") for n in names) == 3 * levels
        assert sum(n.startswith("group 0: composition") for n in names) == 3
        last = [q.name for q in carry.dot_chain(desc, 64, index=64 // carry.group_size(desc) - 1)]
        assert not any(n.startswith(("carry tree level", "carry-step")) for n in last)
        assert all(n.startswith(f"group {64 // carry.group_size(desc) - 1}: ") for n in last)
        assert f"G={carry.group_size(desc)}" in carry.static_widths(desc)


def test_the_element_sum_follows_the_groups_tree_or_is_asked_whole(monkeypatch) -> None:
    """``group-sum-elements`` is one query per level of the group's own adder tree; when the
    spec's group is not G products (a changed group size) it is one query, refuted."""
    names = [n for n in _chain(NVFP4) if n.startswith("group-sum-elements")]
    assert names == ["group-sum-elements (tree level 0)",
                     "group-sum-elements (tree level 1, level below cut)",
                     "group-sum-elements (tree level 2, level below cut)"]
    from tcspec.spec import blockscaled

    monkeypatch.setattr(blockscaled, "NVFP4_RULES", dataclasses.replace(
        blockscaled.NVFP4_RULES, product_group=2))
    chain = _chain(NVFP4)
    assert [n for n in chain if n.startswith("group-sum-elements")] == ["group-sum-elements"]
    assert decide(chain["group-sum-elements"], "bitwuzla", SOLVER_LIMIT).result != PROVED


def test_truncation_without_carries_is_refuted_and_replays() -> None:
    """``truncates`` is not vacuous: the claim T(X + Y) = T(X) + T(Y) is refuted, and the
    counterexample is a real carry in exact arithmetic."""

    def body(ops, values):
        x, y, s = values["x"], values["y"], values["shift"]
        a, b, c = values["tx"], values["ty"], values["txy"]
        pre = ops.and_(floor.truncates(ops, x, s, a), floor.truncates(ops, y, s, b),
                       floor.truncates(ops, ops.add(ops.sext(x, 7), ops.sext(y, 7)), s, c))
        return ops.and_(pre, ops.ne(ops.sext(c, 9), ops.add(ops.sext(a, 9), ops.sext(b, 9)))), {
            "x": x, "y": y, "shift": s}

    variables = (("x", 6), ("y", 6), ("shift", EXP_WIDTH), ("tx", 7), ("ty", 7), ("txy", 7))
    outcome = decide(Query("no carries", "forall", variables, body), "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == REFUTED
    x, y = _signed(outcome.words["x"], 6), _signed(outcome.words["y"], 6)
    quantum = Fraction(2) ** -_signed(outcome.words["shift"], EXP_WIDTH)
    assert int((x + y) / quantum) != int(x / quantum) + int(y / quantum)


@pytest.mark.full
@pytest.mark.parametrize("name", carry.GROUP_PATHS)
def test_bound_rows_are_proved_by_the_chain(name: str) -> None:
    desc = lookup(name).descriptor
    row = carry.check_bounds(desc, desc.k, Settings(second_solver=None))
    assert row.result == PROVED and row.method == CHAIN, row.detail
    groups = carry.summed_lanes(desc, desc.k) // carry.group_size(desc)
    assert [lemma["name"] for lemma in row.lemmas] == [
        q.name for index in range(groups) for q in carry.dot_chain(desc, desc.k, index=index)]


def test_every_group_is_read_by_ds_sum_and_its_chain_proves() -> None:
    """The last group of dense-mxf4nvf4-4x: its units are an argument of the sum D encodes
    (carry_cover), and its chain's cheap queries prove; a units node beside the sum is
    refused."""
    desc = lookup("dense-mxf4nvf4-4x").descriptor
    assert carry.carry_cover(desc, 64) == []
    chain = _chain(desc, index=3)
    for name in ("hypothesis-agrees", "group-bound (q cut)",
                 "group-truncates (q, group sum and X_i cut)"):
        assert decide(chain[name], "bitwuzla", SOLVER_LIMIT).result == PROVED, name
    ops = TraceOps()
    values = {n: ops.variable(n, w) for n, w in carry.layout_variables(desc, 64)}
    _, every = observed(ops, lambda: carry.run_dot(ops, desc, carry.dot_inputs(desc, 64, values)))
    total = every["groups"][0]["product_total"].node
    group = carry.dot_group(ops, desc, 64, values, 3)
    assert carry.read_by_sum(total, group.grouped.node)
    assert not carry.read_by_sum(total, ops.add(group.grouped, 1).node)


def test_sparse_group_paths_read_the_compacted_groups() -> None:
    """sparse-nvfp4: 16 groups of 4 compacted lanes, each read by D's sum; the statement's
    hypothesis holds only with legal metadata (section 5)."""
    desc = lookup("sparse-nvfp4").descriptor
    assert "sparse-nvfp4" in carry.GROUP_PATHS
    assert carry.carry_cover(desc, 128) == []
    chain = _chain_k(desc, 128, 15)
    for name in ("hypothesis-agrees", "group-bound (q cut)"):
        assert decide(chain[name], "bitwuzla", SOLVER_LIMIT).result == PROVED, name
