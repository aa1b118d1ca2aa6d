"""A user's implementation against a datapath, for all inputs (``tcspec equiv``, issue 32).

The implementation is a function over the ops protocol, ``impl(ops, words) -> BV``, where
``words`` maps each input word name of the datapath's layout (``a0..``, ``b0..``, ``c``,
``scale_a0..``, ``scale_b0..``, ``meta0..``; :func:`tcspec.spec.catalog.input_layout`) to
its value. However it was written (an SMT-LIB ``define-fun``, Verilog through Yosys, Python),
it is traced beside the specification over the same input variables and the equivalence
engine (:mod:`proofs.engine`) decides whether the two D words are equal for every input
that meets the assumptions. ``differs`` comes only with input words on which the spec's
scalar lowering and the implementation's own evaluator (z3's for SMT-LIB, Yosys's ``eval``
for Verilog, the scalar ops for Python) give different words. :func:`check_property` proves
a user's predicate over one run or two related runs the same way (``tcspec.prove``).

Assumptions restrict the inputs and are named in every verdict (none: every word):

- ``finite``: every A, B and C word and every scale byte is finite in its format
  (SEMANTICS.md section 1's field tables, read from :mod:`proofs.rulebook.fields`, not
  from ``spec/``): no NaN, no infinity.
- ``legal-metadata``: every sparse metadata selector is legal (section 5).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tcspec.proofs.cutpoints import recorded
from tcspec.proofs.engine import EngineSettings, prove_equivalent
from tcspec.proofs.equals_reference import (
    LOW,
    REGIMES,
    samples_for,
    shared_cache,
    stage_labels,
)
from tcspec.proofs.rulebook.fields import FORMATS as FIELD_TABLE
from tcspec.proofs.rulebook.fields import decode
from tcspec.proofs.rulebook.names import parse
from tcspec.smt.trace import TraceOps
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.catalog import (
    build_dot,
    descriptor_of,
    input_layout,
    inputs_from,
    metadata_legal,
    output_width,
)
from tcspec.spec.scalar import SCALAR

EQUAL, DIFFERS, UNKNOWN = "equal", "differs", "unknown"

ASSUMPTIONS = {
    "finite": "every A, B, C word and scale byte finite in its format (no NaN, no Inf)",
    "legal-metadata": "every sparse metadata selector legal (SEMANTICS.md section 5)",
}
"""The input constraints ``--assume`` takes, each with the text printed beside a verdict."""

Build = Callable[[Ops, Mapping[str, BV]], BV]


@dataclass
class Implementation:
    """A user's implementation: how to build it over any ops, and how to evaluate it on
    its own terms (``None``: ``build`` on the scalar ops)."""

    name: str
    form: str
    build: Build
    evaluate: Callable[[Mapping[str, int]], int] | None = None


@dataclass
class Verdict:
    """One ``equiv`` answer (issue 32's record)."""

    result: str
    datapath: str
    k: int
    assumptions: list[str]
    seconds: float
    implementation: str = ""
    inputs: dict[str, int] = field(default_factory=dict)
    spec: int | None = None
    impl: int | None = None
    d_bits: int = 32
    stopped: str = ""
    detail: str = ""
    stage: str = ""
    """``differs``: the first stage of the spec's explain where the words part (if known)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "result": self.result, "datapath": self.datapath, "k": self.k,
            "assumptions": [f"{a}: {ASSUMPTIONS[a]}" for a in self.assumptions],
            "seconds": round(self.seconds, 2), "implementation": self.implementation}
        if self.result == DIFFERS:
            digits = -(-self.d_bits // 4)
            out["counterexample"] = {
                "inputs": {name: f"0x{value:X}" for name, value in self.inputs.items()},
                "spec": f"0x{self.spec:0{digits}X}", "impl": f"0x{self.impl:0{digits}X}"}
        if self.result == UNKNOWN:
            out["stopped"] = self.stopped
        out["detail"] = self.detail
        return out


def assumption_terms(ops: Ops, name: str, words: Mapping[str, BV], assume: Sequence[str],
                     legal: Bool) -> list[Bool]:
    """The constraints ``assume`` names over the traced ``words`` (module docstring)."""
    rec = parse(name)
    terms: list[Bool] = []
    for which in assume:
        if which not in ASSUMPTIONS:
            raise ValueError(f"unknown assumption {which!r} (known: {', '.join(ASSUMPTIONS)})")
        if which == "legal-metadata":
            terms.append(legal)
            continue
        for word, value in words.items():
            role = word.rstrip("0123456789")
            fmt_name = {"a": rec.a_format, "b": rec.b_format, "c": rec.c_format,
                        "scale_a": rec.scaling, "scale_b": rec.scaling}.get(role)
            if fmt_name in FIELD_TABLE:
                terms.append(decode(ops, value, FIELD_TABLE[fmt_name]).finite)
    return terms


def _holds(terms: Sequence[Bool]) -> bool:
    return all(bool(t.node) for t in terms)


def check(implementation: Implementation, datapath: str, *, k: int | None = None,
          assume: Sequence[str] = (), timeout: float = 120.0, solver: str = "bitwuzla",
          samples: int = 1024) -> Verdict:
    """Decide whether ``implementation`` gives the datapath's D word for every input that
    meets ``assume`` (module docstring). ``timeout`` bounds each output query; the whole
    run gets 1.5 x that. ``samples`` inputs are simulated first (a fifth of them near the
    bottom of D's range, where window floors act): most differences show there at once."""
    started = time.monotonic()
    desc = descriptor_of(datapath)
    name = desc.name
    k = desc.k if k is None else k
    layout = input_layout(desc, k)
    assume = list(dict.fromkeys(assume))
    ops = TraceOps()
    words = {s.name: ops.variable(s.name, s.width) for s in layout}
    inputs = inputs_from(layout, [words[s.name] for s in layout])
    spec_word, stages = recorded(ops, lambda: build_dot(ops, desc, inputs, any_k=k != desc.k))
    legal = metadata_legal(ops, desc, inputs)
    impl_word = _built(implementation, ops, words)
    d_bits = output_width(desc)
    if not isinstance(impl_word, BV) or impl_word.width != spec_word.width:
        got = "Bool" if isinstance(impl_word, Bool) else \
            f"{getattr(impl_word, 'width', '?')} bits"
        raise ValueError(f"{implementation.name} returns {got}; {name}'s D word is "
                         f"{spec_word.width} bits")
    terms = assumption_terms(ops, name, words, assume, legal)
    evaluate = implementation.evaluate or _scalar_evaluator(implementation.build, layout)

    def spec_on(values: Mapping[str, int]) -> int:
        consts = [SCALAR.const(values.get(s.name, 0), s.width) for s in layout]
        return int(build_dot(SCALAR, desc, inputs_from(layout, consts),
                             any_k=k != desc.k).node)

    def replay(values: dict[str, int]) -> list[tuple[int, int]]:
        return [(spec_on(values), evaluate(values))]

    settings = EngineSettings(solver=solver, local_timeout=min(timeout, 10.0),
                              cone_timeout=min(timeout, 15.0), output_timeout=timeout,
                              row_budget=1.5 * timeout)
    columns = samples_for(name, samples, layout=[(s.name, s.width) for s in layout],
                          regimes=(*REGIMES, LOW, LOW))
    outcome = prove_equivalent([(spec_word, impl_word)], samples=columns, assumptions=terms,
                               settings=settings, replay=replay, cache=shared_cache(),
                               labels=stage_labels(stages))
    verdict = Verdict({"proved": EQUAL, "refuted": DIFFERS}.get(outcome.result, UNKNOWN),
                      name, k, assume, time.monotonic() - started, implementation.name,
                      d_bits=d_bits, stopped=outcome.stopped, detail=outcome.stats.summary())
    if verdict.result == DIFFERS:
        def admissible(values: Mapping[str, int]) -> bool:
            return _admissible_scalar(name, desc, layout, assume, values)

        words_found = {s.name: outcome.words.get(s.name, 0) for s in layout}
        if not admissible(words_found):
            raise RuntimeError("the engine's counterexample breaks the assumptions")
        scalar = _scalar_evaluator(implementation.build, layout)
        verdict.inputs = shrink(words_found, lambda v: [(spec_on(v), scalar(v))], admissible)
        verdict.spec, verdict.impl = replay(verdict.inputs)[0]
        if verdict.spec == verdict.impl:
            verdict.inputs = words_found
            verdict.spec, verdict.impl = replay(verdict.inputs)[0]
        if verdict.spec == verdict.impl:
            raise RuntimeError("the engine refuted a pair the replay does not separate")
    return verdict


def shrink(words: dict[str, int], replay: Callable[[dict[str, int]], list[tuple[int, int]]],
           admissible: Callable[[Mapping[str, int]], bool]) -> dict[str, int]:
    """``words`` with as many words set to 0 as keep the two sides apart (one pass, each
    step run by ``replay``), so a counterexample reads at a glance. The caller replays the
    result on both sides' own evaluators and keeps ``words`` if they do not differ there."""
    current = dict(words)
    for name in list(current):
        if current[name] == 0:
            continue
        trial = {**current, name: 0}
        if admissible(trial):
            left, right = replay(trial)[0]
            if left != right:
                current = trial
    return current


def _built(implementation: Implementation, ops: Ops, words: Mapping[str, BV]) -> Any:
    """The implementation's D over ``ops``; ValueError naming what it raised (a user's
    function may raise anything: a wrong name, a Python ``if`` on a traced value)."""
    try:
        return implementation.build(ops, dict(words))
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, ArithmeticError,
            AssertionError, NotImplementedError, LookupError) as exc:
        detail = f"{type(exc).__name__}: {exc}".strip()
        raise ValueError(f"{implementation.name} raised {detail}") from None


def _scalar_evaluator(build: Build, layout: Sequence[Any]) -> Callable[[Mapping[str, int]], int]:
    def evaluate(values: Mapping[str, int]) -> int:
        words = {s.name: SCALAR.const(values.get(s.name, 0), s.width) for s in layout}
        return int(build(SCALAR, words).node)

    return evaluate


# ------------------------------------------------------------------ a user's property

PROVED, REFUTED = "proved", "refuted"

Relate = Callable[[Ops, Mapping[str, BV]], Mapping[str, BV]]
Predicate = Callable[..., Bool]


@dataclass
class PropertyVerdict:
    """One ``tcspec.prove`` answer: ``proved`` for every input meeting the assumptions,
    ``refuted`` with input words (and each run's D) on which the predicate is false when
    run on the scalar lowering, or ``unknown``."""

    result: str
    datapath: str
    k: int
    assumptions: list[str]
    seconds: float
    inputs: dict[str, int] = field(default_factory=dict)
    d: list[int] = field(default_factory=list)
    stopped: str = ""
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "result": self.result, "datapath": self.datapath, "k": self.k,
            "assumptions": [f"{a}: {ASSUMPTIONS[a]}" for a in self.assumptions],
            "seconds": round(self.seconds, 2)}
        if self.result == REFUTED:
            out["counterexample"] = {
                "inputs": {name: f"0x{value:X}" for name, value in self.inputs.items()},
                "d": [f"0x{word:X}" for word in self.d]}
        if self.result == UNKNOWN:
            out["stopped"] = self.stopped
        out["detail"] = self.detail
        return out


def check_property(datapath: str, predicate: Predicate, *, relate: Relate | None = None,
                   k: int | None = None, assume: Sequence[str] = (), timeout: float = 120.0,
                   solver: str = "bitwuzla", samples: int = 1024) -> PropertyVerdict:
    """Decide whether ``predicate`` holds for every input meeting ``assume``. One run:
    ``predicate(ops, words, d)``; two runs, the second on ``relate(ops, words)`` (a word
    name -> value map, e.g. every A sign flipped): ``predicate(ops, words, d, words2, d2)``.
    The predicate returns an ops Bool; the engine proves it equal to true."""
    started = time.monotonic()
    desc = descriptor_of(datapath)
    name = desc.name
    k = desc.k if k is None else k
    layout = input_layout(desc, k)
    assume = list(dict.fromkeys(assume))

    def runs(ops: Ops, words: Mapping[str, BV]) -> tuple[list[Mapping[str, BV]], list[BV]]:
        inputs = [words]
        if relate is not None:
            try:
                second = dict(relate(ops, dict(words)))
            except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError) as exc:
                raise ValueError(f"relate raised {type(exc).__name__}: {exc}") from None
            missing = [s.name for s in layout if s.name not in second]
            if missing:
                raise ValueError(f"relate's words lack {', '.join(missing[:4])}")
            inputs.append(second)
        ds = [build_dot(ops, desc, inputs_from(layout, [w[s.name] for s in layout]),
                        any_k=k != desc.k) for w in inputs]
        return inputs, ds

    def holds(ops: Ops, words: Mapping[str, BV]) -> tuple[Bool, list[BV]]:
        inputs, ds = runs(ops, words)
        args = [inputs[0], ds[0]] + ([inputs[1], ds[1]] if relate is not None else [])
        try:
            value = predicate(ops, *args)
        except (ValueError, TypeError, KeyError, AttributeError, ArithmeticError) as exc:
            raise ValueError(f"the predicate raised {type(exc).__name__}: {exc}") from None
        if not isinstance(value, Bool):
            raise ValueError(f"the predicate returns {type(value).__name__}, not an ops Bool "
                             "(compare with ops.eq, combine with ops.and_)")
        return value, ds

    ops = TraceOps()
    words = {s.name: ops.variable(s.name, s.width) for s in layout}
    statement, _ = holds(ops, words)
    legal = metadata_legal(ops, desc, inputs_from(layout, [words[s.name] for s in layout]))
    terms = assumption_terms(ops, name, words, assume, legal)

    def on_scalar(values: Mapping[str, int]) -> tuple[bool, list[int]]:
        consts = {s.name: SCALAR.const(values.get(s.name, 0), s.width) for s in layout}
        value, ds = holds(SCALAR, consts)
        return bool(value.node), [int(d.node) for d in ds]

    def replay(values: dict[str, int]) -> list[tuple[int, int]]:
        return [(int(on_scalar(values)[0]), 1)]

    settings = EngineSettings(solver=solver, local_timeout=min(timeout, 10.0),
                              cone_timeout=min(timeout, 15.0), output_timeout=timeout,
                              row_budget=1.5 * timeout)
    columns = samples_for(name, samples, layout=[(s.name, s.width) for s in layout],
                          regimes=(*REGIMES, LOW, LOW))
    outcome = prove_equivalent([(statement, ops.true())], samples=columns, assumptions=terms,
                               settings=settings, replay=replay, cache=shared_cache())
    verdict = PropertyVerdict(outcome.result, name, k, assume, time.monotonic() - started,
                              stopped=outcome.stopped, detail=outcome.stats.summary())
    if verdict.result == REFUTED:
        found = {s.name: outcome.words.get(s.name, 0) for s in layout}
        verdict.inputs = shrink(found, lambda v: [(int(on_scalar(v)[0]), 1)],
                                lambda v: _admissible_scalar(name, desc, layout, assume, v))
        ok, verdict.d = on_scalar(verdict.inputs)
        if ok:
            raise RuntimeError("the engine refuted a predicate the scalar run keeps")
    return verdict


def _admissible_scalar(name: str, desc: Any, layout: Sequence[Any], assume: Sequence[str],
                       values: Mapping[str, int]) -> bool:
    consts = {s.name: SCALAR.const(values[s.name], s.width) for s in layout}
    legal = metadata_legal(SCALAR, desc, inputs_from(layout, [consts[s.name] for s in layout]))
    return _holds(assumption_terms(SCALAR, name, consts, assume, legal))
