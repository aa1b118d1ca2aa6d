"""Equality of traced terms modulo associativity and commutativity (DESIGN.md, "Solvers").

Two sides of a permutation query differ only in the order in which lanes
reach the reductions: the exact sum (``add`` trees), the window maximum
(``smax`` trees, ``ite(slt(x, y), y, x)``) and the special-value flags
(``or``/``and`` chains). A solver has to rediscover commutativity of those
long chains bit by bit; here instead each side is put in a normal form in
which every associative-commutative operator is flattened into the multiset
of its operands, and the two roots are compared. The normal form is sound
when each rule it used holds: :func:`rule_queries` states them as solver
lemmas (commutativity and associativity of each operator at each width
used), and an AC operator applied to equal multisets gives equal values
(the standard AC argument).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from tcspec.proofs.core import Query, Variables
from tcspec.smt.trace import Node, walk
from tcspec.spec.bitvec import BV, Bool, Ops

AC_OPS = ("add", "mul", "and", "or", "xor", "band", "bor", "bxor", "smax")
"""Associative and commutative operators the normal form flattens (``smax`` is the pattern
``ite(slt(x, y), y, x)`` of :meth:`spec.bitvec.Ops.smax`)."""

COMMUTATIVE_OPS = ("eq",)
"""Commutative operators whose two operands the normal form sorts."""

Rule = tuple[str, int | None, str]
"""``(operator, width, law)``: ``law`` is ``"commutative"`` or ``"associative"``."""


def _smax_operands(node: Node) -> tuple[Node, Node] | None:
    """``(x, y)`` when ``node`` is ``ite(slt(x, y), y, x)``."""
    if node.op != "ite" or node.args[0].op != "slt":
        return None
    x, y = node.args[0].args
    if node.args[1] is y and node.args[2] is x:
        return x, y
    return None


class NormalForms:
    """Canonical ids of traced nodes modulo AC; :attr:`rules` records the rules used."""

    def __init__(self) -> None:
        self._ids: dict[tuple[Any, ...], int] = {}
        self._keys: list[tuple[Any, ...]] = []
        self._memo: dict[int, int] = {}
        self.rules: set[Rule] = set()

    def of(self, root: Node) -> int:
        """The canonical id of ``root`` (equal ids: equal values, given the rules)."""
        for node in walk([root]):
            if node.id not in self._memo:
                self._memo[node.id] = self._canonical(node)
        return self._memo[root.id]

    def _intern(self, key: tuple[Any, ...]) -> int:
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self._keys)
            self._keys.append(key)
        return found

    def _flatten(self, op: str, width: int | None, args: Iterable[Node]) -> int:
        direct = [self._memo[a.id] for a in args]
        operands: list[int] = []
        for ident in direct:
            key = self._keys[ident]
            if key[0] == "ac" and key[1] == op and key[2] == width:
                operands.extend(key[3])
                self.rules.update({(op, width, "associative"), (op, width, "commutative")})
            else:
                operands.append(ident)
        operands.sort()
        if operands != direct:
            self.rules.add((op, width, "commutative"))
        return self._intern(("ac", op, width, tuple(operands)))

    def _canonical(self, node: Node) -> int:
        smax = _smax_operands(node)
        if smax is not None:
            return self._flatten("smax", node.width, smax)
        if node.op in AC_OPS:
            return self._flatten(node.op, node.width, node.args)
        args = [self._memo[a.id] for a in node.args]
        if node.op in COMMUTATIVE_OPS and args != sorted(args):
            self.rules.add((node.op, node.args[0].width, "commutative"))
            args.sort()
        return self._intern((node.op, node.params, node.width, tuple(args)))


def _apply(ops: Ops, op: str, x: Any, y: Any) -> Any:
    boolean = {"band": ops.and_, "bor": ops.or_, "bxor": ops.xor_}
    if op in boolean:
        return boolean[op](x, y)
    return {"add": ops.add, "mul": ops.mul, "and": ops.bvand, "or": ops.bvor,
            "xor": ops.bvxor, "smax": ops.smax, "eq": ops.eq}[op](x, y)


def _differ(ops: Ops, x: BV | Bool, y: BV | Bool) -> Bool:
    if isinstance(x, Bool):
        assert isinstance(y, Bool)
        return ops.xor_(x, y)
    assert isinstance(y, BV)
    return ops.ne(x, y)


def rule_query(rule: Rule) -> Query:
    """Violation of ``x op y = y op x`` or ``(x op y) op z = x op (y op z)`` at ``width``."""
    op, width, law = rule
    bits = width or 1

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        x, y, *rest = (values[n] if width else ops.eq(values[n], 1) for n in sorted(values))
        if law == "commutative":
            return _differ(ops, _apply(ops, op, x, y), _apply(ops, op, y, x)), {}
        (z,) = rest
        return _differ(ops, _apply(ops, op, _apply(ops, op, x, y), z),
                       _apply(ops, op, x, _apply(ops, op, y, z))), {}

    name = f"{op}-{law}" + (f"-w{width}" if width else "")
    names = ("x", "y") if law == "commutative" else ("x", "y", "z")
    return Query(name, "forall", tuple((n, bits) for n in names), body)


def rule_queries(rules: Iterable[Rule]) -> list[Query]:
    """One lemma per rule, in a stable order."""
    return [rule_query(r) for r in sorted(rules, key=lambda r: (r[0], r[1] or 0, r[2]))]
