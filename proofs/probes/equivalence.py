"""Equivalence of two parameter variants by cut points (DESIGN.md, "Solvers").

Two variants of one datapath traced into one hash-consed DAG share every
node that does not depend on the parameter. Matching the two output nodes
top-down (same operation, same static parameters) pairs up the nodes where
they diverge. If each such pair is proved equal for every input that meets
the assumptions, the outputs are equal by congruence. Pairs are proved
bottom-up: a pair whose children are all equal is equal without a solver
call; otherwise one small query asks for an input on which the pair
differs. This proves, for example, that NVFP4's product window 40 and 39
give the same words (``P - 40 < S - 35`` always) in seconds, where the
monolithic output query does not finish. A failed lemma proves nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from tcspec.smt.solve import check_sat
from tcspec.smt.trace import Node, TraceOps, walk
from tcspec.spec.bitvec import BV, Bool

MAX_DIVERGENT_LEAVES = 16
MAX_LEMMAS = 64


@dataclass(frozen=True)
class CutProof:
    """``proved`` when every cut pair was shown equal; otherwise why not."""

    proved: bool
    lemmas: int
    seconds: float
    reason: str = ""


def _matchable(a: Node, b: Node) -> bool:
    return (a.op == b.op and a.params == b.params and a.width == b.width
            and [x.width for x in a.args] == [y.width for y in b.args]
            and not a.is_const and a.op != "var")


def _differ(ops: TraceOps, a: Node, b: Node) -> Node:
    if a.width is None:
        return ops.xor_(Bool(ops, a), Bool(ops, b)).node
    return ops.ne(BV(ops, a, a.width), BV(ops, b, b.width)).node


def prove_equal(ops: TraceOps, first: Node, second: Node, assumptions: Sequence[Node],
                variables: Sequence[Node], *, solver: str, timeout: float,
                budget: float) -> CutProof:
    """Prove ``first == second`` under ``assumptions`` through the cut pairs of their DAGs.

    Each lemma gets ``timeout`` seconds; the proof gives up after ``budget`` seconds.
    """
    started = time.monotonic()
    children: dict[tuple[int, int], list[tuple[Node, Node]]] = {}
    order: list[tuple[Node, Node]] = []
    leaves = 0
    stack: list[tuple[Node, Node, bool]] = [(first, second, False)]
    while stack:
        a, b, expanded = stack.pop()
        key = (a.id, b.id)
        if expanded:
            order.append((a, b))
            continue
        if a.id == b.id or key in children:
            continue
        pairs = list(zip(a.args, b.args)) if _matchable(a, b) else []
        if not pairs:
            leaves += 1
            if leaves > MAX_DIVERGENT_LEAVES:
                return CutProof(False, 0, time.monotonic() - started,
                                f"more than {MAX_DIVERGENT_LEAVES} divergent leaves")
        children[key] = [(x, y) for x, y in pairs if x.id != y.id]
        stack.append((a, b, True))
        stack.extend((x, y, False) for x, y in reversed(children[key]))
    proved: set[tuple[int, int]] = set()

    def propagate() -> None:
        for a, b in order:
            kids = children[(a.id, b.id)]
            if kids and all((x.id, y.id) in proved for x, y in kids):
                proved.add((a.id, b.id))

    propagate()
    cone = {key: len({n.id for n in walk([a, b])}) for key, (a, b) in
            ((k, p) for k, p in ((((a.id, b.id)), (a, b)) for a, b in order))}
    candidates = sorted((p for p in order if not (p[0].is_const and p[1].is_const)
                         and p[0].width == p[1].width), key=lambda p: cone[(p[0].id, p[1].id)])
    lemmas = 0
    for a, b in candidates:
        if (first.id, second.id) in proved:
            break
        if (a.id, b.id) in proved:
            continue
        if lemmas >= MAX_LEMMAS or time.monotonic() - started > budget:
            return CutProof(False, lemmas, time.monotonic() - started,
                            f"gave up after {lemmas} lemmas")
        lemmas += 1
        result = check_sat([*assumptions, _differ(ops, a, b)], variables, solver=solver,
                           timeout=timeout)
        if result.unsat:
            proved.add((a.id, b.id))
            propagate()
    done = (first.id, second.id) in proved
    return CutProof(done, lemmas, time.monotonic() - started,
                    "" if done else "a cut pair could not be shown equal")
