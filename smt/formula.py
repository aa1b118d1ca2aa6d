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
from typing import TYPE_CHECKING, Any

from tcspec.smt.smtlib import comments, define_fun, script
from tcspec.smt.trace import Node, TraceOps
from tcspec.spec.bitvec import BV, Bool
from tcspec.spec.candidates import HARDWARE, build_model, get_candidate
from tcspec.spec.catalog import build_dot, descriptor_of, input_layout, inputs_from, metadata_legal
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.provenance import header_lines, semantics_sha256, tcspec_version

if TYPE_CHECKING:
    from tcspec.smt.z3_backend import Z3Ops

OUTPUT_NAME = "d"
LEGALITY_NAME = "metadata_legal"
FUNCTION_PREFIX = "tcgen05."
"""SMT-LIB library functions are named ``tcgen05.`` plus the catalog name (architecture
datapaths of SEMANTICS.md section 10: ``tcspec.`` plus theirs)."""
ARCH_FUNCTION_PREFIX = "tcspec."
LEGALITY_SUFFIX = ".legal"
SMTLIB_FORMS = ("library", "script")


@dataclass(frozen=True)
class TracedFormula:
    """A datapath's DAG: its declared inputs (layout order) and its output node."""

    descriptor: Descriptor
    inputs: tuple[Node, ...]
    output: Node
    legal: Node
    node_count: int
    model: str = HARDWARE

    @property
    def function_name(self) -> str:
        prefix = ARCH_FUNCTION_PREFIX if self.descriptor.family == "arch" else FUNCTION_PREFIX
        return prefix + self.descriptor.name

    @property
    def metadata_inputs(self) -> tuple[Node, ...]:
        """The metadata word inputs: the parameters of the legality predicate."""
        layout = input_layout(self.descriptor)
        return tuple(node for spec, node in zip(layout, self.inputs) if spec.role == "metadata")

    def smtlib(self, form: str = "script") -> str:
        """SMT-LIB2 text of the datapath, in one of two forms sharing one printer.

        ``script``: a self-contained script declaring the inputs as constants
        and defining ``d`` (and ``metadata_legal`` for sparse datapaths).
        ``library``: ``(define-fun tcgen05.<name> (inputs in layout order) D)``,
        plus ``tcgen05.<name>.legal`` over the metadata words for sparse ones.
        """
        desc = self.descriptor
        header = header_lines(desc)
        if form == "script":
            outputs = [(OUTPUT_NAME, self.output)]
            header.append(f"output: {OUTPUT_NAME}, the result word")
            if desc.sparse:
                header.append(f"{LEGALITY_NAME}: every metadata selector is legal (assume it)")
                outputs.append((LEGALITY_NAME, self.legal))
            return script(self.inputs, outputs, header)
        if form != "library":
            raise ValueError(f"unknown SMT-LIB form {form!r} (known: {', '.join(SMTLIB_FORMS)})")
        header.insert(0, f"{self.function_name}: the D word of {desc.name}")
        parts = comments(header) + [define_fun(self.function_name, self.inputs, self.output)]
        if desc.sparse:
            parts += comments([f"{self.function_name}{LEGALITY_SUFFIX}: every metadata "
                               "selector is legal (SEMANTICS.md section 5); assume it"])
            parts.append(define_fun(self.function_name + LEGALITY_SUFFIX, self.metadata_inputs,
                                    self.legal))
        return "\n".join(parts) + "\n"


def smtlib_library(descriptors: Sequence[Descriptor]) -> str:
    """One SMT-LIB2 file defining the library function of every datapath in ``descriptors``."""
    header = [f"tcspec SMT-LIB function library: {len(descriptors)} datapath(s), "
              "QF_BV, one define-fun each (D = C + sum A[k] * B[k] on raw words)",
              f"tcspec {tcspec_version()}; docs/SEMANTICS.md sha256 {semantics_sha256()}",
              "load it before your own commands; it sets the logic QF_BV"]
    entries = [traced(desc).smtlib("library") for desc in descriptors]
    return "\n".join(comments(header) + ["(set-logic QF_BV)", ""] + entries)


def _symbolic_dot(ops: TraceOps | Z3Ops, desc: Descriptor, model: str = HARDWARE
                  ) -> tuple[list[BV], BV, Bool]:
    """``desc``'s datapath (or candidate ``model``'s word) on one fresh variable per input:
    (inputs, result, legality)."""
    layout = input_layout(desc)
    values = [ops.variable(spec.name, spec.width) for spec in layout]
    grouped = inputs_from(layout, values)
    result = build_dot(ops, desc, grouped) if model == HARDWARE else \
        build_model(ops, model, desc, grouped)
    return values, result, metadata_legal(ops, desc, grouped)


@functools.cache
def traced(desc: Descriptor) -> TracedFormula:
    ops = TraceOps()
    values, result, legal = _symbolic_dot(ops, desc)
    inputs = tuple(v.node for v in values)
    return TracedFormula(desc, inputs, result.node, legal.node, len(ops))


@functools.cache
def traced_model(model: str, desc: Descriptor) -> TracedFormula:
    """Candidate ``model``'s DAG on ``desc`` (SEMANTICS.md section 7), same inputs as
    :func:`traced`; ``hardware`` (or an alias) is :func:`traced` itself."""
    name = get_candidate(model, desc).name
    if name == HARDWARE:
        return traced(desc)
    ops = TraceOps()
    values, result, legal = _symbolic_dot(ops, desc, name)
    return TracedFormula(desc, tuple(v.node for v in values), result.node, legal.node, len(ops),
                         name)


@dataclass(frozen=True)
class Z3Formula:
    """A datapath as Z3 terms: its input variables (layout order) and output term."""

    descriptor: Descriptor
    inputs: tuple[Any, ...]
    output: Any
    legal: Any

    def _pinned(self, term: Any, words: Sequence[int]) -> Any:
        import z3

        pairs = [(var, z3.BitVecVal(w, var.size())) for var, w in zip(self.inputs, words,
                                                                          strict=True)]
        return z3.simplify(z3.substitute(term, *pairs))

    def evaluate(self, words: Sequence[int]) -> int:
        """The output on concrete input words (substitute, then simplify)."""
        from tcspec.smt.z3_backend import concrete_value

        return concrete_value(self._pinned(self.output, words))

    def is_legal(self, words: Sequence[int]) -> bool:
        """The metadata legality predicate on concrete input words."""
        import z3

        return z3.is_true(self._pinned(self.legal, words))


@functools.cache
def z3_formula(desc: Descriptor) -> Z3Formula:
    from tcspec.smt.z3_backend import Z3Ops

    values, result, legal = _symbolic_dot(Z3Ops(), desc)
    return Z3Formula(desc, tuple(v.node for v in values), result.node, legal.node)


@functools.cache
def reparsed_z3(desc: Descriptor) -> Z3Formula:
    """The SMT-LIB2 text of ``desc`` read back by Z3's own parser.

    Evaluating it checks the printer and the ``let`` sharing end to end.
    """
    import z3

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


@dataclass(frozen=True)
class Formula:
    """A datapath as solver terms: Z3 terms (inputs in layout order, output, sparse legality)
    and the SMT-LIB2 text of the same traced specification (script and library forms)."""

    descriptor: Descriptor
    z3: Z3Formula
    traced: TracedFormula

    @property
    def smtlib(self) -> str:
        """A self-contained script: the inputs declared, the result word defined as ``d``."""
        return self.traced.smtlib("script")

    @property
    def smtlib_function(self) -> str:
        """One ``define-fun tcgen05.<name>`` taking the input words in layout order."""
        return smtlib_library([self.descriptor])


def formula(datapath: str | dict[str, object] | Descriptor) -> Formula:
    """The solver formula of ``datapath`` (a catalog name, descriptor fields or a descriptor)."""
    desc = descriptor_of(datapath)
    return Formula(desc, z3_formula(desc), traced(desc))
