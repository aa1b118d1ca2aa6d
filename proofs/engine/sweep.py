"""The equivalence engine: simulation-found cut-points, proved bottom-up (issue 30).

Given two traced DAGs over the same input variables (the *left* and *right* sides of one
or more output pairs) and optional assumptions over the inputs, decide whether every pair
is equal for every input that meets the assumptions. This is SAT sweeping as
combinational equivalence checkers do it (fraiging in ABC; cut-points after Kuehlmann and
Krohm):

1. **Simulate** both DAGs on many inputs (:mod:`.simulate`). A pair whose outputs differ
   on a sample is refuted at once (the words are replayed on both executable sides).
2. **Propose** for every node of the right side that the left side does not share a left
   node whose values agree with it on every sample, up to a relation: equal, equal after
   zero or sign extension (or truncation), negated, complemented, a 1-bit word that is a
   boolean's bit, or one the caller declares (:mod:`.relations`), strict or *loose*
   (equal up to a class of words, such as the sign of a zero: merged with a free
   variable, an over-approximation whose models are replayed before they are believed).
   Nodes equal by structure or by a normal form (sums in another order, one maximum over
   one set of leaves: :mod:`.sums`) are merged first, with no query
   (:meth:`Sweep.structural`).
3. **Prove** the proposals bottom-up. Each proved pair is *merged*: from then on the right
   node is replaced by the relation applied to its left partner, so the two DAGs share
   structure from that point up. A proposal is first asked *locally*: every merged node
   below it is cut to a free variable, which over-approximates the DAG, so ``unsat`` proves
   it for every input. If that query has a model (the cut variables may take values no
   input gives them) or does not finish, the proposal is asked over its whole cone with the
   merges but no cuts, which is exact. A model of that query is an input on which the pair
   differs: it becomes a new sample and the proposals are *refined*.
4. Finally each **output pair** is asked the same way (locally, then over its whole cone)
   with the output time limit.
5. **Lemmas.** A pair still undecided whose left side is a special-value ``ite`` chain
   (the D word of one step, which the next step reads as C) is decided as an output of its
   own over the merged DAG, with the case split of step 6, in a share of the budget left;
   proved, it is merged and the next step sees one C; a later pair above it is asked
   with that word cut (every C word, as the step itself was proved) before its whole cone.
   *Chains* go first: the words of a chain of steps (tree leaves and nodes, an FMA
   chain's running values) are decided bottom-up before the sweep, each with the words
   below it cut to free variables and simulated on free values too, then the outputs the
   same way (:meth:`Sweep.word_lemmas`).
6. **Cases.** The outputs are split first on the left side's special-value ``ite`` chain
   and on the caller's hints; when a case's outputs stay open, on the selector of the
   first undecided pair's ``ite`` (found by the sweep, not declared): two texts that
   choose between the same sums in different places are equal case by case.

Every solver answer that is used is ``unsat`` of a query whose assertions over-approximate
(cut) or equal (merged) the real DAG under the assumptions, so ``proved`` means: for every
input word meeting the assumptions the outputs are equal, given the solver. Merging is
justified by congruence: replacing a node by one proved equal to it (under the same
assumptions) does not change any value. ``refuted`` comes only with input words on which
the executable lowerings of the two sides give different words. Everything else is
``unknown``, naming the first pair it could not decide.
"""

from __future__ import annotations

import itertools
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tcspec.proofs.engine.cache import ProofCache, structure_key
from tcspec.proofs.engine.relations import LOOSE_PREFIX, WordRelation
from tcspec.proofs.engine.simulate import Simulation, evaluate_inputs
from tcspec.proofs.engine.sums import (
    Bounder,
    equal_extrema,
    equal_sums,
    fits_in,
    never_most_negative,
)
from tcspec.smt.solve import SolveResult, query_script
from tcspec.smt.trace import Node, TraceOps, cut_nodes, evaluate, walk
from tcspec.smt.worker import SolverWorker
from tcspec.spec.bitvec import BV, Bool

PROVED, REFUTED, UNKNOWN = "proved", "refuted", "unknown"

RELATIONS = ("equal", "zext", "sext", "neg", "not", "const", "bit", "nbit")
"""How a right node may relate to its left partner: equal (same width), equal as unsigned or
as signed integers (widths may differ), negated (as signed integers), complemented
(booleans), constant (booleans that take one value on every sample), or a 1-bit word that
is a boolean's bit (``bit``: 1 when it holds; ``nbit``: 0): a netlist's flag register,
which Yosys keeps as a 1-bit wire, beside the spec's boolean."""

BIT_RELATIONS = ("bit", "nbit")


@dataclass(frozen=True)
class EngineSettings:
    """Solver and time limits of one engine run (seconds)."""

    solver: str = "bitwuzla"
    local_timeout: float = 10.0
    cone_timeout: float = 30.0
    output_timeout: float = 120.0
    budget: float | None = None
    """Wall seconds for internal pairs; past it the engine goes straight to the outputs."""
    quick_output: float = 3.0
    """Seconds the outputs are asked before any sweep (a special-value case is often
    decided by its flags alone, with no internal pair); 0: never. The merged images that
    attempt built are dropped before the sweep, so merges propagate up from scratch."""
    row_budget: float | None = None
    """Wall seconds for the whole run (every case): past it the open case's outputs get
    what is left (at least ``MIN_OUTPUT`` s) and the cases not started are ``unknown``."""
    relations: tuple[str, ...] = RELATIONS
    word_relations: tuple[WordRelation, ...] = ()
    """Relations the caller declares between words (:mod:`.relations`), proposed after
    the engine's own."""
    merge_first: float = 0.0
    """Share of the row budget for a first attempt with no case split and no lemma: merge
    what matches (by structure, then the sweep) and ask the outputs. Two runs of one
    computation on inputs that agree once a few small nodes are shown equal (a sparse path
    and its dense sibling on the selected lanes) become one DAG this way, while a split's
    constants, put into the left run only, would keep them apart. 0: split first."""
    cut_sizes: tuple[int, ...] = (0, 64, 1024)
    """The local queries of a proposal, in turn: merged nodes whose cone has more than this
    many nodes are cut (0: every merged node below the pair); then, from the last of them,
    the cut nodes a model gives impossible values are restored, at most ``MAX_REFINE``
    times; then the whole cone."""


@dataclass
class EngineStats:
    """What the engine did: proposals, proofs, refinements, queries."""

    nodes_left: int = 0
    nodes_right: int = 0
    samples: int = 0
    proposed: int = 0
    proved: int = 0
    structural: int = 0
    sums: int = 0
    refined: int = 0
    undecided: int = 0
    cases: int = 0
    lemmas: int = 0
    twins: int = 0
    """Left tests of a hint's case proved equal to it and fixed with it (:func:`_twins`)."""
    splits_found: list[str] = field(default_factory=list)
    uncut: int = 0
    local_queries: int = 0
    cone_queries: int = 0
    cache_hits: int = 0
    solver_seconds: float = 0.0
    slowest: tuple[float, str] = (0.0, "")

    def to_json(self) -> dict[str, Any]:
        return {"nodes_left": self.nodes_left, "nodes_right": self.nodes_right,
                "samples": self.samples, "proposed": self.proposed, "proved": self.proved,
                "structural": self.structural, "sums": self.sums, "refined": self.refined,
                "undecided": self.undecided, "cases": self.cases, "lemmas": self.lemmas,
                "splits_found": list(self.splits_found), "uncut": self.uncut,
                "local_queries": self.local_queries,
                "cone_queries": self.cone_queries, "cache_hits": self.cache_hits,
                "solver_seconds": round(self.solver_seconds, 2),
                "slowest": {"seconds": round(self.slowest[0], 2), "pair": self.slowest[1]},
                **({"twins": self.twins} if self.twins else {})}

    def summary(self) -> str:
        slow = f"; slowest pair {self.slowest[0]:.1f}s ({self.slowest[1]})" \
            if self.slowest[1] else ""
        found = f" (split on {', '.join(self.splits_found)}, found)" if self.splits_found \
            else ""
        return (f"{self.proposed} pairs proposed, {self.proved} proved "
                f"({self.structural} by structure, {self.sums} of them sums in another order), "
                f"{self.refined} refined, "
                + (f"{self.lemmas} decided as lemmas, " if self.lemmas else "")
                + f"{self.undecided} undecided, {self.cases} cases{found}; "
                f"{self.uncut} cut-points refined; "
                f"{self.local_queries} local and "
                f"{self.cone_queries} cone queries, {self.cache_hits} from the cache, "
                f"{self.solver_seconds:.1f}s solving{slow}")


@dataclass
class EquivalenceResult:
    """The verdict of one engine run."""

    result: str
    seconds: float
    stats: EngineStats
    words: dict[str, int] = field(default_factory=dict)
    """A counterexample's input words (``refuted``)."""
    outputs: list[tuple[int, int]] = field(default_factory=list)
    """Each output pair's words at ``words`` on the two executable sides (``refuted``)."""
    stopped: str = ""
    """``unknown``: the first pair it could not decide, and why."""


Replay = Callable[[dict[str, int]], Sequence[tuple[int, int]]]
"""Input words -> each output pair's (left word, right word) on the executable lowerings."""


@dataclass
class _Proposal:
    left: Node | None
    right: Node
    relation: str
    value: int | bool = 0
    """The constant of a ``const`` proposal (``left`` is None)."""


MAX_REFINE = 8
"""Refinements of one proposal's cut-points before it is asked over its whole cone."""

MAX_SPLIT = 3
"""Selectors of an output's ``ite`` chain one case split uses."""

MAX_DEPTH = 3
"""Nested case splits."""

MAX_FOUND_SPLITS = 2
"""Nested case splits on selectors the sweep found (:meth:`Sweep.found_split`)."""

MAX_LEMMAS = 8
"""Undecided internal pairs one run decides as outputs of their own (:func:`_lemma`)."""

MIN_LEMMA_WIDTH = 16
"""The narrowest pair decided as a lemma (an F16 word)."""

LEMMA_SHARE = 3
"""A lemma gets at most 1/LEMMA_SHARE of the row budget left when it starts."""

MAX_PARTNERS = 3
"""Left words a chain step is tried against (:meth:`Sweep.word_lemmas`)."""

CHAIN_SHARE = 0.5
"""The share of a run's time left that :meth:`Sweep.word_lemmas` may spend; it stops at
the first step it does not prove, and the sweep goes on from what it merged."""

MAX_TWINS = 3
"""Left booleans tried as a hint's twin (:meth:`Sweep.twin_candidates`)."""

TWIN_SHARE = 6
"""A twin's proof gets at most 1/TWIN_SHARE of the run's time left."""

MAX_LOOSE_DROPS = 4
"""Rounds in which an output's spurious model undoes the loose merges it moved."""

MIN_OUTPUT = 5.0
"""Seconds an output query always gets, even past the row budget."""

DEBUG = bool(os.environ.get("TCSPEC_ENGINE_DEBUG"))
TIMES: list[tuple[float, str, str, str]] = []




@dataclass
class Case:
    """One case of a split: the output pairs with the case's selectors made constant, and
    the hypotheses (the parent's and the case's literals) over the inputs."""

    name: str
    pairs: list[tuple[Node, Node]]
    assumptions: list[Node]
    labels: dict[int, str]
    carried: list[Node] = field(default_factory=list)
    """The caller's further hint nodes, rebuilt in this case's DAG."""


def make(ops: TraceOps, op: str, args: tuple[Node, ...], width: int | None,
         params: tuple[Any, ...]) -> Node:
    """The node ``op(args)`` in ``ops``, simplified as the tracer simplifies (constant folding,
    ``ite`` with a constant selector or equal branches, boolean identities)."""
    if op == "ite":
        return ops.p_ite(args[0], args[1], args[2], width)
    if op == "band":
        return ops.p_band(args[0], args[1])
    if op == "bor":
        return ops.p_bor(args[0], args[1])
    if op == "bnot":
        return ops.p_bnot(args[0])
    if op == "eq":
        return ops.p_eq(args[0], args[1], args[0].width)
    identity = _identity(op, args)
    if identity is not None and identity.width == width:
        return identity
    return ops._node(op, args, width, params)


def _identity(op: str, args: tuple[Node, ...]) -> Node | None:
    """The node ``op(args)`` is by a ring identity once a case or a merge made an argument
    constant: ``x * 1``, ``x + 0``, ``x - 0``, a shift by 0 (``x``); ``x * 0`` (a zero
    constant, returned as the constant argument). None when none applies."""
    if len(args) != 2 or not any(a.is_const for a in args):
        return None
    x, y = args
    if op == "mul":
        for a, b in ((x, y), (y, x)):
            if b.is_const and b.value == 1:
                return a
            if b.is_const and b.value == 0:
                return b
    if op == "add" and x.is_const and x.value == 0:
        return y
    if op in ("add", "sub", "shl", "lshr", "ashr") and y.is_const and y.value == 0:
        return x
    return None


def rebuild(roots: Sequence[Node], into: TraceOps, substitute: Mapping[int, Node]
            ) -> dict[int, Node]:
    """Every node under ``roots`` rebuilt in ``into`` (old id -> new node), the nodes of
    ``substitute`` (old id -> node of ``into``) standing in for theirs."""
    mapping: dict[int, Node] = {}
    for n in walk(roots):
        if n.id in substitute:
            mapping[n.id] = substitute[n.id]
        elif n.op == "var" or n.is_const:
            mapping[n.id] = into._make(n.op, (), n.params, n.width)
        else:
            mapping[n.id] = make(into, n.op, tuple(mapping[a.id] for a in n.args), n.width,
                                 n.params)
    return mapping


class Sweep:
    """One engine run over the output pairs ``pairs`` (left node, right node)."""

    def __init__(self, pairs: Sequence[tuple[Node, Node]], assumptions: Sequence[Node],
                 samples: Mapping[str, Sequence[int]], settings: EngineSettings,
                 cache: ProofCache | None = None, labels: Mapping[int, str] | None = None,
                 worker: SolverWorker | None = None) -> None:
        self.pairs = list(pairs)
        self.assumptions = list(assumptions)
        self.settings = settings
        self.cache = cache if cache is not None else ProofCache()
        self.labels = dict(labels or {})
        self.worker = worker or SolverWorker()
        self._own_worker = worker is None
        self.stats = EngineStats()
        roots = [n for p in self.pairs for n in p] + self.assumptions
        self.sim = Simulation(roots, _meeting(roots, self.assumptions, samples))
        self.stats.samples = self.sim.count
        self.left = {n.id for n in walk([left for left, _ in self.pairs])}
        outputs = {right.id for _, right in self.pairs}
        self.right_only = [n for n in walk([right for _, right in self.pairs])
                           if n.id not in self.left and n.id not in outputs]
        self.selectors = {n.args[0].id for n in walk([right for _, right in self.pairs])
                          if n.op == "ite" and n.id not in self.left}
        self.stats_nodes = (len(self.left), len(self.right_only))
        self.open_pair: tuple[Node, Node] = self.pairs[0]
        self.left_nodes = [n for n in self.sim.nodes if n.id in self.left]
        self.merged = TraceOps()
        self.image: dict[int, Node] = {}
        self.reps: set[int] = set()
        self.first_undecided = ""
        self.undecided: list[_Proposal] = []
        self.case = ""
        self.stop_at: float | None = None
        self.matched: set[int] = set()
        self._model: dict[str, int] = {}
        self._index: dict[bytes, list[Node]] | None = None
        self._twins: dict[int, Node] | None = None
        self._declared = {r.name: r for r in settings.word_relations}
        self.loose_vars: dict[str, tuple[Node, WordRelation]] = {}
        """Free variables of loose merges (name -> the right node, its relation)."""
        self._loose_free: dict[str, BV] = {}
        self.merges: dict[int, _Proposal] = {}
        """Every merge made, by right node id (to rebuild the images: :meth:`_drop_loose`)."""
        self.inherited_loose = any(name.startswith(LOOSE_PREFIX) for name in self.sim.inputs)
        self.loose = self.inherited_loose
        """Whether the DAG over-approximates the real one (a loose merge here or in the
        run that started this one): a model is then a candidate, replayed before use."""
        try:
            for relation in settings.word_relations:
                check_classes(relation, self.worker, settings.solver)
        except ValueError:
            self.close()
            raise
        self._sizes: dict[int, int] = {}
        self.started = time.monotonic()
        self.chain_until: float | None = None
        """When :meth:`word_lemmas` stops (:data:`CHAIN_SHARE` of the run's time)."""
        self.lemma_refuted = False
        """Whether the last chain step's cut query was refuted on free words (the next
        partner with the same samples is tried: a flushed and an unflushed word agree on
        every sample that is not tiny)."""
        self.chain_words: dict[int, Node] = {}
        """Right words :meth:`word_lemmas` proved, with their merged images."""
        self.fits: dict[int, int] = {}
        """Merged nodes proved to be the sign extension of their low bits (id -> that
        width, :func:`sums.fits_in`), stated as facts in the queries that read them: a
        wide sum merged with a narrower one keeps its range when its cone is cut."""
        self.off_minimum: dict[int, bool] = {}
        """Merged sums whose static bound keeps them off the most negative word
        (:func:`sums.never_most_negative`): stated as facts, so ``-x`` and ``|x|`` do not
        wrap when ``x`` is cut (a negated run's sum, a magnitude taken in two places)."""
        self.lemma_cuts: set[int] = set()
        """Merged nodes proved by a lemma: a pair's cone query cuts them first."""
        self.lemma: Callable[[Sweep, _Proposal, bool], bool] | None = None
        """Decides an undecided pair as an output of its own (:func:`_prove` sets it)."""

    # ------------------------------------------------------------------ images

    def img(self, node: Node) -> Node:
        """The node in the merged DAG: proved right nodes replaced by their left partners."""
        found = self.image.get(node.id)
        if found is not None:
            return found
        for n in walk([node]):
            if n.id in self.image:
                continue
            if n.op == "var" or n.is_const:
                self.image[n.id] = self.merged._make(n.op, (), n.params, n.width)
            else:
                self.image[n.id] = make(self.merged, n.op,
                                        tuple(self.image[a.id] for a in n.args), n.width,
                                        n.params)
        return self.image[node.id]

    def _rebuilt(self, node: Node) -> Node:
        """``node``'s own operation over its arguments' merged images."""
        if node.op == "var" or node.is_const:
            return self.img(node)
        return make(self.merged, node.op, tuple(self.img(a) for a in node.args), node.width,
                    node.params)

    def _related(self, x: Node, relation: str, width: int | None) -> Node:
        """``relation`` applied to the merged node ``x``, at ``width`` (a loose relation:
        the class representative, :mod:`.relations`)."""
        m = self.merged
        if relation == "not":
            return m.p_bnot(x)
        if relation in BIT_RELATIONS:
            one, zero = m.p_const(1, 1), m.p_const(0, 1)
            return m.p_ite(x, one, zero, 1) if relation == "bit" else m.p_ite(x, zero, one, 1)
        declared = self._declared.get(relation)
        if declared is not None:
            mapped = declared.build(m, BV(m, x, declared.width))
            if declared.classes is not None:
                mapped = declared.classes.canon(m, mapped)
            return mapped.node
        if relation == "equal" or x.width == width:
            value = BV(m, x, x.width) if x.width is not None else None
            if relation == "neg" and value is not None:
                wide = m.sext(value, x.width + 1)
                return m.extract(m.neg(wide), width - 1, 0).node
            return x
        value = BV(m, x, x.width)
        assert width is not None
        if relation == "neg":
            wide = m.sext(value, max(x.width, width) + 1)
            return m.extract(m.neg(wide), width - 1, 0).node
        if width < x.width:
            return m.extract(value, width - 1, 0).node
        extend = m.zext if relation == "zext" else m.sext
        return extend(value, width).node

    def _loose_member(self, node: Node, relation: WordRelation, name: str = "") -> Node:
        """The merged image of a right node proved related to its partner by a loose
        relation: ``choose(representative, f)`` with ``f`` a fresh variable, every member of
        the class (:mod:`.relations`); its real values are kept for the samples of the
        runs this one starts (:meth:`child_samples`)."""
        assert relation.classes is not None
        m = self.merged
        name = name or f"{LOOSE_PREFIX}{next(_LOOSE_NAMES)}"
        self.loose_vars[name] = (node, relation)
        self.loose = True
        free = self._loose_free.get(name)
        if free is None:
            free = self._loose_free[name] = m.variable(name, relation.classes.free_width)
        return relation.classes.choose(m, BV(m, self.image[node.id], relation.width),
                                       free).node

    def _wrong_loose(self, words: dict[str, int]) -> set[str]:
        """The loose variables of this run whose value in the last model is not the one
        that picks the real word at ``words``."""
        wrong = set()
        for name, (node, relation) in self.loose_vars.items():
            if name in self._model:
                real = evaluate_inputs([node], words)[node.id]
                if int(relation.free_values([real])[0]) != self._model[name]:
                    wrong.add(name)
        return wrong

    def _drop_loose(self, names: set[str]) -> None:
        """Undo the loose merges ``names``: a model of an output's query picked a member of
        their class that the inputs do not give, and the outputs moved with it, so the
        class is too coarse there. Their right nodes are rebuilt from their arguments, and
        every image above them again."""
        dropped = {self.loose_vars.pop(name)[0].id for name in names}
        self.matched -= dropped
        named = {node.id: (name, relation) for name, (node, relation) in self.loose_vars.items()}
        self.image.clear()
        self._twins = None
        for node in self.right_only:
            p = self.merges.get(node.id)
            if node.id not in self.matched or p is None:
                self.image[node.id] = self._rebuilt(node)
            elif p.left is None:
                self.image[node.id] = self._constant(node, p.value)
            else:
                self.image[node.id] = self._related(self.img(p.left), p.relation, node.width)
                if node.id in named:
                    name, relation = named[node.id]
                    self.image[node.id] = self._loose_member(node, relation, name)
        self.loose = self.inherited_loose or bool(self.loose_vars)

    def child_samples(self) -> dict[str, list[int]]:
        """The samples, with each loose merge's free variable taking the value that picks
        the real word (so a case or a lemma started on the merged DAG simulates the real
        values first)."""
        samples = {k: list(v) for k, v in self.sim.samples.items()}
        for name, (node, relation) in self.loose_vars.items():
            samples[name] = [int(v) for v in relation.free_values(self.sim.values[node.id])]
        return samples

    def _constant(self, node: Node, value: Any) -> Node:
        """The merged constant ``value`` at ``node``'s sort."""
        if node.width is None:
            return self.merged.p_bool_const(bool(value))
        return self.merged.p_const(int(value), node.width)

    def _differ(self, a: Node, b: Node) -> Node:
        m = self.merged
        if a.width is None:
            return m.xor_(Bool(m, a), Bool(m, b)).node
        return m.ne(BV(m, a, a.width), BV(m, b, b.width)).node

    # ------------------------------------------------------------- proposals

    def _left_index(self) -> dict[bytes, list[Node]]:
        if self._index is None:
            index: dict[bytes, list[Node]] = {}
            for node in self.left_nodes:
                if node.is_const or self.sim.constant(node):
                    continue
                for tag, key in zip(("u", "s", "n"), self.sim.keys(node)):
                    index.setdefault(tag.encode() + key, []).append(node)
            if any(r in self.settings.relations for r in BIT_RELATIONS):
                for node in self.left_nodes:
                    if node.width is None and not node.is_const and \
                            not self.sim.constant(node):
                        held, failed = self.sim.bit_keys(node)
                        index.setdefault(b"B" + held, []).append(node)
                        index.setdefault(b"N" + failed, []).append(node)
            for relation in self.settings.word_relations:
                nodes = [n for n in self.left_nodes if n.width == relation.width and
                         not n.is_const and not self.sim.constant(n)]
                for node, key in zip(nodes, self.sim.mapped_keys(nodes, relation.on_values)):
                    index.setdefault(b"W" + relation.name.encode() + key, []).append(node)
            self._index = index
        return self._index

    def propose(self, node: Node) -> _Proposal | None:
        """The left node ``node`` agrees with on every sample, and how (module docstring);
        a selector of an ``ite`` that is constant on every sample is proposed to be that
        constant (a case hypothesis often fixes one: merging it removes a branch), and so,
        inside a case, is any such boolean or 1-bit word (asked by local queries only: the
        negated run's "some product is +Inf" under "no special value", a netlist's NaN
        flag register there)."""
        if node.op == "var" or node.is_const:
            return None
        twin = self._left_twin(node)
        if twin is not None:
            return _Proposal(twin, node, "equal")
        if self.sim.constant(node):
            if (node.id in self.selectors or (node.width in (None, 1) and self.case)) and \
                    "const" in self.settings.relations and \
                    self.sim.count:
                return _Proposal(None, node, "const", self.sim.value(node, 0))
            return None
        index = self._left_index()
        keys = self.sim.keys(node)
        allowed = self.settings.relations
        if node.width is None:
            tries = [("equal", b"u" + keys[0]), ("not", b"s" + keys[0])]
        else:
            tries = [("zext", b"u" + keys[0]), ("sext", b"s" + keys[1]), ("neg", b"n" + keys[1])]
            if node.width == 1:
                tries += [("bit", b"B" + keys[0]), ("nbit", b"N" + keys[0])]
            tries += [(r.name, b"W" + r.name.encode() + self._right_key(node, r))
                      for r in self.settings.word_relations if r.width == node.width]
        best: tuple[tuple[int, int, int], _Proposal] | None = None
        for rank, (relation, key) in enumerate(tries):
            for left in index.get(key, ()):
                if ((left.width is None) != (node.width is None)) != \
                        (relation in BIT_RELATIONS):
                    continue
                same = left.width == node.width
                name = "equal" if same and relation in ("zext", "sext") else relation
                if name not in allowed and name not in self._declared:
                    continue
                score = (0 if same else 1, rank, left.id)
                if best is None or score < best[0]:
                    best = (score, _Proposal(left, node, name))
        return best[1] if best else None

    def _left_twin(self, node: Node) -> Node | None:
        """The left node whose merged image ``node`` rebuilds to, if any: once its arguments
        are merged, a right node computed as a left one is (the same computation on inputs
        proved equal) is that node's twin, whichever other left node has its samples."""
        if self._twins is None:
            self._twins = {}
            for left in self.left_nodes:
                self._twins.setdefault(self.img(left).id, left)
        if not all(a.id in self.matched or a.is_const or a.op == "var" for a in node.args):
            return None
        return self._twins.get(self._rebuilt(node).id)

    def _is_loose(self, relation: str) -> bool:
        declared = self._declared.get(relation)
        return declared is not None and declared.classes is not None

    def _right_key(self, node: Node, relation: WordRelation) -> bytes:
        if relation.classes is None:
            return self.sim.keys(node)[0]
        return self.sim.mapped_keys([node], relation.right_values)[0]

    # ------------------------------------------------------------------ solving

    def _label(self, node: Node) -> str:
        label = self.labels.get(node.id)
        width = "bool" if node.width is None else f"{node.width} bits"
        return f"{label} ({node.op}, {width})" if label else f"node {node.id} ({node.op}, {width})"

    def describe(self, p: _Proposal) -> str:
        if p.left is None:
            return f"right {self._label(p.right)} ~const~ {p.value}"
        return f"{self._label(p.left)} ~{p.relation}~ right {self._label(p.right)}"

    def _solve(self, roots: Sequence[Node], timeout: float, kind: str) -> SolveResult:
        key = structure_key(roots, self.settings.solver, kind)
        cached = self.cache.get(key, timeout)
        if cached is not None:
            self.stats.cache_hits += 1
            return SolveResult(cached["status"], self.settings.solver, 0.0,
                               reason="from the proof cache")
        answer = self.worker.solve(query_script(roots), solver=self.settings.solver,
                                   timeout=timeout)
        self.stats.solver_seconds += answer.seconds
        self.cache.put(key, answer.status, answer.seconds, timeout)
        return answer

    def _cone_size(self, node: Node) -> int:
        size = self._sizes.get(node.id)
        if size is None:
            size = self._sizes[node.id] = sum(1 for _ in walk([node]))
        return size

    def _assumption_images(self) -> list[Node]:
        return [self.img(a) for a in self.assumptions]

    def decide(self, p: _Proposal, cone_timeout: float | None) -> tuple[str, dict[str, int]]:
        """``(proved | refuted | unknown, counterexample words)`` for one proposal."""
        y = self._rebuilt(p.right)
        declared = self._declared.get(p.relation)
        if declared is not None and declared.classes is not None:
            y = declared.classes.canon(self.merged, BV(self.merged, y, declared.width)).node
        if p.left is None:
            x = related = self._constant(p.right, p.value)
        else:
            x = self.img(p.left)
            related = self._related(x, p.relation, p.right.width)
        if related.id == y.id:
            self.stats.structural += 1
            return PROVED, {}
        if p.left is not None and _normal_forms_equal(x, y, p.relation, self._bounded):
            self.stats.structural += 1
            self.stats.sums += 1
            return PROVED, {}
        condition = self._differ(related, y)
        if condition.is_const:
            return (UNKNOWN if condition.value else PROVED), {}
        started = time.monotonic()
        keep = {x.id, y.id}
        if self.assumptions and self._holds_unassumed(condition, keep):
            self._timed(started, p)
            return PROVED, {}
        roots = [condition, *self._assumption_images(), *self._fit_facts(condition)]
        cut_points = {n.id: n for n in walk(roots) if n.id in self.reps and n.id not in keep}
        previous: set[int] | None = None
        chosen: set[int] = set()
        verdict: str | None = None
        words: dict[str, int] = {}
        for limit in self.settings.cut_sizes:
            chosen = {c for c, n in cut_points.items() if self._cone_size(n) > limit}
            if not chosen or chosen == previous:
                continue
            previous = chosen
            verdict, words = self._local(roots, chosen)
            if verdict == PROVED:
                self._timed(started, p)
                return PROVED, {}
        chosen = previous or set()
        for _ in range(MAX_REFINE if verdict == UNKNOWN else 0):
            wrong = self._inconsistent(chosen, words, cut_points)
            if not wrong:
                self._timed(started, p)
                return REFUTED, words
            self.stats.uncut += len(wrong)
            chosen -= wrong
            if not chosen:
                break
            verdict, words = self._local(roots, chosen)
            if verdict == PROVED:
                self._timed(started, p)
                return PROVED, {}
            if verdict is None:
                break
        if cone_timeout is None:
            return UNKNOWN, {}
        lemmas = {c for c in cut_points if c in self.lemma_cuts}
        if lemmas and lemmas != chosen:
            verdict, _ = self._local(roots, lemmas, cone_timeout)
            if verdict == PROVED:
                self._timed(started, p)
                return PROVED, {}
            if verdict is None:
                self._timed(started, p)
                return UNKNOWN, {}
        self.stats.cone_queries += 1
        answer = self._solve(roots, cone_timeout, "cone")
        self._timed(started, p)
        if answer.unsat:
            return PROVED, {}
        if answer.sat:
            self._model = answer.model
            return REFUTED, {n.params[0]: answer.model.get(n.params[0], 0)
                             for n in self.sim.inputs.values()}
        return UNKNOWN, {}

    def _fit_facts(self, condition: Node) -> list[Node]:
        """``n == sext(low bits of n)`` for each node under ``condition`` in :attr:`fits`
        (proved facts wherever the sweep's assumptions hold, as every merge is)."""
        m, facts = self.merged, []
        for n in walk([condition]):
            if n.op in ("add", "sub", "neg") and n.id in self.reps and n.width is not None:
                if n.id not in self.off_minimum:
                    self.off_minimum[n.id] = never_most_negative(n)
                if self.off_minimum[n.id]:
                    value = BV(m, n, n.width)
                    facts.append(m.ne(value, m.const(1 << (n.width - 1), n.width)).node)
            width = self.fits.get(n.id)
            if width is not None and n.width is not None:
                value = BV(m, n, n.width)
                facts.append(m.eq(value, m.sext(m.extract(value, width - 1, 0), n.width)).node)
        return facts

    def _bounded(self, leaf: Node, signed: bool, bound: int) -> bool:
        """Whether ``|leaf| <= bound`` (the merged node read signed or unsigned) holds for
        every input meeting the sweep's assumptions (under which every merge holds), by
        one query over its merged cone (a sum's leaf bound, :mod:`sums`)."""
        m, width = self.merged, leaf.width
        assert width is not None
        value = BV(m, leaf, width)
        if signed:
            wide = m.sext(value, width + 1)
            low, high = m.const(-bound, width + 1), m.const(bound, width + 1)
            outside = m.or_(m.slt(wide, low), m.slt(high, wide))
        elif bound.bit_length() > width:
            return True
        else:
            outside = m.ult(m.const(bound, width), value)
        self.stats.local_queries += 1
        return self._solve([outside.node, *self._assumption_images()],
                           self.settings.local_timeout, "bound").unsat

    def _holds_unassumed(self, condition: Node, keep: set[int]) -> bool:
        """Whether the pair is proved with every merged node below it cut and no
        assumption: such a query is the same formula in every case of a split (and in
        every datapath with that cone), so the proof cache answers it after the first."""
        cut_points = {n.id for n in walk([condition]) if n.id in self.reps and n.id not in keep}
        cut_roots, _ = cut_nodes([condition],
                                 lambda n: f"cut!{n.id}" if n.id in cut_points else None)
        key = structure_key(cut_roots, self.settings.solver, "local")
        if self.cache.known_satisfiable(key):
            return False
        self.stats.local_queries += 1
        return self._solve(cut_roots, self.settings.local_timeout / 4, "local").unsat

    def _local(self, roots: list[Node], chosen: set[int], timeout: float | None = None
               ) -> tuple[str | None, dict[str, int]]:
        """The query with the ``chosen`` merged nodes cut: ``(proved, {})``; ``(refuted,
        words)`` when its model is a real one (every cut node's value is the one the inputs
        give it); ``(unknown, model)`` for any other model; ``(None, {})`` when the solver
        did not decide."""
        cut_roots, _ = cut_nodes(roots, lambda n: f"cut!{n.id}" if n.id in chosen else None)
        self.stats.local_queries += 1
        answer = self._solve(cut_roots, timeout or self.settings.local_timeout, "local")
        if DEBUG and answer.seconds > 0.5:
            ops: dict[str, int] = {}
            for n in walk(cut_roots):
                ops[n.op] = ops.get(n.op, 0) + 1
            print(f"[engine] slow local {answer.status} {answer.seconds:.2f}s "
                  f"{len(chosen)} cuts: {sorted(ops.items(), key=lambda kv: -kv[1])[:14]}",
                  flush=True)
        if answer.unsat:
            return PROVED, {}
        if not answer.sat:
            return None, {}
        words = {name: answer.model.get(name, 0) for name in self.sim.inputs}
        self._model = answer.model
        return UNKNOWN, words

    def _inconsistent(self, chosen: set[int], words: dict[str, int],
                      cut_points: dict[int, Node]) -> set[int]:
        """The cut nodes whose value in the last model is not the one ``words`` give them
        (counterexample-guided refinement of the cut-points); empty when the model is real."""
        model = self._model
        live = [cut_points[c] for c in chosen if f"cut!{c}" in model]
        words = {**words, **{k: v for k, v in model.items() if k.startswith(LOOSE_PREFIX)}}
        real = evaluate(live, words)
        wrong = {n.id for n, v in zip(live, real) if int(v) != model[f"cut!{n.id}"]}
        if len(wrong) < 2:
            return wrong
        values = {**words, **{k: v for k, v in model.items() if k.startswith("cut!")}}
        local: set[int] = set()
        for node in (cut_points[c] for c in wrong):
            roots, _ = cut_nodes([node], lambda n, top=node.id: f"cut!{n.id}"
                                 if n.id in chosen and n.id != top else None)
            try:
                value = evaluate(roots, values)[0]
            except KeyError:
                continue
            if int(value) != model[f"cut!{node.id}"]:
                local.add(node.id)
        return local or wrong

    def _timed(self, started: float, p: _Proposal) -> None:
        spent = time.monotonic() - started
        if DEBUG:
            TIMES.append((spent, p.right.op, p.relation, self.describe(p)))
        if spent > self.stats.slowest[0]:
            self.stats.slowest = (spent, self.describe(p))

    def _confirm(self, p: _Proposal, words: dict[str, int]) -> bool:
        """Whether ``words`` meet the assumptions and separate the pair on the real DAG."""
        nodes = [p.right, *self.assumptions] + ([p.left] if p.left is not None else [])
        values = evaluate_inputs(nodes, words)
        if not all(values[a.id] for a in self.assumptions):
            return False
        right = values[p.right.id]
        if p.left is None:
            return bool(right) != bool(p.value)
        left = values[p.left.id]
        if p.right.width is None:
            expected = (not left) if p.relation == "not" else left
            return bool(expected) != bool(right)
        if p.relation in BIT_RELATIONS:
            return (bool(left) == (p.relation == "bit")) != bool(right)
        assert p.left.width is not None
        if p.relation in self._declared:
            return not self._declared[p.relation].holds(int(left), int(right))
        return _apply_relation_int(int(left), p.left.width, p.relation,
                                   p.right.width) != int(right)

    # -------------------------------------------------------------------- sweep

    def structural(self) -> None:
        """Merge, bottom-up and with no solver query, every right node that is its proposed
        partner by structure or by a normal form (:mod:`.sums`): a window's maximum over
        permuted lanes, a sum in another order. What sits above such a node often becomes
        one node with its partner, so neither the chain lemmas nor the sweep ask it."""
        for node in self.right_only:
            if node.id in self.matched:
                continue
            p = self.propose(node)
            if p is not None and p.left is not None:
                x, y = self.img(p.left), self._rebuilt(node)
                if self._related(x, p.relation, node.width).id == y.id or \
                        _normal_forms_equal(x, y, p.relation):
                    self.stats.proposed += 1
                    self.stats.proved += 1
                    self.stats.structural += 1
                    self._merge(node, p)
                    continue
            self.image[node.id] = self._rebuilt(node)

    def word_lemmas(self) -> None:
        """Decide the words of a chain of steps first, each as a lemma, bottom-up.

        A right node whose proposed partner is a word (:meth:`_lemma_candidate`), equal or
        related by a loose relation, computed from a product, with another such word above
        or below it or below an output word, is a step of a chain: a tree's
        leaves and nodes, an FMA chain's running value. Each is decided as a lemma with
        the words below it cut (:func:`_cut_lemma`), so every step is the step alone; the
        nodes inside a proved step are then no longer asked (:meth:`sweep` skips what no
        open node reads)."""
        if self.lemma is None:
            return
        found = []
        for node in self.right_only:
            if node.id in self.matched:
                continue
            proposal = self.propose(node)
            if proposal is not None and proposal.left is not None and \
                    (proposal.relation == "equal" or self._is_loose(proposal.relation)) and \
                    _is_word(proposal.left):
                found.append((node, proposal))
        barrier = {p.left.id for _, p in found if p.left is not None}
        words = [(node, p) for node, p in found if p.left is not None
                 and not _reads_product(p.left.args[0], barrier)]
        words = [(node, p) for node, p in words if any(n.op == "mul" for n in walk([node]))]
        ids = {node.id for node, _ in words}
        output_word = any(_is_word(left) for left, _ in self.pairs)
        chained = set()
        for node, _ in words:
            cone = list(walk([node]))
            below = {n.id for n in cone} & ids - {node.id}
            if below:
                chained |= below | {node.id}
            if output_word:
                chained.add(node.id)
        if DEBUG:
            print(f"[engine] words: {[(self.describe(p), n.id in chained) for n, p in words]}",
                  flush=True)
        if self.stop_at is not None:
            now = time.monotonic()
            self.chain_until = now + max(0.0, self.stop_at - now) * CHAIN_SHARE
        index = self._left_index()
        for node, proposal in words:
            if node.id not in chained:
                continue
            partners = [proposal] + ([
                _Proposal(left, node, "equal")
                for left in index.get(b"u" + self.sim.keys(node)[0], ())
                if left is not proposal.left and _is_word(left) and left.width == node.width]
                if proposal.relation == "equal" else [])
            proved = None
            for candidate in partners[:MAX_PARTNERS]:
                if self.chain_until is not None and time.monotonic() > self.chain_until:
                    return
                self.stats.proposed += 1
                self.lemma_refuted = False
                if self.lemma(self, candidate, True):
                    proved = candidate
                    break
                if not self.lemma_refuted:
                    break
            if proved is None:
                return
            self.stats.proved += 1
            self.stats.lemmas += 1
            self._merge(node, proved)
            self.lemma_cuts.add(self.img(proved.left).id)
            self.chain_words[node.id] = self.image[node.id]

    def word_image(self, node: Node) -> Node:
        """The right node ``node`` in the merged DAG with only the chain's words
        (:meth:`word_lemmas`) replaced by their partners: a pair proved only for the values
        the inputs give (a sign read inside the step below) does not enter, so the step
        above still reads the words alone."""
        mapping: dict[int, Node] = {}
        for n in walk([node]):
            if n.id in self.chain_words:
                mapping[n.id] = self.chain_words[n.id]
            elif n.op == "var" or n.is_const:
                mapping[n.id] = self.img(n)
            else:
                mapping[n.id] = make(self.merged, n.op, tuple(mapping[a.id] for a in n.args),
                                     n.width, n.params)
        return mapping[node.id]

    def _live(self) -> set[int]:
        """The right nodes some output or assumption still reads through unmerged nodes."""
        live: set[int] = set()
        outputs = {right.id for _, right in self.pairs}
        stack = [right for _, right in self.pairs] + list(self.assumptions)
        while stack:
            node = stack.pop()
            if node.id in live:
                continue
            live.add(node.id)
            if node.id in self.matched and node.id not in outputs:
                continue
            stack.extend(node.args)
        return live

    def sweep(self) -> None:
        """Propose, prove and merge every right node, bottom-up."""
        budget = self.settings.budget
        live = self._live() if self.matched else None
        for node in self.right_only:
            if (live is not None and node.id not in live) or node.id in self.matched:
                continue
            now = time.monotonic()
            if (budget is not None and now - self.started > budget) or \
                    (self.stop_at is not None and now > self.stop_at):
                self.img(node)
                continue
            proposal = self.propose(node)
            while proposal is not None:
                self.stats.proposed += 1
                incidental = proposal.left is None and node.id not in self.selectors
                asked = time.monotonic()
                verdict, words = self.decide(proposal, None if incidental
                                             else self.settings.cone_timeout)
                if DEBUG and os.environ.get("TCSPEC_ENGINE_DEBUG") == "2":
                    print(f"[engine] pair {self.describe(proposal)} {verdict} "
                          f"{time.monotonic() - asked:.2f}s", flush=True)
                if verdict == PROVED:
                    self.stats.proved += 1
                    self._merge(node, proposal)
                    break
                if verdict == REFUTED and self._confirm(proposal, words):
                    self.stats.refined += 1
                    self.sim.add(words)
                    self.stats.samples = self.sim.count
                    self._index = None
                    proposal = self.propose(node)
                    continue
                if verdict == REFUTED and not self.loose:
                    raise AssertionError(f"a model of the merged DAG does not separate "
                                         f"{self.describe(proposal)} on the real one")
                if self.lemma is not None and self._lemma_candidate(proposal) and \
                        self.lemma(self, proposal, False):
                    self.stats.proved += 1
                    self.stats.lemmas += 1
                    self._merge(node, proposal)
                    self.lemma_cuts.add(self.img(proposal.left).id)
                    break
                self.stats.undecided += 1
                self.undecided.append(proposal)
                if not self.first_undecided:
                    self.first_undecided = self.describe(proposal)
                break
            if node.id not in self.matched:
                self.image[node.id] = self._rebuilt(node)

    def _merge(self, node: Node, proposal: _Proposal) -> None:
        self.merges[node.id] = proposal
        if proposal.left is None:
            self.image[node.id] = self._constant(node, proposal.value)
            return
        left = self.img(proposal.left)
        self.image[node.id] = self._related(left, proposal.relation, node.width)
        declared = self._declared.get(proposal.relation)
        if declared is not None and declared.classes is not None:
            self.image[node.id] = self._loose_member(node, declared)
        self.reps.add(left.id)
        if proposal.relation == "sext" and node.width is not None and left.width is not None \
                and node.width < left.width and left.id not in self.fits \
                and fits_in(left, node.width, self._bounded):
            self.fits[left.id] = node.width
        if proposal.relation == "neg" and left.width is not None and left.width > 1 \
                and left.id not in self.fits and fits_in(left, left.width - 1, self._bounded):
            self.fits[left.id] = left.width - 1
        self.matched.add(node.id)

    def lemma_pair(self, p: _Proposal) -> tuple[Node, Node]:
        """The two merged nodes a lemma for ``p`` proves equal: the left image with the
        relation applied (a loose one: its class representative) and the right node over
        its arguments' images (a loose relation: its representative too)."""
        assert p.left is not None
        left, right = self.img(p.left), self._rebuilt(p.right)
        declared = self._declared.get(p.relation)
        if declared is None:
            return left, right
        left = self._related(left, p.relation, p.right.width)
        if declared.classes is not None:
            right = declared.classes.canon(self.merged, BV(self.merged, right,
                                                           declared.width)).node
        return left, right

    def _lemma_candidate(self, p: _Proposal) -> bool:
        """Whether an undecided pair is a word worth deciding as a lemma: an ``equal``
        pair whose left side is a special-value ``ite`` chain (:meth:`_splits`) at least
        16 bits wide, such as the D word of one step that the next step reads as C."""
        return p.relation == "equal" and p.left is not None and _is_word(p.left) and \
            self._splits(p.left)

    def outputs(self, replay: Replay | None, timeout: float | None
                ) -> EquivalenceResult | None:
        """Each output pair after the sweep: ``proved``, ``refuted`` (replayed), or None
        when some pair was not decided within ``timeout`` (None: local queries only;
        :attr:`open_pair` names the pair)."""
        for left, right in self.pairs:
            p = _Proposal(left, right, "equal")
            for _ in range(MAX_LOOSE_DROPS + 1):
                verdict, words = self.decide(p, timeout)
                if verdict != REFUTED:
                    break
                refuted = self._refuted(words, replay)
                if refuted is not None:
                    return refuted
                if not self.loose:
                    raise AssertionError(f"a model of the outputs' query does not separate "
                                         f"them on the real DAG: {words}")
                wrong = self._wrong_loose(words)
                if DEBUG:
                    print(f"[engine] a model of the outputs moves with {len(wrong)} of "
                          f"{len(self.loose_vars)} loose merges", flush=True)
                verdict = UNKNOWN
                if not wrong:
                    break
                self._drop_loose(wrong)
            if verdict == PROVED:
                continue
            self.open_pair = (left, right)
            return None
        return self._result(PROVED)

    @staticmethod
    def _splits(node: Node) -> bool:
        return node.op == "ite" and not any(n.op == "mul" for n in walk([node.args[0]]))

    def splittable(self) -> bool:
        """Whether some output pair's left side is an ``ite`` :meth:`cases` can split."""
        return any(self._splits(left) for left, _ in self.pairs)

    def cases(self, carry: Sequence[Node] = ()) -> list[Case]:
        """A case split of the open output pair on the selectors of its left side's ``ite``
        chain (``ite(c1, t1, ite(c2, t2, e))``: cases ``c1``; ``!c1 & c2``; ``!c1 & !c2``),
        as far down as the selectors read no product (the special-value classes, not the
        arithmetic),
        each with those selectors replaced by their constants in both merged DAGs and the
        case as a hypothesis; empty when the left side is no ``ite``."""
        left = self.pairs[0][0]
        if not self._splits(left):
            return []
        return self._chain_cases(_special_selectors(self.img(left)),
                                 carry=[self.img(c) for c in carry])

    def found_split(self) -> Node | None:
        """A condition to split on that the sweep found: the selector of the first
        undecided pair's ``ite`` (left side first) that is still open in the merged DAG.
        Two sides that choose between the same two sums in different places (``ite`` of
        sums against a sum of ``ite``s, or a shared stand-in chosen under a condition) are
        equal case by case, where each case's selector is a constant."""
        for p in self.undecided:
            for node in (p.left, p.right):
                if node is not None and node.op == "ite" and \
                        not self.img(node.args[0]).is_const:
                    return node.args[0]
        return None

    def finite_mask(self) -> np.ndarray | None:
        """The samples in the last case of :meth:`cases` (every special-value selector of
        the left output's ``ite`` chain false); None when the output does not split."""
        left = self.pairs[0][0]
        if not self._splits(left):
            return None
        mask = np.ones(self.sim.count, dtype=bool)
        for selector in _special_selectors(left):
            mask &= ~np.asarray(self.sim.values[selector.id], dtype=bool)
        return mask

    def twin_candidates(self, condition: Node, mask: np.ndarray | None = None
                        ) -> list[tuple[Node, bool]]:
        """Left booleans that agree with the hint ``condition`` (``False``) or with its
        negation (``True``) on every sample, ``ite`` selectors first: the left side's own
        test of the same case (the spec's "C dominates" beside the rule book's "C sets
        R"), which the split then fixes too, so that its dead branch goes."""
        values = Simulation([condition], self.sim.samples).values[condition.id]
        if mask is None:
            mask = np.ones(len(values), dtype=bool)
        values = values[mask]
        if not len(values) or bool(values.all()) or not bool(values.any()):
            return []
        selectors = {n.args[0].id for n in self.left_nodes if n.op == "ite"}
        found = []
        for node in self.left_nodes:
            if node.width is not None or node.is_const or node.op == "var":
                continue
            v = self.sim.values[node.id][mask]
            if np.array_equal(v, values):
                found.append((node.id not in selectors, node.id, node, False))
            elif np.array_equal(v, ~values):
                found.append((node.id not in selectors, node.id, node, True))
        found.sort(key=lambda t: t[:2])
        return [(node, negated) for _, _, node, negated in found[:MAX_TWINS]]

    def hint_cases(self, condition: Node, carry: Sequence[Node] = (),
                   twins: Sequence[tuple[Node, bool]] = ()) -> list[Case]:
        """The two cases ``!condition`` and ``condition`` of a caller's hint (a node of
        either side, e.g. the rule book's "some term is nonzero", whose false case is the
        trivial one: it goes first, so a row that runs out of time stops in a case that
        matters), each with the hint and its proved ``twins`` (left nodes, negated or not)
        replaced by their constants in both merged DAGs and the case as a hypothesis."""
        return self._chain_cases([self.img(condition)], both=True,
                                 carry=[self.img(c) for c in carry],
                                 twins=[(self.img(t), negated) for t, negated in twins])

    def _chain_cases(self, conditions: list[Node], both: bool = False,
                     carry: Sequence[Node] = (),
                     twins: Sequence[tuple[Node, bool]] = ()) -> list[Case]:
        if not conditions:
            return []
        images = [(self.img(left), self.img(right)) for left, right in self.pairs]
        roots = [n for pair in images for n in pair]
        table = TraceOps()
        assumptions = self._assumption_images()
        base = rebuild([*roots, *assumptions, *conditions, *(t for t, _ in twins)], table, {})
        merged_labels: dict[int, str] = {}
        for original in self.left_nodes:
            label = self.labels.get(original.id)
            image = self.image.get(original.id)
            if label and image is not None:
                merged_labels.setdefault(image.id, label)
        labels = {base[old].id: label for old, label in merged_labels.items() if old in base}
        found = []
        chains = [[(c, False) for c in conditions[:count]]
                  + ([(conditions[count], True)] if count < len(conditions) else [])
                  for count in range(len(conditions) + 1)]
        if both:
            chains = [[(c, value) for c in conditions] for value in (False, True)]
        for literals in chains:
            substitute = {c.id: table.p_bool_const(value) for c, value in literals}
            if both and twins:
                substitute.update({t.id: table.p_bool_const(literals[0][1] != negated)
                                   for t, negated in twins})
            mapping = rebuild([*roots, *carry], table, substitute)
            hypothesis = [base[a.id] for a in assumptions] + [
                base[c.id] if value else table.p_bnot(base[c.id]) for c, value in literals]
            name = " & ".join(("" if value else "!") + self._label(c).split(" (")[0]
                              for c, value in literals)
            labels_here = dict(labels)
            for old, new in mapping.items():
                if old in merged_labels:
                    labels_here.setdefault(new.id, merged_labels[old])
            found.append(Case(name, [(mapping[x.id], mapping[y.id]) for x, y in images],
                              hypothesis,
                              labels_here, [mapping[c.id] for c in carry]))
        return found

    def _refuted(self, words: dict[str, int], replay: Replay | None
                 ) -> EquivalenceResult | None:
        values = evaluate_inputs([n for p in self.pairs for n in p] + self.assumptions, words)
        if not all(values[a.id] for a in self.assumptions):
            return None
        traced = [(int(values[left.id]), int(values[right.id])) for left, right in self.pairs]
        if all(a == b for a, b in traced):
            return None
        replayed = list(replay(words)) if replay is not None else traced
        if replayed != traced and self.loose:
            return None
        if replayed != traced:
            raise AssertionError(f"the traced DAGs give {traced} at {words}, the executable "
                                 f"sides {replayed}")
        return self._result(REFUTED, words=words, outputs=replayed)

    def _result(self, result: str, **extra: Any) -> EquivalenceResult:
        self.stats.cache_hits = self.stats.cache_hits
        return EquivalenceResult(result, time.monotonic() - self.started, self.stats, **extra)

    def close(self) -> None:
        if self._own_worker:
            self.worker.close()


_CLASSES_CHECKED: set[tuple[str, int, Any]] = set()

_LOOSE_NAMES = itertools.count()
"""Loose variables are numbered once per process: node ids repeat across the DAGs a case
or a lemma rebuilds, and a parent's loose variable is an input of its cases."""


def check_classes(relation: WordRelation, worker: SolverWorker, solver: str) -> None:
    """Raise ``ValueError`` unless ``choose(canon(w), free_of(w)) == w`` for every word
    ``w`` of a loose relation (one solver query per relation and process): the fact that
    makes a loose merge an over-approximation (:mod:`.relations`)."""
    classes = relation.classes
    key = (relation.name, relation.width, classes)
    if classes is None or key in _CLASSES_CHECKED:
        return
    ops = TraceOps()
    w = ops.variable("w", relation.width)
    picked = classes.choose(ops, classes.canon(ops, w), classes.free_of(ops, w))
    answer = worker.solve(query_script([ops.ne(picked, w).node]), solver=solver, timeout=30)
    if not answer.unsat:
        raise ValueError(f"the loose relation {relation.name}'s classes do not pick every "
                         f"word back ({answer.status})")
    _CLASSES_CHECKED.add(key)


def _normal_forms_equal(x: Node, y: Node, relation: str, bounder: Bounder | None = None
                        ) -> bool:
    """Whether ``relation(x) == y`` by a normal form of :mod:`.sums` (no solver query but
    ``bounder``'s)."""
    if relation in BIT_RELATIONS:
        return False
    return equal_sums(x, y, relation, bounder) or (relation == "equal" and equal_extrema(x, y))


def _apply_relation_int(value: int, from_width: int, relation: str, width: int) -> int:
    """``relation`` applied to an int of ``from_width`` bits, as a ``width``-bit word."""
    mask = (1 << width) - 1
    signed = value - (1 << from_width) if value >> (from_width - 1) else value
    if relation == "neg":
        return -signed & mask
    if relation == "sext":
        return signed & mask
    return value & mask


def _meeting(roots: Sequence[Node], assumptions: Sequence[Node],
             samples: Mapping[str, Sequence[int]]) -> dict[str, list[int]]:
    """The samples on which every assumption holds."""
    columns = {k: list(v) for k, v in samples.items()}
    if not assumptions or not columns:
        return columns
    sim = Simulation(assumptions, columns)
    count = len(next(iter(columns.values())))
    keep = [i for i in range(count) if all(sim.value(a, i) for a in assumptions)]
    return {k: [v[i] for i in keep] for k, v in columns.items()}


def prove_equivalent(pairs: Sequence[tuple[BV | Bool, BV | Bool]], *,
                     samples: Mapping[str, Sequence[int]],
                     assumptions: Sequence[Bool] = (), settings: EngineSettings | None = None,
                     replay: Replay | None = None, cache: ProofCache | None = None,
                     labels: Mapping[int, str] | None = None,
                     worker: SolverWorker | None = None,
                     splits: Sequence[Bool] = ()) -> EquivalenceResult:
    """Decide whether every (left, right) pair of traced values is equal for every input
    that meets ``assumptions`` (module docstring). ``samples`` are input words to simulate
    (input name -> one word per sample); ``replay`` runs the two executable sides on a
    counterexample; ``labels`` names nodes in the report; ``splits`` are hints: boolean
    nodes to split cases on first (each case proved, merged and cut on its own)."""
    for left, right in pairs:
        if not isinstance(left.ops, TraceOps) or left.ops is not right.ops:
            raise ValueError("both sides must be traced into one TraceOps")
        if left.width != right.width:
            raise ValueError(f"an output pair has widths {left.width} and {right.width}")
    settings = settings or EngineSettings()
    own = worker is None
    worker = worker or SolverWorker()
    stats = EngineStats()
    started = time.monotonic()
    try:
        result = _prove([(left.node, right.node) for left, right in pairs],
                        [a.node for a in assumptions], samples, settings,
                        cache if cache is not None else ProofCache(), dict(labels or {}),
                        worker, replay, stats, 0, splits=[s.node for s in splits],
                        stop_at=None if settings.row_budget is None
                        else started + settings.row_budget)
    finally:
        if own:
            worker.close()
    result.seconds = time.monotonic() - started
    result.stats = stats
    return result


def _prove(pairs: list[tuple[Node, Node]], assumptions: list[Node],
           samples: Mapping[str, Sequence[int]], settings: EngineSettings, cache: ProofCache,
           labels: dict[int, str], worker: SolverWorker, replay: Replay | None,
           stats: EngineStats, depth: int, case: str = "",
           splits: Sequence[Node] = (), stop_at: float | None = None,
           found: int = 0, lemmas: bool = True) -> EquivalenceResult:
    sweep = Sweep(pairs, assumptions, samples, settings, cache, labels, worker)
    sweep.case = case
    sweep.stop_at = stop_at
    if lemmas:
        sweep.lemma = lambda inner, p, chain: _lemma(inner, p, settings, cache, worker, stats,
                                                     depth, stop_at, chain)
    sweep.stats = stats
    stats.nodes_left = max(stats.nodes_left, sweep.stats_nodes[0])
    stats.nodes_right = max(stats.nodes_right, sweep.stats_nodes[1])
    stats.samples = max(stats.samples, sweep.sim.count)
    early = _early_refutation(sweep, replay)
    if early is not None:
        return early
    where = f" (case {case})" if case else ""
    if settings.merge_first > 0 and depth == 0 and not case and not splits:
        now = time.monotonic()
        share = settings.merge_first * (settings.row_budget or settings.output_timeout)
        until = now + share if stop_at is None else min(stop_at, now + share)
        first = _prove(pairs, assumptions, samples, settings, cache, labels, worker, replay,
                       stats, MAX_DEPTH, "", (), until, MAX_FOUND_SPLITS, False)
        if DEBUG:
            print(f"[engine] merge first: {first.result} in {time.monotonic() - now:.1f}s",
                  flush=True)
        if first.result != UNKNOWN:
            return first
    specials_first = False
    if splits:
        twins = _twins(sweep, splits[0], settings, cache, worker, stats, depth, stop_at) \
            if lemmas else []
        mask = sweep.finite_mask() if lemmas and not twins and depth < MAX_DEPTH else None
        specials_first = mask is not None and bool(sweep.twin_candidates(splits[0], mask))
        if DEBUG:
            print(f"[engine] hint {sweep._label(splits[0])} (case {case or '-'}): "
                  f"{len(twins)} twins, specials first: {specials_first}", flush=True)
        cases = sweep.cases(splits) if specials_first else \
            sweep.hint_cases(splits[0], splits[1:], twins)
    else:
        cases = sweep.cases() if depth < MAX_DEPTH else []
    for sub in cases:
        if stop_at is not None and time.monotonic() > stop_at:
            return sweep._result(UNKNOWN, stopped=f"the run's {settings.row_budget:g}s were "
                                 f"spent before case {sub.name}{where}")
        stats.cases += 1
        name = f"{case} & {sub.name}" if case else sub.name
        hinted = splits and not specials_first
        result = _prove(sub.pairs, sub.assumptions, sweep.child_samples(), settings, cache,
                        sub.labels, worker, replay, stats, depth + (0 if hinted else 1),
                        name, sub.carried if splits else (), stop_at, found, lemmas)
        if result.result != PROVED:
            return result
    if cases:
        return sweep._result(PROVED)
    if settings.quick_output > 0:
        quick = sweep.outputs(replay, settings.quick_output)
        if quick is not None:
            return quick
        sweep.image.clear()
        sweep._twins = None
    t0 = time.monotonic()
    sweep.structural()
    sweep.word_lemmas()
    if lemmas and sweep.chain_words:
        now = time.monotonic()
        until = None if stop_at is None else now + max(0.0, stop_at - now) / LEMMA_SHARE
        if all(_cut_lemma(sweep, sweep.img(left), sweep.word_image(right), settings, cache,
                          worker, stats, depth,
                          f"output {sweep.describe(_Proposal(left, right, 'equal'))}{where}",
                          until)
               for left, right in sweep.pairs):
            return sweep._result(PROVED)
    sweep.sweep()
    if DEBUG:
        print(f"[engine] case {case or '-'}: {len(sweep.right_only)} right nodes, "
              f"{time.monotonic() - t0:.1f}s sweep; {stats.summary()}", flush=True)
        loose = [n for n in sweep.right_only if n.id not in sweep.matched
                 and not n.is_const and n.op != "var"]
        for p in sweep.undecided[:12]:
            print(f"[engine] undecided: {sweep.describe(p)}", flush=True)
        live = sweep._live()
        frontier = [n for n in loose if n.id in live and all(
            a.id in sweep.matched or a.is_const or a.op == "var" for a in n.args)]
        print("[engine] unmatched frontier:", ", ".join(
            f"{n.id}:{n.op}/{n.width}({','.join(str(a.id) for a in n.args)})"
            for n in frontier[:8]), flush=True)
        print("[engine] unmatched right nodes (top):", ", ".join(
            f"{n.id}:{n.op}/{n.width}{' const' if sweep.sim.constant(n) else ''}"
            for n in loose[-25:]), flush=True)
    timeout = settings.output_timeout
    if stop_at is not None:
        timeout = min(timeout, max(MIN_OUTPUT, stop_at - time.monotonic()))
    result = sweep.outputs(replay, timeout)
    if result is not None:
        return result
    condition = sweep.found_split() if found < MAX_FOUND_SPLITS else None
    if condition is not None and (stop_at is None or time.monotonic() < stop_at):
        found_cases = sweep.hint_cases(condition)
        stats.splits_found.append(found_cases[0].name)
        for sub in found_cases:
            if stop_at is not None and time.monotonic() > stop_at:
                return sweep._result(UNKNOWN, stopped=f"the run's {settings.row_budget:g}s "
                                     f"were spent before case {sub.name}{where}")
            stats.cases += 1
            name = f"{case} & {sub.name}" if case else sub.name
            result = _prove(sub.pairs, sub.assumptions, sweep.child_samples(), settings, cache,
                            sub.labels, worker, replay, stats, depth, name, (), stop_at,
                            found + 1, lemmas)
            if result.result != PROVED:
                return result
        return sweep._result(PROVED)
    left, right = sweep.open_pair
    stopped = sweep.first_undecided or sweep.describe(_Proposal(left, right, "equal"))
    return sweep._result(UNKNOWN, stopped=f"the outputs{where} were not decided within "
                         f"{timeout:g}s; first undecided pair: {stopped}")


def _lemma(sweep: Sweep, p: _Proposal, settings: EngineSettings, cache: ProofCache,
           worker: SolverWorker, stats: EngineStats, depth: int,
           stop_at: float | None, chain: bool = False) -> bool:
    """Decide the undecided pair ``p`` as an output of its own: its two merged images
    (every pair below it already merged) under the sweep's assumptions, with the output's
    case split on its left side's special-value chain, in at most 1/:data:`LEMMA_SHARE` of
    the budget left. A pair proved so is merged like any other (the D word of one step
    that the next step reads as C: the next step then sees one C). No lemma inside a
    lemma; a lemma that is not proved leaves the pair undecided. A ``chain`` step
    (:meth:`Sweep.word_lemmas`) is not counted against :data:`MAX_LEMMAS`."""
    if (stats.lemmas >= MAX_LEMMAS and not chain) or p.left is None:
        return False
    now = time.monotonic()
    if stop_at is not None:
        if now >= stop_at:
            return False
        stop_at = now + (stop_at - now) / LEMMA_SHARE
    left, right = sweep.lemma_pair(p)
    name = f"lemma {sweep.describe(p)}"
    if sweep.case:
        name = f"{sweep.case} & {name}"
    if chain and sweep.chain_until is not None:
        stop_at = min(stop_at, sweep.chain_until) if stop_at is not None else sweep.chain_until
    if _cut_lemma(sweep, left, right, settings, cache, worker, stats, depth, name, stop_at,
                  1 if chain else 2):
        return True
    if chain and any(n.id in sweep.lemma_cuts for n in walk([left, right])):
        return False
    result = _prove([(left, right)], sweep._assumption_images(), sweep.child_samples(),
                    settings, cache, {}, worker, None, stats, depth, name, (), stop_at,
                    MAX_FOUND_SPLITS, lemmas=False)
    if DEBUG:
        print(f"[engine] {name}: {result.result} in {time.monotonic() - now:.1f}s", flush=True)
    return result.result == PROVED


def _special_selectors(root: Node) -> list[Node]:
    """The selectors of ``root``'s ``ite`` chain (``ite(c1, t1, ite(c2, t2, e))``), at most
    :data:`MAX_SPLIT`, as far down as they read no product: the special-value classes."""
    selectors: list[Node] = []
    node = root
    while node.op == "ite" and len(selectors) < MAX_SPLIT and \
            not any(n.op == "mul" for n in walk([node.args[0]])):
        selectors.append(node.args[0])
        node = node.args[2]
    return selectors


def _twins(sweep: Sweep, condition: Node, settings: EngineSettings, cache: ProofCache,
           worker: SolverWorker, stats: EngineStats, depth: int, stop_at: float | None
           ) -> list[tuple[Node, bool]]:
    """The left twins of a hint (:meth:`Sweep.twin_candidates`) proved equal to it (or to
    its negation) under the sweep's assumptions, each by an engine run of its own in at
    most 1/:data:`TWIN_SHARE` of the time left."""
    proved = []
    image = sweep.img(condition)
    for node, negated in sweep.twin_candidates(condition):
        now = time.monotonic()
        until = None if stop_at is None else now + max(0.0, stop_at - now) / TWIN_SHARE
        hint = sweep.merged.p_bnot(image) if negated else image
        name = f"twin {sweep._label(node)} of the hint"
        result = _prove([(sweep.img(node), hint)], sweep._assumption_images(),
                        sweep.child_samples(), settings, cache, {}, worker, None, stats, depth,
                        name, (), until, MAX_FOUND_SPLITS, lemmas=False)
        if DEBUG:
            print(f"[engine] {name}: {result.result} in {time.monotonic() - now:.1f}s",
                  flush=True)
        if result.result == PROVED:
            stats.twins += 1
            proved.append((node, negated))
    return proved


def _is_word(node: Node) -> bool:
    """An ``ite`` of at least :data:`MIN_LEMMA_WIDTH` bits: a step's output word."""
    return node.op == "ite" and (node.width or 0) >= MIN_LEMMA_WIDTH


def _reads_product(node: Node, barrier: set[int]) -> bool:
    """Whether ``node`` reads a ``mul`` other than through a node of ``barrier`` (a
    selector of specials over earlier words, not arithmetic: :meth:`Sweep._splits`)."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n.id in seen or n.id in barrier:
            continue
        seen.add(n.id)
        if n.op == "mul":
            return True
        stack.extend(n.args)
    return False


def _cut_lemma(sweep: Sweep, left: Node, right: Node, settings: EngineSettings,
               cache: ProofCache, worker: SolverWorker, stats: EngineStats, depth: int,
               name: str, stop_at: float | None, share: int = 1) -> bool:
    """Decide a lemma with the words earlier lemmas proved cut to free variables.

    A step that reads the D word of the step before (a pairwise tree's node reading two
    leaves, a chain's FMA reading the last one) is usually equal for *every* value of
    that word, and the query that says so is the step alone. Simulated only on the values
    the inputs give those words, the step's inner nodes look equal where they are not
    (low fraction bits a product never sets), and the sweep spends its time refuting
    them; simulated on free values as well they do not. Cutting over-approximates, so a
    proof holds for the real DAG; anything else falls back to the exact lemma (for which
    1 - 1/``share`` of the time to ``stop_at`` is left)."""
    cut = {n.id for n in walk([left, right]) if n.id in sweep.lemma_cuts}
    if not cut:
        return False
    now = time.monotonic()
    if stop_at is not None:
        stop_at = now + (stop_at - now) / share
    assumptions = sweep._assumption_images()
    roots, cuts = cut_nodes([left, right, *assumptions],
                            lambda n: f"free!{n.id}" if n.id in cut else None)
    samples = _free_samples(sweep.child_samples(), cuts, f"{left.id}:{right.id}")
    result = _prove([(roots[0], roots[1])], roots[2:], samples, settings, cache, {}, worker,
                    None, stats, depth, f"{name} (earlier lemmas cut)", (), stop_at,
                    MAX_FOUND_SPLITS, lemmas=False)
    sweep.lemma_refuted = result.result == REFUTED
    if DEBUG:
        print(f"[engine] {name} with {len(cuts)} cut: {result.result} in "
              f"{time.monotonic() - now:.1f}s {result.words} {result.outputs}", flush=True)
    return result.result == PROVED


def _free_samples(samples: Mapping[str, Sequence[int]], cuts: Mapping[str, Node],
                  seed: str) -> dict[str, list[int]]:
    """The inputs' samples twice over, each cut variable taking the value the inputs give
    its node in the first copy and a random word in the second (every fourth one with
    its top nine bits, a float's sign and exponent, taken from a real value)."""
    columns = {k: list(v) for k, v in samples.items()}
    count = len(next(iter(columns.values()))) if columns else 1
    real = Simulation(list(cuts.values()), columns) if cuts else None
    rng = random.Random(seed)
    out = {k: v + v for k, v in columns.items()}
    for var, node in cuts.items():
        assert real is not None and node.width is not None
        width = node.width
        values = [int(real.value(node, i)) for i in range(count)]
        free = []
        for i in range(count):
            word = rng.getrandbits(width)
            if i % 4 == 0 and width > 9:
                top = values[rng.randrange(count)] >> (width - 9)
                word = (top << (width - 9)) | (word & ((1 << (width - 9)) - 1))
            free.append(word)
        out[var] = values + free
    return out


def _early_refutation(sweep: Sweep, replay: Replay | None) -> EquivalenceResult | None:
    for index in range(sweep.sim.count):
        if any(sweep.sim.value(left, index) != sweep.sim.value(right, index)
               for left, right in sweep.pairs):
            refuted = sweep._refuted(sweep.sim.sample(index), replay)
            if refuted is not None:
                return refuted
    return None
