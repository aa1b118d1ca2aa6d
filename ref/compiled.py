"""Compiled scalar lowering: the traced DAG turned into straight-line Python.

The tracer (:mod:`smt.trace`) records a datapath once per descriptor, with
static parts folded away; this module prints that DAG as one Python function
of int arguments, a line per node, with the scalar backend's semantics. It
is the fast path behind ``mma_dot``; the conformance tests hold it to the
interpreted scalar backend and the other lowerings.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from tcspec.smt.formula import TracedFormula, traced, traced_model
from tcspec.smt.trace import Node, walk
from tcspec.spec.candidates import HARDWARE
from tcspec.spec.descriptor import Descriptor


def _expr(node: Node, ref: Callable[[Node], str]) -> str:
    op, args = node.op, [ref(a) for a in node.args]
    arg_width = node.args[0].width if node.args else None
    mask = (1 << node.width) - 1 if node.width else None
    if op == "extract":
        hi, lo = node.params
        return f"({args[0]} >> {lo}) & {(1 << (hi - lo + 1)) - 1}"
    if op == "concat":
        return f"({args[0]} << {node.args[1].width}) | {args[1]}"
    if op == "zext":
        return args[0]
    if op == "sext":
        sign = 1 << (arg_width - 1)
        return f"(({args[0]} ^ {sign}) - {sign}) & {mask}"
    if op == "not":
        return f"{args[0]} ^ {mask}"
    if op in ("and", "or", "xor"):
        return f"{args[0]} {dict(zip(('and', 'or', 'xor'), '&|^'))[op]} {args[1]}"
    if op in ("add", "sub", "mul"):
        return f"({args[0]} {dict(zip(('add', 'sub', 'mul'), '+-*'))[op]} {args[1]}) & {mask}"
    if op == "neg":
        return f"-{args[0]} & {mask}"
    if op == "shl":
        return f"(({args[0]} << {args[1]}) & {mask}) if {args[1]} < {node.width} else 0"
    if op == "lshr":
        return f"{args[0]} >> {args[1]}"
    if op == "ashr":
        sign = 1 << (arg_width - 1)
        return (f"((({args[0]} ^ {sign}) - {sign}) >> min({args[1]}, {node.width})) & {mask}")
    if op in ("eq", "ult", "ule"):
        return f"{args[0]} {dict(eq='==', ult='<', ule='<=')[op]} {args[1]}"
    if op in ("slt", "sle"):
        sign = 1 << (arg_width - 1)
        cmp = "<" if op == "slt" else "<="
        return f"({args[0]} ^ {sign}) {cmp} ({args[1]} ^ {sign})"
    if op == "band":
        return f"{args[0]} and {args[1]}"
    if op == "bor":
        return f"{args[0]} or {args[1]}"
    if op == "bnot":
        return f"not {args[0]}"
    if op == "bxor":
        return f"{args[0]} != {args[1]}"
    if op == "ite":
        return f"{args[1]} if {args[0]} else {args[2]}"
    raise ValueError(f"no Python lowering for primitive {op!r}")


def python_source(inputs: Sequence[Node], output: Node, name: str = "dot") -> str:
    """Source of ``def name(*inputs) -> int`` computing ``output``."""

    def ref(node: Node) -> str:
        if node.op == "const":
            return str(node.value)
        if node.op == "bool_const":
            return str(node.value)
        if node.op == "var":
            return node.params[0]
        return f"v{node.id}"

    params = ", ".join(node.params[0] for node in inputs)
    lines = [f"def {name}({params}):"]
    for node in walk([output]):
        if node.op not in ("const", "bool_const", "var"):
            lines.append(f"    v{node.id} = {_expr(node, ref)}")
    lines.append(f"    return {ref(output)}")
    return "\n".join(lines) + "\n"


def _compiled(formula: TracedFormula) -> Callable[..., int]:
    source = python_source(formula.inputs, formula.output)
    namespace: dict[str, object] = {}
    label = formula.descriptor.name + ("" if formula.model == HARDWARE else f" {formula.model}")
    exec(compile(source, f"<tcspec {label}>", "exec"), namespace)
    return namespace["dot"]  # type: ignore[return-value]


@functools.cache
def compiled_dot(desc: Descriptor) -> Callable[..., int]:
    """A Python function of the input words (``input_layout`` order) returning the result."""
    return _compiled(traced(desc))


@functools.cache
def compiled_model(model: str, desc: Descriptor) -> Callable[..., int]:
    """Candidate ``model``'s word on ``desc`` (SEMANTICS.md section 7), like :func:`compiled_dot`;
    ``ValueError`` if the model is unknown or does not apply."""
    formula = traced_model(model, desc)
    return compiled_dot(desc) if formula.model == HARDWARE else _compiled(formula)
