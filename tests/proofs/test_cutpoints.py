"""Product cut-points (proofs/cutpoints.py) and the structural cut of smt/trace.py."""

from __future__ import annotations

from tcspec.proofs.core import PROVED, UNKNOWN, Query, decide
from tcspec.smt.solve import free_variables
from tcspec.smt.trace import TraceOps, cut_nodes
from tests.limits import SOLVER_LIMIT


def _query(body, cut: bool = True) -> Query:
    return Query("q", "forall", (("x", 8), ("y", 8)),
                 lambda ops, v: (body(ops, v["x"], v["y"]), {}), cut_products=cut)


def test_cut_products_keep_congruence_and_the_zero_law() -> None:
    same = _query(lambda ops, x, y: ops.ne(ops.mul(x, y), ops.mul(ops.bvand(x, 0xFF), y)))
    assert decide(same, "bitwuzla", SOLVER_LIMIT).result == PROVED
    zero = _query(lambda ops, x, y: ops.ne(ops.mul(ops.bvand(x, 0), y), 0))
    assert decide(zero, "bitwuzla", SOLVER_LIMIT).result == PROVED


def test_cut_products_know_nothing_else_and_a_spurious_model_is_not_a_refutation() -> None:
    commutes = _query(lambda ops, x, y: ops.ne(ops.mul(x, y), ops.mul(y, x)))
    outcome = decide(commutes, "bitwuzla", SOLVER_LIMIT)
    assert outcome.result == UNKNOWN and "not a counterexample" in outcome.reason
    assert decide(_query(lambda ops, x, y: ops.ne(ops.mul(x, y), ops.mul(y, x)), cut=False),
                  "bitwuzla", SOLVER_LIMIT).result == PROVED


def test_cut_nodes_replaces_every_occurrence_and_merges_named_nodes() -> None:
    ops = TraceOps()
    x, y = ops.variable("x", 8), ops.variable("y", 8)
    left, right = ops.add(x, 1), ops.add(y, 1)
    root = ops.eq(ops.mul(left, left), ops.mul(right, right))
    names = {left.node.id: "cut!l", right.node.id: "cut!l"}
    (cut,), cuts = cut_nodes([root.node], lambda n: names.get(n.id))
    assert {v.params[0] for v in free_variables([cut])} == {"cut!l"}
    assert set(cuts) == {"cut!l"}
