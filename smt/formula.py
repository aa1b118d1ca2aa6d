"""Datapath formulas: the specification built once per descriptor on a solver backend.

:func:`traced` records the DAG (for SMT-LIB2, pysmt and other solvers),
:func:`z3_formula` builds Z3 terms directly. Both declare one input per
entry of :func:`spec.catalog.input_layout` and are cached, so a formula is
built once per (datapath, parameters) and reused by every query.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import z3

from smt.smtlib import script
from smt.trace import Node, TraceOps
from smt.z3_backend import Z3Ops, concrete_value
from spec.bitvec import BV, Bool
from spec.catalog import build_dot, input_layout, inputs_from, metadata_legal
from spec.descriptor import Descriptor

OUTPUT_NAME = "d"
LEGALITY_NAME = "metadata_legal"


@dataclass(frozen=True)
class TracedFormula:
    """A datapath's DAG: its declared inputs (layout order) and its output node."""

    descriptor: Descriptor
    inputs: tuple[Node, ...]
    output: Node
    legal: Node
    node_count: int

    def smtlib(self) -> str:
        """A self-contained SMT-LIB2 script declaring the inputs and defining ``d``."""
        desc = self.descriptor
        header = [f"tcspec datapath {desc.name}: {desc.fields()}",
                  f"inputs: A and B words a0..a{desc.k - 1}, b0..b{desc.k - 1}; C word c"
                  + ("; scale bytes scale_a*, scale_b*" if desc.scaling else "")
                  + ("; metadata words meta*" if desc.sparse else ""),
                  f"output: {OUTPUT_NAME}, the result word"]
        outputs = [(OUTPUT_NAME, self.output)]
        if desc.sparse:
            header.append(f"{LEGALITY_NAME}: every metadata selector is legal (assume it)")
            outputs.append((LEGALITY_NAME, self.legal))
        return script(self.inputs, outputs, header)


def _symbolic_dot(ops: TraceOps | Z3Ops, desc: Descriptor) -> tuple[list[BV], BV, Bool]:
    """``desc``'s datapath on one fresh variable per input: (inputs, result, legality)."""
    layout = input_layout(desc)
    values = [ops.variable(spec.name, spec.width) for spec in layout]
    grouped = inputs_from(layout, values)
    return values, build_dot(ops, desc, grouped), metadata_legal(ops, desc, grouped)


@functools.cache
def traced(desc: Descriptor) -> TracedFormula:
    ops = TraceOps()
    values, result, legal = _symbolic_dot(ops, desc)
    inputs = tuple(v.node for v in values)
    return TracedFormula(desc, inputs, result.node, legal.node, len(ops))


@dataclass(frozen=True)
class Z3Formula:
    """A datapath as Z3 terms: its input variables (layout order) and output term."""

    descriptor: Descriptor
    inputs: tuple[Any, ...]
    output: Any
    legal: Any

    def _pinned(self, term: Any, words: Sequence[int]) -> Any:
        pairs = [(var, z3.BitVecVal(w, var.size())) for var, w in zip(self.inputs, words,
                                                                          strict=True)]
        return z3.simplify(z3.substitute(term, *pairs))

    def evaluate(self, words: Sequence[int]) -> int:
        """The output on concrete input words (substitute, then simplify)."""
        return concrete_value(self._pinned(self.output, words))

    def is_legal(self, words: Sequence[int]) -> bool:
        """The metadata legality predicate on concrete input words."""
        return z3.is_true(self._pinned(self.legal, words))


@functools.cache
def z3_formula(desc: Descriptor) -> Z3Formula:
    values, result, legal = _symbolic_dot(Z3Ops(), desc)
    return Z3Formula(desc, tuple(v.node for v in values), result.node, legal.node)


@functools.cache
def reparsed_z3(desc: Descriptor) -> Z3Formula:
    """The SMT-LIB2 text of ``desc`` read back by Z3's own parser.

    Evaluating it checks the printer and the ``let`` sharing end to end.
    """
    formula = traced(desc)
    width = formula.output.width
    text = formula.smtlib() + f"(declare-fun tcspec_out () (_ BitVec {width}))\n" \
                              f"(assert (= tcspec_out {OUTPUT_NAME}))\n"
    legal = z3.BoolVal(True)
    if desc.sparse:
        text += f"(declare-fun tcspec_legal () Bool)\n(assert (= tcspec_legal {LEGALITY_NAME}))\n"
    equations = z3.parse_smt2_string(text)
    if desc.sparse:
        legal = equations[1].arg(1)
    inputs = tuple(z3.BitVec(node.params[0], node.width) for node in formula.inputs)
    return Z3Formula(desc, inputs, equations[0].arg(1), legal)
