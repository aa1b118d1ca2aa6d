"""Tracing backend: records a hash-consed DAG of primitives (DESIGN.md, "Backends").

Every primitive call makes (or finds) a :class:`Node`; equal subterms are
one node, so printers can share them with ``let``. Constant operands are
folded with the scalar backend's primitives, the reference semantics of the
ops protocol, so static parts of a datapath (format fields, widths) leave no
trace in the formula.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.scalar import ScalarOps

_FOLD = ScalarOps()


class Node:
    """One DAG node: ``op`` applied to ``args`` with static ``params``.

    ``width`` is the bit-vector width, or ``None`` for a boolean.
    Constants have ``op == "const"``/``"bool_const"`` and their value in
    ``params[0]``; inputs have ``op == "var"`` and their name in ``params[0]``.
    """

    __slots__ = ("args", "id", "op", "params", "width")

    def __init__(self, ident: int, op: str, args: tuple[Node, ...],
                 params: tuple[Any, ...], width: int | None) -> None:
        self.id = ident
        self.op = op
        self.args = args
        self.params = params
        self.width = width

    @property
    def is_const(self) -> bool:
        return self.op in ("const", "bool_const")

    @property
    def value(self) -> Any:
        return self.params[0]

    def __repr__(self) -> str:
        if self.is_const or self.op == "var":
            return f"Node#{self.id}({self.op} {self.params[0]!r})"
        return f"Node#{self.id}({self.op} {[a.id for a in self.args]} {self.params})"


def walk(roots: Iterable[Node]) -> Iterator[Node]:
    """Every node reachable from ``roots``, children before parents, each once."""
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False) for root in roots]
    while stack:
        node, expanded = stack.pop()
        if node.id in seen:
            continue
        if expanded:
            seen.add(node.id)
            yield node
            continue
        stack.append((node, True))
        stack.extend((arg, False) for arg in node.args if arg.id not in seen)


_FOLDERS = {
    "extract": lambda a, p, w: _FOLD.p_extract(a[0], w[0], p[0], p[1]),
    "concat": lambda a, p, w: _FOLD.p_concat(a[0], w[0], a[1], w[1]),
    "zext": lambda a, p, w: _FOLD.p_zext(a[0], w[0], p[0]),
    "sext": lambda a, p, w: _FOLD.p_sext(a[0], w[0], p[0]),
    "not": lambda a, p, w: _FOLD.p_not(a[0], w[0]),
    "and": lambda a, p, w: _FOLD.p_and(a[0], a[1], w[0]),
    "or": lambda a, p, w: _FOLD.p_or(a[0], a[1], w[0]),
    "xor": lambda a, p, w: _FOLD.p_xor(a[0], a[1], w[0]),
    "add": lambda a, p, w: _FOLD.p_add(a[0], a[1], w[0]),
    "sub": lambda a, p, w: _FOLD.p_sub(a[0], a[1], w[0]),
    "neg": lambda a, p, w: _FOLD.p_neg(a[0], w[0]),
    "mul": lambda a, p, w: _FOLD.p_mul(a[0], a[1], w[0]),
    "shl": lambda a, p, w: _FOLD.p_shl(a[0], a[1], w[0]),
    "lshr": lambda a, p, w: _FOLD.p_lshr(a[0], a[1], w[0]),
    "ashr": lambda a, p, w: _FOLD.p_ashr(a[0], a[1], w[0]),
    "eq": lambda a, p, w: _FOLD.p_eq(a[0], a[1], w[0]),
    "ult": lambda a, p, w: _FOLD.p_ult(a[0], a[1], w[0]),
    "ule": lambda a, p, w: _FOLD.p_ule(a[0], a[1], w[0]),
    "slt": lambda a, p, w: _FOLD.p_slt(a[0], a[1], w[0]),
    "sle": lambda a, p, w: _FOLD.p_sle(a[0], a[1], w[0]),
    "band": lambda a, p, w: a[0] and a[1],
    "bor": lambda a, p, w: a[0] or a[1],
    "bnot": lambda a, p, w: not a[0],
    "bxor": lambda a, p, w: a[0] != a[1],
}


class TraceOps(Ops):
    """Records the primitives a datapath applies as a shared DAG."""

    name = "trace"

    def __init__(self) -> None:
        self._table: dict[tuple[Any, ...], Node] = {}
        self.inputs: dict[str, Node] = {}

    def __len__(self) -> int:
        return len(self._table)

    def _make(self, op: str, args: tuple[Node, ...], params: tuple[Any, ...],
              width: int | None) -> Node:
        key = (op, tuple(arg.id for arg in args), params, width)
        node = self._table.get(key)
        if node is None:
            node = Node(len(self._table), op, args, params, width)
            self._table[key] = node
        return node

    def _node(self, op: str, args: tuple[Node, ...], width: int | None,
              params: tuple[Any, ...] = ()) -> Node:
        if args and all(arg.is_const for arg in args):
            value = _FOLDERS[op]([a.value for a in args], params, [a.width for a in args])
            if width is None:
                return self._make("bool_const", (), (bool(value),), None)
            return self._make("const", (), (value,), width)
        return self._make(op, args, params, width)

    def variable(self, name: str, width: int) -> BV:
        """A free bit-vector input named ``name``."""
        if name in self.inputs:
            raise ValueError(f"input {name!r} declared twice")
        node = self._make("var", (), (name,), width)
        self.inputs[name] = node
        return BV(self, node, width)

    def bool_variable(self, name: str) -> Bool:
        if name in self.inputs:
            raise ValueError(f"input {name!r} declared twice")
        node = self._make("var", (), (name,), None)
        self.inputs[name] = node
        return Bool(self, node)

    def p_const(self, value: int, width: int) -> Node:
        return self._make("const", (), (value,), width)

    def p_bool_const(self, value: bool) -> Node:
        return self._make("bool_const", (), (value,), None)

    def p_extract(self, x: Node, width: int, hi: int, lo: int) -> Node:
        return self._node("extract", (x,), hi - lo + 1, (hi, lo))

    def p_concat(self, x: Node, wx: int, y: Node, wy: int) -> Node:
        return self._node("concat", (x, y), wx + wy)

    def p_zext(self, x: Node, width: int, extra: int) -> Node:
        return self._node("zext", (x,), width + extra, (extra,))

    def p_sext(self, x: Node, width: int, extra: int) -> Node:
        return self._node("sext", (x,), width + extra, (extra,))

    def p_not(self, x: Node, width: int) -> Node:
        return self._node("not", (x,), width)

    def p_and(self, x: Node, y: Node, width: int) -> Node:
        return self._node("and", (x, y), width)

    def p_or(self, x: Node, y: Node, width: int) -> Node:
        return self._node("or", (x, y), width)

    def p_xor(self, x: Node, y: Node, width: int) -> Node:
        return self._node("xor", (x, y), width)

    def p_add(self, x: Node, y: Node, width: int) -> Node:
        return self._node("add", (x, y), width)

    def p_sub(self, x: Node, y: Node, width: int) -> Node:
        return self._node("sub", (x, y), width)

    def p_neg(self, x: Node, width: int) -> Node:
        return self._node("neg", (x,), width)

    def p_mul(self, x: Node, y: Node, width: int) -> Node:
        return self._node("mul", (x, y), width)

    def p_shl(self, x: Node, amount: Node, width: int) -> Node:
        return self._node("shl", (x, amount), width)

    def p_lshr(self, x: Node, amount: Node, width: int) -> Node:
        return self._node("lshr", (x, amount), width)

    def p_ashr(self, x: Node, amount: Node, width: int) -> Node:
        return self._node("ashr", (x, amount), width)

    def p_eq(self, x: Node, y: Node, width: int) -> Node:
        if x.id == y.id:
            return self.p_bool_const(True)
        return self._node("eq", (x, y), None)

    def p_ult(self, x: Node, y: Node, width: int) -> Node:
        return self._node("ult", (x, y), None)

    def p_ule(self, x: Node, y: Node, width: int) -> Node:
        return self._node("ule", (x, y), None)

    def p_slt(self, x: Node, y: Node, width: int) -> Node:
        return self._node("slt", (x, y), None)

    def p_sle(self, x: Node, y: Node, width: int) -> Node:
        return self._node("sle", (x, y), None)

    def p_band(self, x: Node, y: Node) -> Node:
        for a, b in ((x, y), (y, x)):
            if a.is_const:
                return b if a.value else a
        return self._node("band", (x, y), None)

    def p_bor(self, x: Node, y: Node) -> Node:
        for a, b in ((x, y), (y, x)):
            if a.is_const:
                return a if a.value else b
        return self._node("bor", (x, y), None)

    def p_bnot(self, x: Node) -> Node:
        if x.op == "bnot":
            return x.args[0]
        return self._node("bnot", (x,), None)

    def p_bxor(self, x: Node, y: Node) -> Node:
        return self._node("bxor", (x, y), None)

    def p_ite(self, cond: Node, then: Node, other: Node, width: int | None) -> Node:
        if cond.is_const:
            return then if cond.value else other
        if then.id == other.id:
            return then
        return self._make("ite", (cond, then, other), (), width)


def evaluate(roots: list[Node], inputs: dict[str, int]) -> list[Any]:
    """Evaluate traced nodes on concrete inputs with the scalar semantics."""
    values: dict[int, Any] = {}
    for node in walk(roots):
        if node.op == "var":
            name = node.params[0]
            if name not in inputs:
                raise KeyError(f"no value for input {name!r}")
            values[node.id] = inputs[name]
        elif node.is_const:
            values[node.id] = node.value
        elif node.op == "ite":
            cond, then, other = (values[a.id] for a in node.args)
            values[node.id] = then if cond else other
        else:
            values[node.id] = _FOLDERS[node.op](
                [values[a.id] for a in node.args], node.params, [a.width for a in node.args])
    return [values[root.id] for root in roots]


def cut_nodes(roots: Sequence[Node], chosen: Callable[[Node], str | Node | None],
              ops: TraceOps | None = None) -> tuple[list[Node], dict[str, Node]]:
    """``roots`` with every node ``chosen`` names replaced by a free variable of that name.

    The variable stands at every occurrence of the node it replaces, in a
    rebuilt DAG (in ``ops``, a fresh table by default); two nodes given one
    name become one variable. ``chosen`` may instead give a node of ``ops``
    (an expression over such variables) to stand in. Returns the new roots
    and each variable's name with the (first) node it replaced.
    """
    ops = ops if ops is not None else TraceOps()
    new: dict[int, Node] = {}
    cuts: dict[str, Node] = {}
    for node in walk(roots):
        name = chosen(node)
        if isinstance(name, Node):
            new[node.id] = name
        elif name is not None:
            cuts.setdefault(name, node)
            new[node.id] = ops._make("var", (), (name,), node.width)
        elif node.op == "var" or node.is_const:
            new[node.id] = ops._make(node.op, (), node.params, node.width)
        else:
            new[node.id] = ops._node(node.op, tuple(new[a.id] for a in node.args),
                                     node.width, node.params)
    return [new[r.id] for r in roots], cuts
