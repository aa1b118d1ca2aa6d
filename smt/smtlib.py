"""Traced DAG -> SMT-LIB2 text with ``let`` sharing.

A node used more than once (or nested too deeply) is bound by a ``let``;
bindings are grouped by level, so one ``let`` binds every shared node whose
shared operands are already bound. The text is plain QF_BV that z3,
bitwuzla and cvc5 all read.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from tcspec.smt.trace import Node, walk

_OPERATORS = {
    "not": "bvnot", "and": "bvand", "or": "bvor", "xor": "bvxor",
    "add": "bvadd", "sub": "bvsub", "neg": "bvneg", "mul": "bvmul",
    "shl": "bvshl", "lshr": "bvlshr", "ashr": "bvashr",
    "eq": "=", "ult": "bvult", "ule": "bvule", "slt": "bvslt", "sle": "bvsle",
    "band": "and", "bor": "or", "bnot": "not", "bxor": "xor",
    "ite": "ite", "concat": "concat",
}

MAX_INLINE_DEPTH = 24
"""Deeper chains of single-use nodes are bound too, so no parser recurses far."""


def sort_of(width: int | None) -> str:
    return "Bool" if width is None else f"(_ BitVec {width})"


def literal(value: int, width: int) -> str:
    if width % 4 == 0:
        return f"#x{value:0{width // 4}x}"
    return f"#b{value:0{width}b}"


def _head(node: Node) -> str:
    if node.op == "extract":
        return f"(_ extract {node.params[0]} {node.params[1]})"
    if node.op == "zext":
        return f"(_ zero_extend {node.params[0]})"
    if node.op == "sext":
        return f"(_ sign_extend {node.params[0]})"
    return _OPERATORS[node.op]


def _atom(node: Node) -> str | None:
    if node.op == "const":
        return literal(node.value, node.width)
    if node.op == "bool_const":
        return "true" if node.value else "false"
    if node.op == "var":
        return node.params[0]
    return None


def to_smtlib_term(roots: Sequence[Node]) -> list[str]:
    """One SMT-LIB term per root, all sharing one set of nested ``let`` bindings.

    With several roots the bindings are repeated around each root, so each
    string stands alone.
    """
    order = list(walk(roots))
    uses: Counter[int] = Counter()
    for node in order:
        for arg in node.args:
            uses[arg.id] += 1
    bound: set[int] = set()
    text: dict[int, str] = {}
    depth: dict[int, int] = {}
    level: dict[int, int] = {}
    bindings: dict[int, list[tuple[str, str]]] = {}
    for node in order:
        atom = _atom(node)
        if atom is not None:
            text[node.id], depth[node.id], level[node.id] = atom, 0, 0
            continue
        body = " ".join(text[a.id] for a in node.args)
        expr = f"({_head(node)} {body})"
        node_depth = 1 + max(depth[a.id] for a in node.args)
        node_level = max(level[a.id] for a in node.args)
        if uses[node.id] > 1 or node_depth > MAX_INLINE_DEPTH:
            name = f"n!{node.id}"
            node_level += 1
            bindings.setdefault(node_level, []).append((name, expr))
            bound.add(node.id)
            text[node.id], depth[node.id] = name, 0
        else:
            text[node.id], depth[node.id] = expr, node_depth
        level[node.id] = node_level
    terms = []
    for root in roots:
        term = text[root.id]
        for lvl in sorted(bindings, reverse=True):
            if lvl > level[root.id]:
                continue
            pairs = " ".join(f"({name} {expr})" for name, expr in bindings[lvl])
            term = f"(let ({pairs})\n {term})"
        terms.append(term)
    return terms


def comments(lines: Sequence[str]) -> list[str]:
    return [f"; {line}" for line in lines]


def define_fun(name: str, params: Sequence[Node], root: Node) -> str:
    """``(define-fun name ((p sort) ...) sort term)``: ``root`` as a function of ``params``.

    ``params`` are ``var`` nodes; with none it defines a constant.
    """
    args = " ".join(f"({node.params[0]} {sort_of(node.width)})" for node in params)
    term = to_smtlib_term([root])[0]
    return f"(define-fun {name} ({args}) {sort_of(root.width)}\n {term})"


def script(inputs: Sequence[Node], outputs: Sequence[tuple[str, Node]],
           header: Sequence[str] = ()) -> str:
    """A self-contained SMT-LIB2 script declaring ``inputs`` and defining ``outputs``."""
    lines = comments(header)
    lines.append("(set-logic QF_BV)")
    for node in inputs:
        lines.append(f"(declare-fun {node.params[0]} () {sort_of(node.width)})")
    lines += [define_fun(name, (), node) for name, node in outputs]
    return "\n".join(lines) + "\n"
