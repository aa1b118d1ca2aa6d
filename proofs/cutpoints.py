"""Cut-points at the multipliers of a traced query (DESIGN.md, "The proof method").

Every product of two non-constant bit-vectors in the query's DAG (the
significand products of ``build_dot``'s own graph and of the reference side)
is replaced, at each of its occurrences, by a free variable. The variables
are constrained only by two laws every ``bvmul`` obeys: the product of equal
operands is equal (functional consistency), and a zero operand gives a zero
product. A
``forall`` violation that is unsat under these constraints is unsat with the
real products, since the real products satisfy them: the abstraction only
adds behaviours. A sat answer may be spurious; callers replay it.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcspec.smt.trace import Node, TraceOps, cut_nodes, walk
from tcspec.spec.bitvec import BV, Ops

Record = dict[str, dict[str, Any]]


def opaque_product(node: Node) -> bool:
    """A ``bvmul`` of two non-constant operands (a product by a constant is kept)."""
    return node.op == "mul" and not any(arg.is_const for arg in node.args)


@dataclass(frozen=True)
class Abstraction:
    """The abstracted assertions and the product nodes their variables stand for."""

    assertions: list[Node]
    products: dict[str, Node]


def abstract_products(condition: Node) -> Abstraction:
    """``condition`` with its products cut, plus the congruence and zero constraints."""
    products = [n for n in walk([condition]) if opaque_product(n)]
    ops = TraceOps()
    roots, cuts = cut_nodes([condition, *(a for p in products for a in p.args)],
                            lambda n: f"cut!{n.id}" if opaque_product(n) else None, ops=ops)
    args = {p.id: (roots[1 + 2 * i], roots[2 + 2 * i]) for i, p in enumerate(products)}
    var = {p.id: ops._make("var", (), (f"cut!{p.id}",), p.width) for p in products}

    def node(op: str, *xs: Node) -> Node:
        return ops._node(op, tuple(xs), None)

    def zero(x: Node) -> Node:
        return ops._node("eq", (x, ops._make("const", (), (0,), x.width)), None)

    assertions = [roots[0]]
    for p in products:
        x, y = args[p.id]
        assertions.append(node("bor", node("bnot", node("bor", zero(x), zero(y))), zero(var[p.id])))
    for p, r in itertools.combinations(products, 2):
        if p.width != r.width:
            continue
        (x1, y1), (x2, y2) = args[p.id], args[r.id]
        same = node("band", node("eq", x1, x2), node("eq", y1, y2))
        assertions.append(node("bor", node("bnot", same), node("eq", var[p.id], var[r.id])))
    return Abstraction(assertions, cuts)


def recorded(ops: Ops, build: Callable[[], BV]) -> tuple[BV, Record]:
    """Run ``build`` and keep the stage values it reports through ``ops.observe``
    (the spec's own nodes at its stage boundaries, SEMANTICS.md section 4): the first
    report of each stage."""
    out, every = observed(ops, build)
    return out, {stage: reports[0] for stage, reports in every.items()}


_OBSERVER = threading.local()


def _dispatch(stage: str, **values: Any) -> None:
    observer = getattr(_OBSERVER, "observer", None)
    if observer is not None:
        observer(stage, **values)


def observed(ops: Ops, build: Callable[[], BV]) -> tuple[BV, dict[str, list[dict[str, Any]]]]:
    """Run ``build`` and keep every report of every stage, in the order made (a stage
    reported once per group, such as ``group_merge``, gives one entry per group).

    The reports go to this thread's observer only: rows run in threads and replay on the one
    shared scalar lowering, so an observer set on the ops object itself would take another
    row's reports or be removed under it."""
    every: dict[str, list[dict[str, Any]]] = {}

    def observe(stage: str, **values: Any) -> None:
        every.setdefault(stage, []).append(values)

    before = getattr(_OBSERVER, "observer", None)
    _OBSERVER.observer = observe
    ops.observe = _dispatch  # type: ignore[method-assign]
    try:
        return build(), every
    finally:
        _OBSERVER.observer = before
