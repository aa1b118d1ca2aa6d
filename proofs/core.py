"""The proof layer's vocabulary: queries, rows, properties (DESIGN.md, "Solvers").

A :class:`Query` is written once over ``ops``: given one bit-vector per
declared variable it returns a boolean and the words worth showing. On the
tracing backend it becomes a solver query; on the scalar backend, with a
solver's model as the variables, it is the replay of that model on the
executable lowering. So every counterexample and witness printed has been
re-run through the specification, not just read off a solver.

- ``forall`` queries return the *violation* of the property: unsat means
  ``proved``; a model is a counterexample (``refuted``) once replayed.
- ``exists`` queries return the condition a witness must meet: a replayed
  model is a ``witness``; unsat means no witness exists (``refuted``).

A solver that does not decide is ``unknown`` with its time, never a verdict.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tcspec.proofs.engine.cache import structure_key
from tcspec.smt.solve import (
    ARITHMETIC_SOLVERS,
    DEFAULT_SOLVER,
    DEFAULT_TIMEOUT,
    SolveResult,
    check_sat,
    run_script,
)
from tcspec.smt.trace import TraceOps
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.catalog import (
    CATALOG,
    DotInputs,
    build_dot,
    check_logical_k,
    input_layout,
    inputs_from,
    metadata_legal,
)
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.scalar import SCALAR

PROVED, REFUTED, WITNESS, UNKNOWN = "proved", "refuted", "witness", "unknown"
MONOLITHIC, LEMMAS, CHAIN, NORMAL_FORM = "monolithic", "lemmas", "chain", "normal-form"
"""``monolithic``: one query per instance over the whole DAG; ``chain``: queries over
``build_dot``'s own DAG whose conjunction entails the property, each composition step a
solver query or a substitution (cut-point) justified by an earlier query; ``lemmas``: a
composition in prose, which is never ``proved``; ``normal-form``: both sides of an equality
traced in one DAG rewritten to one normal form, each rewrite law a proved query
(DESIGN.md, "The proof method")."""

PROSE = ("not proved: the lemmas hold but their composition into the property is prose, "
         "not a solver query (issue 16)")


class InternalError(Exception):
    """A check that could not be carried out as written: a bug, never a row's verdict."""


HYPOTHESIS = "hypothesis-satisfiable"
"""The name (prefix) of a row's witness that its hypothesis can hold (issue 30): an
``exists`` query whose replayed model is shown in the row's lemmas. A row whose hypothesis
has no witness (the query is unsat) is never ``proved``: it would hold vacuously."""

UNCOVERED = "not proved: the chain does not cover the DAG it cuts"
"""How a row whose chain's counts (groups, lanes, steps, tree levels) differ from the DAG's
begins its detail (:func:`uncovered_row`, :func:`require_cover`)."""

AUTO = "auto"
SECOND_OPINIONS = ("cvc5", "z3")
"""``auto`` second opinions try these in turn, the one that last succeeded in a row first:
z3 rarely decides the shift-heavy stage lemmas within a minute, cvc5 rarely the multipliers."""

Variables = dict[str, BV]
QueryBody = Callable[[Ops, Variables], tuple[Bool, dict[str, BV]]]


@dataclass(frozen=True)
class Settings:
    """How rows are checked: solvers, per-query time limits, parallel queries."""

    solver: str = DEFAULT_SOLVER
    timeout: float = DEFAULT_TIMEOUT
    second_solver: str | None = AUTO
    second_timeout: float = 30.0
    jobs: int = 1
    second_later: bool = False
    """Leave the second opinions to :func:`second_opinions` (the runner's second pass)."""


@dataclass(frozen=True)
class Query:
    """A property instance over named variables, written once over ``ops``.

    ``body(ops, variables)`` returns ``(condition, shown)``: for ``forall``
    the condition is the property's violation, for ``exists`` the witness
    condition; ``shown`` names the words a report prints (inputs, results).
    """

    name: str
    kind: str
    variables: tuple[tuple[str, int], ...]
    body: QueryBody
    cut_products: bool = False
    """Decide a ``forall`` query with its multipliers cut (:mod:`proofs.cutpoints`)."""
    lift: QueryBody | None = None
    """For a lemma of a chain: the property's violation, on which a replayed model of the
    lemma is tried; the query is ``refuted`` only when that replays too."""
    cut_at: str = ""
    """For a query whose body cuts ``build_dot``'s DAG at stage nodes (and on the scalar
    lowering returns the property's violation): what it cuts, for the report."""
    script: Callable[[], str] | None = None
    """For a composition step in integer and real arithmetic (no bit-vectors, no datapath):
    its SMT-LIB script, decided by :data:`smt.solve.ARITHMETIC_SOLVERS` only; it has no model
    to replay, so a satisfiable answer is ``unknown``."""

    def trace(self) -> tuple[TraceOps, list[BV], Bool]:
        ops = TraceOps()
        values = {name: ops.variable(name, width) for name, width in self.variables}
        condition, _ = self.body(ops, values)
        return ops, list(values.values()), condition

    def replay(self, model: dict[str, int], body: QueryBody | None = None
               ) -> tuple[bool, dict[str, int]]:
        """The condition and shown words on the scalar lowering, at ``model``'s values
        (of ``body``, default the query's own)."""
        values = {name: SCALAR.const(model.get(name, 0), width)
                  for name, width in self.variables}
        condition, shown = (body or self.body)(SCALAR, values)
        return bool(condition.node), {k: v.node for k, v in shown.items()}


@dataclass
class Outcome:
    """One query decided (or not) by one solver, with the replayed words."""

    query: str
    result: str
    solver: str
    seconds: float
    reason: str = ""
    words: dict[str, int] = field(default_factory=dict)
    second: dict[str, Any] | None = None


def hypothesis_query(variables: tuple[tuple[str, int], ...], body: QueryBody,
                     what: str = "") -> Query:
    """The witness of a row's hypothesis (:data:`HYPOTHESIS`): ``body`` returns the
    hypothesis and the words worth showing; a replayed model is the witness."""
    return Query(HYPOTHESIS + (f" ({what})" if what else ""), "exists", variables, body)


def is_hypothesis(name: str) -> bool:
    return name.startswith(HYPOTHESIS)


def cover_mismatches(counts: Sequence[tuple[str, int, int]]) -> list[str]:
    """``(what, the chain covers, the DAG has)`` for each count of a chain: one line per
    mismatch (issue 30: a chain that covers fewer groups, lanes or steps than the DAG it cuts
    proves nothing of the rest)."""
    return [f"{what}: the chain covers {covered}, the DAG has {found}"
            for what, covered, found in counts if covered != found]


def uncovered_row(prop: str, desc: Descriptor, k: int, mismatches: Sequence[str],
                  method: str, detail: str = "") -> Row:
    """The row of a chain that does not fit the DAG it cuts: ``unknown``, naming each
    mismatch (no query is asked: the chain's cuts would stand for nodes it never proved)."""
    return Row(prop, desc.name, k, UNKNOWN, "", 0.0, method, desc.k,
               "; ".join([f"{UNCOVERED} ({'; '.join(mismatches)})", *filter(None, [detail])]))


def require_cover(row: Row, mismatches: Sequence[str]) -> Row:
    """A row decided by a chain whose counts differ from the DAG's: never ``proved`` (a
    refutation with replayed words stands)."""
    if mismatches and row.result in (PROVED, WITNESS):
        row.result = UNKNOWN
        row.detail = "; ".join([f"{UNCOVERED} ({'; '.join(mismatches)})",
                                *filter(None, [row.detail])])
    return row


def arithmetic_query(name: str, script: Callable[[], str]) -> Query:
    """A ``forall`` step stated in linear integer and real arithmetic (its violation)."""

    def no_body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        raise InternalError(f"{name} is an arithmetic query: it has no bit-vector body")

    return Query(name, "forall", (), no_body, script=script)


def _decide_script(query: Query, solver: str, timeout: float) -> Outcome:
    assert query.script is not None
    solver = solver if solver in ARITHMETIC_SOLVERS else ARITHMETIC_SOLVERS[0]
    answer = run_script(query.script(), solver=solver, timeout=timeout)
    if answer.status == "unsat":
        return Outcome(query.name, PROVED, solver, answer.seconds)
    reason = ("satisfiable: the proved conclusions it reads do not entail its conclusion "
              "(no input words to replay)" if answer.status == "sat" else answer.reason)
    return Outcome(query.name, UNKNOWN, solver, answer.seconds, reason)


_UNSAT: dict[str, str] = {}
"""Formulas a solver answered ``unsat`` in this process, by structure (variables renamed by
first use, :func:`engine.cache.structure_key`), with the query that asked: a formula equal to
one of them up to variable names is unsat too (the lanes of a group, the groups of a path)."""


def decide(query: Query, solver: str, timeout: float) -> Outcome:
    """Solve ``query`` once and replay any model on the scalar lowering."""
    if query.script is not None:
        return _decide_script(query, solver, timeout)
    _, values, condition = query.trace()
    key = structure_key([condition.node], solver, query.kind, query.cut_products)
    if key in _UNSAT:
        return Outcome(query.name, PROVED if query.kind == "forall" else REFUTED, solver, 0.0,
                       f"the formula of {_UNSAT[key]!r} up to variable names (unsat there)")
    if query.cut_products and query.kind == "forall":
        from tcspec.proofs.cutpoints import abstract_products

        abstraction = abstract_products(condition.node)
        answer: SolveResult = check_sat(abstraction.assertions, solver=solver, timeout=timeout)
        answer = dataclasses.replace(answer, model={
            k: v for k, v in answer.model.items() if k not in abstraction.products})
    else:
        answer = check_sat([condition.node], [v.node for v in values],
                           solver=solver, timeout=timeout)
    if answer.status == "unsat":
        _UNSAT.setdefault(key, query.name)
        result = PROVED if query.kind == "forall" else REFUTED
        return Outcome(query.name, result, solver, answer.seconds)
    if answer.status != "sat":
        return Outcome(query.name, UNKNOWN, solver, answer.seconds, answer.reason)
    holds, words = query.replay(answer.model)
    if not holds:
        why = (f"the model of the query cut at {query.cut_at} does not replay on the "
               "scalar lowering" if query.cut_at else
               "the model of the query with its products cut is not a counterexample of the "
               "real products" if query.cut_products else
               "the solver's model did not replay on the scalar lowering")
        return Outcome(query.name, UNKNOWN, solver, answer.seconds, why, words)
    if query.lift is not None and query.kind == "forall":
        lifted, property_words = query.replay(answer.model, query.lift)
        if not lifted:
            inputs = {n: answer.model.get(n, 0) for n, _ in query.variables}
            return Outcome(query.name, UNKNOWN, solver, answer.seconds,
                           "the lemma is refuted by replayed words, which do not violate the "
                           "property", {**inputs, **words})
        words = property_words | {n: answer.model.get(n, 0) for n, _ in query.variables}
    result = REFUTED if query.kind == "forall" else WITNESS
    return Outcome(query.name, result, solver, answer.seconds, words=words)


def cross_check(outcome: Outcome, query: Query, settings: Settings,
                order: list[str] | None = None) -> Outcome:
    """Re-run a proved query with the second solver, when one is set.

    With ``auto`` the solvers of :data:`SECOND_OPINIONS` other than the first
    are tried in ``order`` until one proves the query; ``order`` is updated so
    the next query of the row starts with the solver that succeeded.
    """
    if outcome.result != PROVED or not settings.second_solver:
        return outcome
    if settings.second_solver == AUTO:
        order = order if order is not None else list(SECOND_OPINIONS)
        candidates = [s for s in order if s != outcome.solver]
        if query.script is not None:
            candidates = [s for s in ARITHMETIC_SOLVERS if s != outcome.solver]
    else:
        candidates = [settings.second_solver] if settings.second_solver != outcome.solver else []
    spent = 0.0
    again = None
    for solver in candidates:
        again = decide(query, solver, settings.second_timeout)
        spent += again.seconds
        if again.result == PROVED:
            if order is not None:
                order.remove(solver)
                order.insert(0, solver)
            break
    if again is not None:
        outcome.second = {"solver": again.solver, "result": again.result,
                          "seconds": round(spent, 2), "reason": again.reason}
    return outcome


@dataclass
class Row:
    """One (property, datapath, K) of the proof matrix and what the solvers said."""

    property: str
    datapath: str
    k: int
    result: str
    solver: str
    seconds: float
    method: str
    hardware_k: int
    detail: str = ""
    lemmas: list[dict[str, Any]] = field(default_factory=list)
    second: dict[str, Any] | None = None
    words: dict[str, int] = field(default_factory=dict)
    key: str = ""
    """The structural hash of the row's traced DAGs, solver and limits ('' when the property
    has none); a later run with the same key reuses the verdict (``Property.key``)."""

    @property
    def model_k(self) -> bool:
        """A K other than the instruction's is a model of the datapath."""
        return self.k != self.hardware_k

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["seconds"] = round(self.seconds, 2)
        data["model_k"] = self.model_k
        return data


def second_summary(outcomes: Sequence[Outcome]) -> dict[str, Any] | None:
    """A row's second opinion: ``proved`` when the second solver proved every query the
    first did, else the first other verdict (``unknown`` when some query had none)."""
    seconds_list = [o.second for o in outcomes if o.second]
    if not seconds_list:
        return None
    agreed = all(s["result"] == PROVED for s in seconds_list)
    return {"solver": "+".join(sorted({s["solver"] for s in seconds_list})),
            "result": PROVED if agreed and len(seconds_list) == sum(
                o.result == PROVED for o in outcomes) else
            (UNKNOWN if agreed else next(s["result"] for s in seconds_list
                                         if s["result"] != PROVED)),
            "seconds": round(sum(s["seconds"] for s in seconds_list), 2)}


def _shown_words(words: dict[str, int], limit: int = 8) -> str:
    """The first ``limit`` words (nonzero ones first), as the detail of a row shows them."""
    items = sorted(words.items(), key=lambda item: item[1] == 0)
    shown = ", ".join(f"{name}=0x{value:X}" for name, value in items[:limit])
    return shown + (", ..." if len(words) > limit else "")


def row_from_outcomes(prop: str, desc: Descriptor, k: int, outcomes: Sequence[Outcome],
                      method: str, detail: str = "") -> Row:
    """Combine query outcomes into a row: every query must reach its verdict.

    ``proved`` needs every ``forall`` query proved; ``witness`` rows need
    every ``exists`` query witnessed; a refuted lemma of a lemma-based row
    only makes the row ``unknown`` (the lemmas were too strong), while a
    refuted monolithic query refutes the row. A hypothesis witness
    (:data:`HYPOTHESIS`) does not make a row a ``witness`` row; when it is unsat the row
    is ``unknown`` and says its hypothesis cannot hold.
    """
    seconds = sum(o.seconds for o in outcomes)
    solver = outcomes[0].solver if outcomes else ""
    results = [o.result for o in outcomes]
    stated = [o.result for o in outcomes if not is_hypothesis(o.query)]
    hypotheses = [o for o in outcomes if is_hypothesis(o.query)]
    words: dict[str, int] = {}
    for o in outcomes:
        if not is_hypothesis(o.query):
            words.update(o.words)
    vacuous = [o for o in hypotheses if o.result == REFUTED]
    if vacuous:
        result = UNKNOWN
        detail = "; ".join(filter(None, [
            f"not proved: the hypothesis is unsatisfiable ({vacuous[0].query}: no input "
            "meets it), so the property would hold vacuously", detail]))
    elif all(r in (PROVED, WITNESS) for r in results) and method == LEMMAS:
        result = UNKNOWN
        detail = "; ".join(filter(None, [PROSE, detail]))
    elif all(r in (PROVED, WITNESS) for r in results):
        exists_only = method != CHAIN or PROVED not in stated
        result = WITNESS if WITNESS in stated and exists_only else PROVED
        if result == PROVED:
            words = {}
        detail = "; ".join(filter(None, [detail, *(
            f"{o.query}: witness replayed ({_shown_words(o.words)})" for o in hypotheses)]))
    elif REFUTED in results and method in (MONOLITHIC, CHAIN) and any(
            o.result == REFUTED and o.words for o in outcomes):
        result = REFUTED
    else:
        result = UNKNOWN
        reasons = [f"{o.query}: {o.result}" + (f" ({o.reason})" if o.reason else "")
                   for o in outcomes if o.result not in (PROVED, WITNESS)]
        detail = "; ".join(filter(None, [detail, *reasons]))
    second = second_summary(outcomes)
    lemmas = []
    if method in (LEMMAS, CHAIN, NORMAL_FORM) or len(outcomes) > 1:
        lemmas = [{"name": o.query, "result": o.result, "solver": o.solver,
                   "seconds": round(o.seconds, 2), "second": o.second, "reason": o.reason,
                   **({"words": dict(o.words)} if o.result == WITNESS and o.words else {})}
                  for o in outcomes]
    return Row(prop, desc.name, k, result, solver, seconds, method, desc.k, detail, lemmas,
               second, words)


def check_queries(prop: str, desc: Descriptor, k: int, queries: Sequence[Query],
                  settings: Settings, method: str = MONOLITHIC, detail: str = "") -> Row:
    """Decide every query (stopping at the first that fails), cross-check, make a row."""
    outcomes = []
    order = list(SECOND_OPINIONS)
    for query in queries:
        outcome = decide(query, settings.solver, settings.timeout)
        if method != LEMMAS and not settings.second_later:
            outcome = cross_check(outcome, query, settings, order)
        outcomes.append(outcome)
        if outcome.result not in (PROVED, WITNESS):
            break
    row = row_from_outcomes(prop, desc, k, outcomes, method, detail)
    if method != LEMMAS and settings.second_later and settings.second_solver:
        row.pending = list(zip(outcomes, queries))
    return row


def second_opinions(row: Row, settings: Settings) -> float:
    """The second pass of a row decided with ``second_later``: every proved query re-run by
    the second solver (:func:`cross_check`), the lemmas and the row's ``second`` filled in;
    the seconds it took (0 when nothing was left)."""
    pending = getattr(row, "pending", None)
    if not pending:
        return 0.0
    start = time.perf_counter()
    order = list(SECOND_OPINIONS)
    for index, (outcome, query) in enumerate(pending):
        cross_check(outcome, query, settings, order)
        if row.lemmas:
            row.lemmas[index]["second"] = outcome.second
    row.second = second_summary([outcome for outcome, _ in pending])
    del row.pending
    return time.perf_counter() - start


def lift_refuted(row: Row, monolithic: Query, settings: Settings) -> Row:
    """A chain row that stopped at a lemma the solver refuted (a model that is not yet a
    counterexample of the property) asks the property's monolithic violation once, within
    the row's time limit: replayed words make the row ``refuted``; otherwise it stays
    ``unknown`` naming the refuted lemma."""
    refuted_lemma = row.result == UNKNOWN and any(
        not is_hypothesis(lem["name"]) and (
            lem["result"] == REFUTED or (lem["result"] == UNKNOWN and
                                         lem["reason"].startswith(REFUTED_LEMMA_REASONS)))
        for lem in row.lemmas)
    if not refuted_lemma:
        return row
    outcome = decide(monolithic, settings.solver, settings.timeout)
    row.seconds += outcome.seconds
    if outcome.result == REFUTED and outcome.words:
        return dataclasses.replace(row, result=REFUTED, words=outcome.words, detail=(
            f"{row.detail}; asked monolithically after that, {monolithic.name} is refuted "
            f"by replayed words ({outcome.seconds:.1f}s)"))
    row.detail += f"; the monolithic {monolithic.name}: {outcome.result} ({outcome.seconds:.1f}s)"
    return row


REFUTED_LEMMA_REASONS = ("the lemma is refuted", "the model of the query")
"""How :func:`decide` words an ``unknown`` whose query the solver refuted."""


# ------------------------------------------------------------ datapath helpers


def layout_variables(desc: Descriptor, k: int, prefix: str = "") -> tuple[tuple[str, int], ...]:
    """One variable per input word of ``desc`` at logical ``k`` (names get ``prefix``)."""
    return tuple((prefix + spec.name, spec.width) for spec in input_layout(desc, k))


def dot_inputs(desc: Descriptor, k: int, values: Variables, prefix: str = "") -> DotInputs:
    """The :class:`DotInputs` made of the variables :func:`layout_variables` declared."""
    layout = input_layout(desc, k)
    return inputs_from(layout, [values[prefix + spec.name] for spec in layout])


def run_dot(ops: Ops, desc: Descriptor, inputs: DotInputs) -> BV:
    """The hardware datapath on ``inputs`` at whatever logical K they have."""
    return build_dot(ops, desc, inputs, any_k=True)


def legal(ops: Ops, desc: Descriptor, inputs: DotInputs) -> Bool:
    """The sparse metadata legality predicate (true for dense datapaths)."""
    return metadata_legal(ops, desc, inputs)


# ------------------------------------------------------------------ properties


@dataclass(frozen=True)
class Property:
    """A property family's entry in the proof matrix.

    ``required`` lists the datapaths of the required matrix, ``applies``
    says which datapaths the property makes sense for, ``fast`` gives the
    (datapath, K) rows of the default test subset, ``check`` decides one row.
    ``covers`` names the spec modules the property exercises.
    """

    name: str
    summary: str
    covers: tuple[str, ...]
    required: tuple[str, ...]
    applies: Callable[[Descriptor], bool]
    check: Callable[[Descriptor, int, Settings], Row]
    fast: tuple[tuple[str, int], ...] = ()
    k_step: Callable[[Descriptor], int] | None = None
    default_k: Callable[[Descriptor], int] | None = None
    key: Callable[[Descriptor, int, Settings], str] | None = None
    """The row's cache key without deciding it (the hash :attr:`Row.key` records)."""
    instruction_k: bool = False
    """Stated at the instruction's own K only (the engine's families)."""

    def check_k(self, desc: Descriptor, k: int) -> None:
        """``ValueError`` naming why ``k`` is impossible for this row."""
        check_logical_k(desc, k)
        if self.instruction_k and k != desc.k:
            raise ValueError(f"K={k} is impossible for {self.name} on {desc.name}: it is "
                             f"stated at the instruction's K={desc.k}")
        if self.k_step is not None and k % self.k_step(desc):
            raise ValueError(f"K={k} is impossible for {self.name} on {desc.name}: it must be "
                             f"a multiple of {self.k_step(desc)}")

    def k_for(self, desc: Descriptor) -> int:
        return self.default_k(desc) if self.default_k else desc.k


KEYED_SOURCES = ("spec", "proofs", "smt", "ref")
"""The packages whose code a row's verdict can depend on (the datapath, the statement, the
solver lowering, the replay)."""


@functools.cache
def _sources_digest() -> str:
    """One hash of every Python file of :data:`KEYED_SOURCES` (path and text)."""
    digest = hashlib.sha256()
    for package in KEYED_SOURCES:
        for root in importlib.import_module(f"tcspec.{package}").__path__:
            for path in sorted(Path(root).rglob("*.py")):
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def source_key(prop: str, desc: Descriptor, k: int, settings: Settings) -> str:
    """A row's cache key from the code that decides it: the property, datapath, K, solver and
    limit, and every source file of :data:`KEYED_SOURCES`. Coarser than a key from the traced
    formulas (any edit there re-decides every such row) and free to compute, so an unchanged
    tree re-runs the chain rows from the report."""
    return hashlib.sha256(repr((prop, desc.name, k, settings.solver, settings.timeout,
                                _sources_digest())).encode()).hexdigest()


def summed_lanes(desc: Descriptor, k: int) -> int:
    """The products a dot sums at logical K: K, or on a sparse path the K/2 lanes its
    metadata keeps (SEMANTICS.md section 5: two of every four, one of two for tf32)."""
    return k // 2 if desc.sparse else k


def every_datapath(applies: Callable[[Descriptor], bool]) -> tuple[str, ...]:
    """The catalogued datapaths ``applies`` accepts, in catalogue order (a property's
    required matrix when it is stated on every datapath it applies to)."""
    return tuple(name for name, entry in CATALOG.items() if applies(entry.descriptor))


def timed(fn: Callable[[], Row], label: str = "") -> Row:
    """Run a row check; a check that raises is an :class:`InternalError`, never a row."""
    try:
        return fn()
    except InternalError:
        raise
    except Exception as exc:
        raise InternalError(f"{label or 'a row'}: the check failed: "
                            f"{type(exc).__name__}: {exc}") from exc
