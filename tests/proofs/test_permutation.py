"""Permutation invariance: AC normal forms, rule lemmas, the NVFP4 cross-group witness."""

from __future__ import annotations

import pytest

from tcspec.proofs.core import (
    MONOLITHIC,
    NORMAL_FORM,
    PROVED,
    REFUTED,
    WITNESS,
    Settings,
    dot_inputs,
)
from tcspec.proofs.normal_form import NormalForms, rule_query
from tcspec.proofs.permutation import (
    check,
    check_across_groups,
    invariance_row,
    lane_order,
    rotation,
    swap,
)
from tcspec.proofs.stages import traced_inputs
from tcspec.smt.trace import TraceOps
from tcspec.spec.catalog import build_dot, input_layout, lookup
from tcspec.spec.scalar import SCALAR
from tests.limits import SOLVER_LIMIT

FAST = Settings(second_solver=None, timeout=SOLVER_LIMIT)


def _desc(name: str):
    return lookup(name).descriptor


def test_normal_form_identifies_reordered_sums_and_maxima_only() -> None:
    ops = TraceOps()
    x, y, z = (ops.variable(n, 8) for n in "xyz")
    forms = NormalForms()
    assert forms.of(ops.sum([x, y, z]).node) == forms.of(ops.sum([z, x, y]).node)
    assert forms.of(ops.smax_all([x, y, z]).node) == forms.of(ops.smax_all([y, z, x]).node)
    assert forms.of(ops.sub(x, y).node) != forms.of(ops.sub(y, x).node)
    assert forms.of(ops.smax(x, y).node) != forms.of(ops.smin(x, y).node)
    assert ("add", 8, "associative") in forms.rules and ("smax", 8, "commutative") in forms.rules


def test_rule_lemma_is_a_real_query() -> None:
    query = rule_query(("smax", 12, "associative"))
    holds, _ = query.replay({"x": 5, "y": 4095, "z": 7})
    assert holds is False
    assert [name for name, _ in query.variables] == ["x", "y", "z"]


def test_fast_rows_are_proved_by_normal_forms() -> None:
    for name, k in (("dense-e2m1", 4), ("dense-nvfp4", 16)):
        row = check(_desc(name), k, FAST)
        assert row.result == PROVED and row.method == NORMAL_FORM, row.detail
        assert row.lemmas and all(lem["result"] == PROVED for lem in row.lemmas)


def test_nvfp4_rotation_does_not_normalise_away() -> None:
    desc, k = _desc("dense-nvfp4"), 16
    ops, inputs = traced_inputs(desc, k)
    forms = NormalForms()
    root = forms.of(build_dot(ops, desc, inputs, any_k=True).node)
    assert forms.of(build_dot(ops, desc, lane_order(inputs, rotation(k)), any_k=True).node) != root
    assert forms.of(build_dot(ops, desc, lane_order(inputs, swap(0, 1, k)),
                              any_k=True).node) == root


def test_swapping_only_a_is_refuted_with_a_replayed_counterexample() -> None:
    desc, k = _desc("dense-e2m1"), 2
    row = invariance_row("permutation", desc, k,
                         {"swap-a-only": lambda x: lane_order(x, swap(0, 1, k), "a")}, FAST)
    assert row.result == REFUTED and row.method == MONOLITHIC
    assert row.words["d"] != row.words["d_reordered"]


def test_cross_group_witness_replays() -> None:
    desc, k = _desc("dense-nvfp4"), 32
    row = check_across_groups(desc, k, FAST)
    assert row.result == WITNESS
    values = {s.name: SCALAR.const(0, s.width) for s in input_layout(desc, k)}
    model = {"c": 0, "scale_a0": 1, "scale_b0": 1, "scale_a1": 0x78, "scale_b1": 0x78,
             "a16": 0xE, "b16": 0x6}
    model.update({name: value for name, value in row.words.items() if name[0] in "ab"})
    for name in values:
        width = values[name].width
        values[name] = SCALAR.const(model.get(name, 0x38 if name.startswith("scale") else 0),
                                    width)
    inputs = dot_inputs(desc, k, values)
    d = build_dot(SCALAR, desc, inputs, any_k=True).node
    d_swapped = build_dot(SCALAR, desc, lane_order(inputs, swap(0, 4, k)), any_k=True).node
    assert (d, d_swapped) == (row.words["d"], row.words["d_swapped"]) and d != d_swapped


@pytest.mark.full
@pytest.mark.parametrize("name", ["dense-tf32", "dense-bf16", "dense-f16", "dense-e4m3",
                                  "dense-e2m1", "dense-nvfp4"])
def test_required_rows_are_proved(name: str) -> None:
    desc = _desc(name)
    row = check(desc, desc.k, Settings())
    assert row.result == PROVED and row.second and row.second["result"] == PROVED


@pytest.mark.full
def test_cross_group_witness_at_full_k() -> None:
    assert check_across_groups(_desc("dense-nvfp4"), 64, Settings()).result == WITNESS
