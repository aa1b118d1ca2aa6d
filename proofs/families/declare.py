"""One property family = two runs and a relation, decided by the engine (issue 31).

``check(family, desc, k, settings)`` traces the specification (``build_dot``) twice over
one set of input variables: the *first* run on the words themselves, the *second* on the
family's transformation of them. The family's relation turns the two D words into one
(left, right) pair that must be equal; the engine (:func:`proofs.engine.prove_equivalent`)
decides it for every input meeting the family's hypothesis. A hypothesis is first shown
satisfiable (a witness: input words on which it holds, replayed). ``refuted`` comes with
input words on which the executable lowering gives a pair that differs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tcspec.proofs.core import PROVED, REFUTED, UNKNOWN, Property, Row, Settings
from tcspec.proofs.cutpoints import recorded
from tcspec.proofs.engine import EquivalenceResult, prove_equivalent, structure_key
from tcspec.proofs.engine.relations import WordRelation
from tcspec.proofs.equals_reference import (
    engine_settings,
    samples_for,
    shared_cache,
    stage_labels,
)
from tcspec.proofs.rulebook.names import Datapath, parse
from tcspec.smt.trace import TraceOps
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.catalog import CATALOG, build_dot, input_layout, inputs_from
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.scalar import SCALAR

ENGINE = "equivalence"

Words = dict[str, BV]
Transform = Callable[[Ops, Datapath, Words], Words]
Transforms = Callable[[Ops, Datapath, Words], list[Words]]
Relation = Callable[[Ops, Datapath, BV, BV], tuple[BV, BV]]
Hypothesis = Callable[[Ops, Datapath, Words], Bool]
SecondRun = Callable[[Ops, Datapath, Words], BV]


@dataclass(frozen=True)
class Family:
    """A property over two runs of one datapath.

    ``transform`` gives the second run's input words from the first's (``transforms``,
    when given, several second runs, each related to the first); ``relation`` maps
    (first D, second D) to the pair the property says is equal; ``hypothesis`` (optional)
    restricts the inputs; ``applies`` says which datapaths (by their rule-book record) the
    property is stated for."""

    name: str
    summary: str
    applies: Callable[[Datapath], bool]
    transform: Transform
    relation: Relation
    hypothesis: Hypothesis | None = None
    statement: str = ""
    """The relation in words, for the row's detail."""
    transforms: Transforms | None = None
    hints: Callable[[Datapath], tuple[WordRelation, ...]] | None = None
    """Relations between intermediate words of the two runs the engine may propose
    (:mod:`proofs.engine.relations`); each merge it makes with one is proved."""
    second_run: SecondRun | None = None
    """The second run's D word when it is another computation than the datapath's own on
    transformed words (sparse-masking: the dense sibling on the masked or compacted
    lanes); ``transform`` is then unused."""
    merge_first: float = 0.0
    """The engine's :attr:`~proofs.engine.EngineSettings.merge_first` for this family."""

    def second_inputs(self, ops: Ops, rec: Datapath, words: Words) -> list[Words]:
        """The input words of every second run."""
        if self.transforms is not None:
            return self.transforms(ops, rec, words)
        return [self.transform(ops, rec, words)]

    def second_words(self, ops: Ops, desc: Descriptor, words: Words) -> list[BV]:
        """The D word of every second run."""
        rec = parse(desc.name)
        if self.second_run is not None:
            return [self.second_run(ops, rec, words)]
        return [_run(ops, desc, second) for second in self.second_inputs(ops, rec, words)]


@dataclass
class Runs:
    ops: TraceOps
    words: Words
    pairs: list[tuple[BV, BV]]
    hypothesis: Bool | None
    labels: dict[int, str]
    rec: Datapath


def _run(ops: Ops, desc: Descriptor, words: Words) -> BV:
    layout = input_layout(desc, desc.k)
    return build_dot(ops, desc, inputs_from(layout, [words[s.name] for s in layout]))


def trace_runs(family: Family, desc: Descriptor) -> Runs:
    """Both runs of ``desc`` traced over one set of input variables, and the pair."""
    ops = TraceOps()
    rec = parse(desc.name)
    words = {s.name: ops.variable(s.name, s.width) for s in input_layout(desc, desc.k)}
    first, stages = recorded(ops, lambda: _run(ops, desc, words))
    pairs = [family.relation(ops, rec, first, second)
             for second in family.second_words(ops, desc, words)]
    hypothesis = family.hypothesis(ops, rec, words) if family.hypothesis else None
    return Runs(ops, words, pairs, hypothesis, stage_labels(stages), rec)


def replayer(family: Family, desc: Descriptor) -> Callable[[dict[str, int]], list[tuple[int, int]]]:
    """Input words -> the pair's (left, right) words on the scalar lowering."""
    layout = input_layout(desc, desc.k)
    rec = parse(desc.name)

    def replay(words: dict[str, int]) -> list[tuple[int, int]]:
        values = {s.name: SCALAR.const(words.get(s.name, 0), s.width) for s in layout}
        first = _run(SCALAR, desc, values)
        out = []
        for second in family.second_words(SCALAR, desc, values):
            left, right = family.relation(SCALAR, rec, first, second)
            out.append((int(left.node), int(right.node)))
        return out

    return replay


def row_key(family: Family, runs: Runs, settings: Settings) -> str:
    roots = [n.node for pair in runs.pairs for n in pair] + \
        ([runs.hypothesis.node] if runs.hypothesis is not None else [])
    hints = family.hints(runs.rec) if family.hints else ()
    return structure_key(roots, family.name, settings.solver, settings.timeout,
                         *(h.name for h in hints))


def check(family: Family, desc: Descriptor, k: int, settings: Settings) -> Row:
    """One row of ``family`` on ``desc`` at its instruction K (module docstring)."""
    started = time.monotonic()
    if k != desc.k:
        raise ValueError(f"{family.name} is stated at the instruction's K={desc.k}, not {k}")
    runs = trace_runs(family, desc)
    key = row_key(family, runs, settings)

    def row(result: str, detail: str, words: dict[str, int] | None = None,
            lemmas: list[dict[str, Any]] | None = None) -> Row:
        return Row(family.name, desc.name, k, result, settings.solver,
                   time.monotonic() - started, ENGINE, desc.k, detail, lemmas or [], None,
                   words or {}, key)

    hints = family.hints(parse(desc.name)) if family.hints else ()
    outcome = prove_equivalent(runs.pairs, samples=samples_for(desc.name),
                               assumptions=[runs.hypothesis] if runs.hypothesis is not None else [],
                               settings=replace(engine_settings(settings),
                                                word_relations=hints,
                                                merge_first=family.merge_first),
                               replay=replayer(family, desc), cache=shared_cache(),
                               labels=runs.labels)
    lemma = {"name": "runs-related", "result": outcome.result, "solver": "engine",
             "seconds": round(outcome.seconds, 2), "second": None,
             "reason": outcome.stopped, "engine": outcome.stats.to_json()}
    return row(outcome.result, _detail(family, outcome), _words(outcome), [lemma])


def _detail(family: Family, outcome: EquivalenceResult) -> str:
    head = {PROVED: f"{family.statement}: proved for every input",
            REFUTED: f"{family.statement}: fails (replayed)",
            UNKNOWN: f"{family.statement}: not decided: {outcome.stopped}"}[outcome.result]
    return f"{head}; {outcome.stats.summary()}"


def _words(outcome: EquivalenceResult) -> dict[str, int]:
    if outcome.result != REFUTED:
        return {}
    words = dict(outcome.words)
    for i, (expected, second) in enumerate(outcome.outputs):
        if expected != second:
            words["d_expected"], words["d_second_run"] = expected, second
            words["second_run"] = i
            break
    return words


def applicable(family: Family) -> tuple[str, ...]:
    """The datapaths ``family`` is stated for, in catalogue order."""
    return tuple(name for name in CATALOG if family.applies(parse(name)))


def as_property(family: Family, covers: tuple[str, ...]) -> Property:
    """The family's entry in the proof matrix: every applicable datapath, its K."""
    names = set(applicable(family))
    return Property(family.name, family.summary, covers, applicable(family),
                    lambda desc: desc.name in names,
                    lambda desc, k, settings: check(family, desc, k, settings),
                    key=lambda desc, k, settings: row_key(family, trace_runs(family, desc),
                                                          settings),
                    instruction_k=True)
