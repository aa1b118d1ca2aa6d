"""What differs between architectures, by solver (SEMANTICS.md section 12).

Two datapaths with the same operand formats (A, B, C, D; scale format and block) are
compared at one K: a datapath whose K is smaller runs as a chain of its instruction, the
D of one step the C of the next (ARCHITECTURES.md section 0), written over ``ops`` here
(:func:`chained_word`) so that the solver sees the chain. Both chains are traced over the
SAME input variables in one hash-consed DAG; the query asks for an input on which their
words differ (NaN compared by class where a side returns the host's NaN). A model is
decoded, replayed on the scalar backend through the spec and on each datapath's compiled
lowering step by step, and only printed if both replays agree and still differ. Unsat at
full K means the two agree on every input; a solver that does not decide is ``unknown``.

From the pairwise comparisons: the portability table (per format group, the classes of
datapaths proved identical on every input, and one replayed witness per pair of classes)
and the fingerprint suites (a greedy set of witnesses separating every pair of classes
that differ), and :func:`classify_observed`, which names the datapaths consistent with
observed words.
"""

from __future__ import annotations

import gzip
import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcspec.proofs.probes.equivalence import prove_equal
from tcspec.ref.compiled import compiled_model
from tcspec.ref.vectorfiles import existing_file, json_line_problem
from tcspec.smt.progress import Heartbeat
from tcspec.smt.solve import DEFAULT_SOLVER, SolveResult, check_sat
from tcspec.smt.trace import TraceOps
from tcspec.spec.arch import ArchDescriptor
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.candidates import HARDWARE, build_model, get_candidate
from tcspec.spec.catalog import (
    CATALOG,
    AnyDescriptor,
    DotInputs,
    InputSpec,
    chained_dot,
    input_layout,
    inputs_from,
    is_specified,
    lookup,
    output_width,
)
from tcspec.spec.formats import FORMATS, FloatFormat
from tcspec.spec.scalar import SCALAR

OPERAND_ALIASES = {"xf32": "tf32"}
"""Operand formats that read the same words the same way: CDNA3's xf32 is tf32's layout
(an F32 word whose low 13 bits are cleared first; SEMANTICS.md section 11)."""

DEFAULT_TIMEOUT = 60.0
PROGRESS_SECONDS = 10.0
CUT_BUDGET = 30.0
DIFFER, EQUAL, UNKNOWN = "differ", "equal", "unknown"
SAME_TERM, SOLVER, CUT_POINTS = "same term", "solver", "cut points"

Log = Callable[[str], None]


def quiet(_: str) -> None:
    return None


# ------------------------------------------------------------------ sides and formats


@dataclass(frozen=True)
class FormatKey:
    """The operand formats two datapaths must share to be compared."""

    a_format: str
    b_format: str
    c_format: str
    d_format: str
    scale_format: str | None = None
    scale_block: int | None = None

    @property
    def label(self) -> str:
        bits = {f: FORMATS[f].container_bits for f in (self.c_format, self.d_format)}
        parts = [self.a_format, self.b_format, f"c{bits[self.c_format]}",
                 f"d{bits[self.d_format]}"]
        if self.scale_format:
            parts += [self.scale_format, f"block{self.scale_block}"]
        return "-".join(parts)

    def fields(self) -> dict[str, object]:
        return {"a_format": self.a_format, "b_format": self.b_format,
                "c_format": self.c_format, "d_format": self.d_format,
                "scale_format": self.scale_format, "scale_block": self.scale_block}


def comparable(desc: AnyDescriptor) -> str | None:
    """Why ``desc`` cannot be compared across architectures (None: it can)."""
    if not is_specified(desc):
        return "not specified"
    if getattr(desc, "sparse", False):
        return "sparse (its metadata has no counterpart on other architectures)"
    if not isinstance(FORMATS.get(desc.a_format), FloatFormat) or desc.family == "integer":
        return "not a float datapath"
    return None


def format_key(desc: AnyDescriptor) -> FormatKey:
    """A datapath's operand formats (C in the D format where the datapath reads it so)."""
    scale = desc.scale_format if isinstance(desc, ArchDescriptor) else desc.scaling
    return FormatKey(OPERAND_ALIASES.get(desc.a_format, desc.a_format),
                     OPERAND_ALIASES.get(desc.b_format, desc.b_format),
                     getattr(desc, "c_format", desc.d_type), desc.d_type, scale,
                     desc.scale_block if scale else None)


def arch_of(desc: AnyDescriptor) -> str:
    """``sm_70`` ... ``cdna3``; the tcgen05 datapaths are ``sm_100`` (tcgen05)."""
    if isinstance(desc, ArchDescriptor):
        return desc.arch
    return "sm_100 tcgen05"


def nan_by_class(desc: AnyDescriptor) -> bool:
    """Whether the datapath's source returns the host's NaN (compare NaN by class)."""
    return not getattr(desc, "nan_canonical", True)


@dataclass(frozen=True)
class Side:
    """A datapath and the model run on it (``hardware``: its own definition)."""

    datapath: str
    model: str = HARDWARE

    @property
    def desc(self) -> AnyDescriptor:
        return lookup(self.datapath).descriptor

    @property
    def label(self) -> str:
        return self.datapath if self.model == HARDWARE else f"{self.datapath}[{self.model}]"


def side(datapath: str, model: str = HARDWARE) -> Side:
    """A checked side: a catalogued, comparable datapath and a model that applies to it."""
    desc = lookup(datapath).descriptor
    why = comparable(desc)
    if why:
        raise ValueError(f"{desc.name} cannot be compared across architectures: {why}")
    name = get_candidate(model, desc).name
    return Side(desc.name, name)


def common_k(sides: Sequence[Side]) -> int:
    """The K at which ``sides`` are compared: the largest instruction K, every other K
    chained up to it (ValueError when a K does not divide it or a chain cannot run)."""
    k = max(s.desc.k for s in sides)
    for s in sides:
        chain_steps(s.desc, k)
    return k


def chain_steps(desc: AnyDescriptor, k: int) -> int:
    """How many instructions of ``desc`` make a dot product of ``k`` lanes."""
    if k % desc.k:
        raise ValueError(f"{desc.name} (K={desc.k}) cannot be chained to K={k}")
    steps = k // desc.k
    c_format = getattr(desc, "c_format", desc.d_type)
    if steps > 1 and c_format != desc.d_type:
        raise ValueError(f"{desc.name} cannot be chained to K={k}: its D ({desc.d_type}) is "
                         f"not in its C format ({c_format})")
    return steps


def check_pair(first: Side, second: Side, k: int | None = None) -> int:
    """``ValueError`` naming the problem unless the two sides can be compared; their K
    (``k``: at this K instead of their common one)."""
    ka, kb = format_key(first.desc), format_key(second.desc)
    if ka != kb:
        raise ValueError(f"{first.datapath} and {second.datapath} have different operand "
                         f"formats ({ka.label} vs {kb.label}): there is no common input")
    if first == second:
        raise ValueError(f"{first.label} is compared with itself")
    if k is None:
        return common_k([first, second])
    for s in (first, second):
        chain_steps(s.desc, k)
    return k


def chained_word(ops: Ops, s: Side, inputs: DotInputs) -> BV:
    """``s``'s D word on ``len(inputs.a)`` lanes: its instruction over consecutive K slices,
    the D of one step the C of the next (:func:`spec.catalog.chained_dot`)."""
    return chained_dot(ops, s.desc, inputs,
                       build=lambda o, d, i: build_model(o, s.model, d, i))


def layout_at(sides: Sequence[Side], k: int) -> list[InputSpec]:
    """The input words of a comparison at ``k`` lanes (the widest-K side's layout)."""
    widest = max(sides, key=lambda s: s.desc.k).desc
    return input_layout(widest, k)


def compiled_chain(s: Side, layout: Sequence[InputSpec], words: Sequence[int]) -> int:
    """``s``'s D word on concrete words, replayed on its compiled lowering step by step."""
    desc = s.desc
    groups: dict[str, list[int]] = {"a": [], "b": [], "c": [], "scale_a": [], "scale_b": []}
    for spec, word in zip(layout, words, strict=True):
        groups[spec.role].append(word)
    run = compiled_model(s.model, desc)
    k, per = desc.k, desc.scale_count
    acc = groups["c"][0]
    for step in range(len(groups["a"]) // k):
        lanes = slice(step * k, (step + 1) * k)
        scales = slice(step * per, (step + 1) * per)
        acc = run(*groups["a"][lanes], *groups["b"][lanes], acc,
                  *groups["scale_a"][scales], *groups["scale_b"][scales])
    return acc


# ------------------------------------------------------------------ words and queries


def _format(name: str) -> FloatFormat:
    fmt = FORMATS[name]
    assert isinstance(fmt, FloatFormat)
    return fmt


def is_nan_bv(ops: Ops, d_format: str, word: BV) -> Bool:
    """``word`` is a NaN of the IEEE D format."""
    fmt = _format(d_format)
    exp = ops.extract(word, fmt.frac_bits + fmt.exp_bits - 1, fmt.frac_bits)
    frac = ops.extract(word, fmt.frac_bits - 1, 0)
    return ops.and_(ops.eq(exp, fmt.exp_max_field), ops.ne(frac, 0))


def is_nan_int(d_format: str, word: int) -> bool:
    fmt = _format(d_format)
    exp = (word >> fmt.frac_bits) & fmt.exp_max_field
    return exp == fmt.exp_max_field and word & ((1 << fmt.frac_bits) - 1) != 0


def words_differ(d_format: str, x: int, y: int, by_class: bool) -> bool:
    """Two D words differ (NaN by class when ``by_class``)."""
    if x == y:
        return False
    return not (by_class and is_nan_int(d_format, x) and is_nan_int(d_format, y))


def _canonical(ops: Ops, word: BV, container: int, cleared: int) -> Bool:
    kept = ((1 << container) - 1) ^ ((1 << cleared) - 1)
    ignored = ((1 << word.width) - 1) ^ kept
    return ops.eq(ops.bvand(word, ignored), 0) if ignored else ops.true()


def input_terms(ops: Ops, key: FormatKey, inputs: DotInputs) -> list[Bool]:
    """Canonical words only: bits outside each container and tf32/bf16's cleared bits zero."""
    fa, fb, fc = _format(key.a_format), _format(key.b_format), _format(key.c_format)
    terms = [_canonical(ops, w, fa.container_bits, fa.cleared_bits) for w in inputs.a]
    terms += [_canonical(ops, w, fb.container_bits, fb.cleared_bits) for w in inputs.b]
    terms.append(_canonical(ops, inputs.c, fc.container_bits, 0))
    if key.scale_format:
        fs = _format(key.scale_format)
        terms += [_canonical(ops, w, fs.container_bits, 0)
                  for w in [*inputs.scale_a, *inputs.scale_b]]
    return terms


class PairSpace:
    """One query: both chains over the same inputs (``live`` A/B lanes free, others 0)."""

    def __init__(self, first: Side, second: Side, k: int, live: Sequence[int] | None = None
                 ) -> None:
        self.sides = (first, second)
        self.key = format_key(first.desc)
        self.ops = ops = TraceOps()
        self.layout = layout_at(self.sides, k)
        live_set = set(range(k)) if live is None else set(live)
        values = []
        self.constants: dict[str, int] = {}
        for spec in self.layout:
            if spec.role in ("a", "b") and spec.index not in live_set:
                self.constants[spec.name] = 0
                values.append(ops.const(0, spec.width))
            else:
                values.append(ops.variable(spec.name, spec.width))
        self.variables = [v.node for v in values if v.node.op == "var"]
        inputs = inputs_from(self.layout, values)
        self.words = [chained_word(ops, s, inputs) for s in self.sides]
        self.assumptions = input_terms(ops, self.key, inputs)
        self.by_class = any(nan_by_class(s.desc) for s in self.sides)
        differ = ops.ne(*self.words)
        if self.by_class:
            both_nan = ops.and_(*(is_nan_bv(ops, self.key.d_format, w) for w in self.words))
            differ = ops.and_(differ, ops.not_(both_nan))
        self.differ = differ

    @property
    def same_term(self) -> bool:
        return self.words[0].node.id == self.words[1].node.id

    def solve(self, solver: str, timeout: float) -> SolveResult:
        nodes = [t.node for t in [*self.assumptions, self.differ]]
        return check_sat(nodes, self.variables, solver=solver, timeout=timeout)

    def decode(self, model: Mapping[str, int]) -> list[int]:
        return [self.constants.get(s.name, model.get(s.name, 0)) for s in self.layout]


def heartbeat(log: Log, what: str) -> Heartbeat:
    """A heartbeat that logs ``what`` through ``log`` every :data:`PROGRESS_SECONDS`."""
    return Heartbeat(what, PROGRESS_SECONDS, log)


# ------------------------------------------------------------------ one comparison


@dataclass
class Witness:
    """An input on which two sides differ: its words (layout order) and every replayed word.

    ``words`` maps each side's label to its word on the compiled lowering (equal to the
    spec's scalar replay, checked)."""

    layout: list[InputSpec]
    inputs: list[int]
    words: dict[str, int]
    live_lanes: int = 0
    solver: str = ""
    seconds: float = 0.0

    def groups(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {"a": [], "b": [], "c": [], "scale_a": [], "scale_b": []}
        for spec, word in zip(self.layout, self.inputs):
            out[spec.role].append(word)
        return out

    def nonzero(self) -> str:
        shown = [f"{s.name}=0x{w:X}" for s, w in zip(self.layout, self.inputs) if w]
        return " ".join(shown) or "all inputs zero"


def replay(sides: Sequence[Side], layout: Sequence[InputSpec], inputs: Sequence[int]
           ) -> dict[str, int]:
    """Each side's word on concrete inputs: the spec's chain on the scalar backend and the
    compiled lowering step by step, which must agree (RuntimeError otherwise: a bug)."""
    constants = inputs_from(layout, [SCALAR.const(w, s.width) for s, w in zip(layout, inputs)])
    out = {}
    for s in sides:
        spec_word = SCALAR.value(chained_word(SCALAR, s, constants))
        compiled = compiled_chain(s, layout, inputs)
        if spec_word != compiled:
            raise RuntimeError(f"{s.label}: the spec's chain gives 0x{spec_word:X} but the "
                               f"compiled lowering 0x{compiled:X} on {list(inputs)}")
        out[s.label] = compiled
    return out


@dataclass
class Comparison:
    """The verdict on two sides at K: ``differ`` (with a replayed witness), ``equal``
    (unsat at full K, or cut points all proved) or ``unknown``."""

    first: Side
    second: Side
    k: int
    status: str = UNKNOWN
    method: str = ""
    witness: Witness | None = None
    calls: list[tuple[str, SolveResult]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def solver_seconds(self) -> float:
        return sum(r.seconds for _, r in self.calls)

    def text(self) -> str:
        a, b = self.first.label, self.second.label
        calls = f"{len(self.calls)} solver call(s), {self.solver_seconds:.1f}s solving"
        chain = ", ".join(f"{s.label} x{self.k // s.desc.k}" for s in (self.first, self.second)
                          if s.desc.k != self.k)
        at = f"K={self.k}" + (f" (chained: {chain})" if chain else "")
        if self.status == EQUAL:
            return (f"{a} and {b} agree on every input at {at}: unsat ({self.method}; "
                    f"{calls})")
        if self.status == UNKNOWN:
            last = self.calls[-1][1].describe() if self.calls else "no call"
            return f"{a} vs {b} at {at}: unknown, the solver did not decide ({last}; {calls})"
        w = self.witness
        assert w is not None
        digits = output_width(self.first.desc) // 4
        words = ", ".join(f"{label} 0x{word:0{digits}X}" for label, word in w.words.items())
        return (f"{a} and {b} differ at {at} ({self.seconds:.1f}s, {calls}); replayed on both "
                f"compiled lowerings: {words}\n  input ({w.live_lanes} free lanes): "
                f"{w.nonzero()}")


def ladder(sides: Sequence[Side], k: int) -> list[list[int]]:
    """Free A/B lanes of each rung: lanes 0-1 (or, where a side is chained, the first two
    lanes of every step of the shortest instruction), then all ``k`` (only the last rung
    can prove equality)."""
    step = min(s.desc.k for s in sides)
    if step < k:
        rungs = [sorted({lane for start in range(0, k, step) for lane in (start, start + 1)})]
    else:
        rungs = [[0, 1]]
    out = [rung for rung in rungs if len(rung) < k]
    return out + [list(range(k))]


def compare(first: Side, second: Side, *, k: int | None = None,
            solver: str = DEFAULT_SOLVER, timeout: float = DEFAULT_TIMEOUT,
            cut_points: bool = True, log: Log = quiet) -> Comparison:
    """Whether ``first`` and ``second`` differ on some input at their common K, or at ``k``
    (module docstring). ``ValueError`` when they cannot be compared."""
    k = check_pair(first, second, k)
    result = Comparison(first, second, k)
    started = time.monotonic()
    rungs = ladder((first, second), k)
    for index, live in enumerate(rungs):
        space = PairSpace(first, second, k, live)
        full = index == len(rungs) - 1
        if space.same_term and not full:
            continue
        if full and not space.same_term and cut_points:
            with heartbeat(log, f"{first.label} / {second.label} cut points"):
                proof = prove_equal(space.ops, *(w.node for w in space.words),
                                    [t.node for t in space.assumptions], space.variables,
                                    solver=solver, timeout=min(timeout, 10.0),
                                    budget=min(timeout, CUT_BUDGET))
            log(f"{first.label} / {second.label} cut points: "
                + ("proved equal" if proof.proved else f"not proved ({proof.reason})"))
            if proof.proved:
                result.status, result.method = EQUAL, CUT_POINTS
                break
        what = f"{first.label} vs {second.label}, {len(live)} of {k} lanes free"
        with heartbeat(log, what):
            answer = space.solve(solver, timeout)
        result.calls.append((what, answer))
        log(f"{what}: {answer.describe()}")
        if answer.sat:
            inputs = space.decode(answer.model)
            words = replay((first, second), space.layout, inputs)
            if not words_differ(space.key.d_format, *words.values(), space.by_class):
                raise RuntimeError(f"solver model for {what} does not replay: {inputs}")
            result.status = DIFFER
            result.witness = Witness(space.layout, inputs, words, len(live), answer.solver,
                                     answer.seconds)
            break
        if answer.status != "unsat":
            break
        if full:
            result.status = EQUAL
            result.method = SAME_TERM if space.same_term else SOLVER
    result.seconds = time.monotonic() - started
    return result


# ------------------------------------------------------------------ the portability table


@dataclass
class Group:
    """The comparable datapaths of one format key, their classes and the pair verdicts."""

    key: FormatKey
    members: list[str]
    k: int
    excluded: dict[str, str] = field(default_factory=dict)
    classes: list[list[str]] = field(default_factory=list)
    pairs: list[Comparison] = field(default_factory=list)
    seconds: float = 0.0

    def class_of(self, name: str) -> int:
        return next(i for i, c in enumerate(self.classes) if name in c)


def format_groups(names: Iterable[str] | None = None) -> dict[FormatKey, Group]:
    """Catalogued comparable datapaths grouped by format key (groups of two or more)."""
    by_key: dict[FormatKey, list[str]] = {}
    for name in names if names is not None else CATALOG:
        desc = lookup(name).descriptor
        if comparable(desc) is None:
            by_key.setdefault(format_key(desc), []).append(desc.name)
    groups = {}
    for key, members in by_key.items():
        if len(members) < 2:
            continue
        k = max(lookup(m).descriptor.k for m in members)
        group = Group(key, [], k)
        for name in members:
            try:
                chain_steps(lookup(name).descriptor, k)
                group.members.append(name)
            except ValueError as exc:
                group.excluded[name] = str(exc)
        if len(group.members) >= 2:
            groups[key] = group
    return groups


def term_classes(members: Sequence[str], k: int) -> list[list[str]]:
    """Members whose chains at ``k`` are one node of one hash-consed DAG (same term)."""
    sides = [Side(m) for m in members]
    ops = TraceOps()
    layout = layout_at(sides, k)
    inputs = inputs_from(layout, [ops.variable(s.name, s.width) for s in layout])
    classes: dict[int, list[str]] = {}
    for s in sides:
        classes.setdefault(chained_word(ops, s, inputs).node.id, []).append(s.datapath)
    return list(classes.values())


def build_group(group: Group, *, solver: str = DEFAULT_SOLVER,
                timeout: float = DEFAULT_TIMEOUT, log: Log = quiet) -> Group:
    """Classes of ``group`` (same term, then merged where the solver proves equality) and
    one comparison per remaining pair of classes."""
    started = time.monotonic()
    classes = term_classes(group.members, group.k)
    log(f"{group.key.label} (K={group.k}): {len(group.members)} datapaths, "
        f"{len(classes)} distinct terms")
    for cls in classes:
        if len(cls) > 1:
            group.pairs.append(compare(Side(cls[0]), Side(cls[1]), k=group.k,
                                       solver=solver, timeout=timeout, log=log))
    merged: list[list[str]] = []
    for cls in classes:
        for other in merged:
            verdict = compare(Side(other[0]), Side(cls[0]), k=group.k, solver=solver,
                              timeout=timeout, log=log)
            group.pairs.append(verdict)
            if verdict.status == EQUAL:
                other.extend(cls)
                break
        else:
            merged.append(list(cls))
    group.classes = merged
    group.seconds = time.monotonic() - started
    return group


def portability(keys: Sequence[str] | None = None, *, solver: str = DEFAULT_SOLVER,
                timeout: float = DEFAULT_TIMEOUT, log: Log = quiet) -> list[Group]:
    """Every format group (or those whose label is in ``keys``), built by :func:`build_group`."""
    groups = format_groups()
    if keys:
        labels = {g.key.label: g for g in groups.values()}
        unknown = [k for k in keys if k not in labels]
        if unknown:
            raise ValueError(f"no format group {', '.join(unknown)} (known: "
                             f"{', '.join(sorted(labels))})")
        chosen = [labels[k] for k in keys]
    else:
        chosen = list(groups.values())
    return [build_group(g, solver=solver, timeout=timeout, log=log) for g in chosen]


# ------------------------------------------------------------------ fingerprint suites


@dataclass
class Suite:
    """A greedy set of inputs separating every pair of classes of a group that differ."""

    group: Group
    probes: list[tuple[Witness, dict[str, int]]] = field(default_factory=list)
    undecided: list[tuple[int, int]] = field(default_factory=list)

    def separated(self) -> set[tuple[int, int]]:
        return {pair for _, words in self.probes for pair in _pairs_split(self.group, words)}


def _pairs_split(group: Group, words: Mapping[str, int]) -> set[tuple[int, int]]:
    reps = [cls[0] for cls in group.classes]
    out = set()
    for i, j in itertools.combinations(range(len(reps)), 2):
        by_class = nan_by_class(lookup(reps[i]).descriptor) or nan_by_class(
            lookup(reps[j]).descriptor)
        if words_differ(group.key.d_format, words[reps[i]], words[reps[j]], by_class):
            out.add((i, j))
    return out


def _replay_everywhere(group: Group, w: Witness) -> dict[str, int]:
    words = replay([Side(m) for m in group.members], w.layout, w.inputs)
    for cls in group.classes:
        first = words[cls[0]]
        if any(words_differ(group.key.d_format, first, words[m], nan_by_class(
                lookup(m).descriptor) or nan_by_class(lookup(cls[0]).descriptor))
               for m in cls):
            raise RuntimeError(f"class {cls} splits on a witness: {w.inputs}")
    return words


def fingerprint_suite(group: Group, log: Log = quiet) -> Suite:
    """Greedy cover of the class pairs by the group's witnesses, each replayed on every
    member (replays must agree within a class: RuntimeError otherwise)."""
    suite = Suite(group)
    pool = []
    witnesses = [v.witness for v in group.pairs if v.witness is not None]
    with heartbeat(log, f"{group.key.label}: replaying {len(witnesses)} witnesses on "
                   f"{len(group.members)} datapaths"):
        for w in witnesses:
            pool.append((w, _replay_everywhere(group, w)))
    wanted = set(itertools.combinations(range(len(group.classes)), 2))
    left = set(wanted)
    while left:
        best = max(pool, key=lambda p: len(_pairs_split(group, p[1]) & left), default=None)
        gained = _pairs_split(group, best[1]) & left if best else set()
        if not gained:
            break
        suite.probes.append(best)  # type: ignore[arg-type]
        left -= gained
    suite.undecided = sorted(left)
    return suite


# ------------------------------------------------------------------ records and reports


def witness_record(key: FormatKey, k: int, w: Witness, words: Mapping[str, int], name: str,
                   source: str) -> dict[str, object]:
    """An input and every datapath's predicted word, in the architecture line format's
    fields (ref/vectors/fingerprints/README.md)."""
    groups = w.groups()
    digits = FORMATS[key.d_format].container_bits // 4
    return {"name": name, **key.fields(), "k": k, "a": groups["a"], "b": groups["b"],
            "c": groups["c"][0], "scale_a": groups["scale_a"] or None,
            "scale_b": groups["scale_b"] or None, "predicted": dict(words),
            "predicted_hex": {m: f"0x{v:0{digits}X}" for m, v in words.items()},
            "provenance": "ours", "source": source}


def group_record(group: Group, suite: Suite | None = None) -> dict[str, object]:
    """A group's verdicts as data (PORTABILITY.json): classes, every pair, the suite."""
    digits = FORMATS[group.key.d_format].container_bits // 4
    pairs = []
    for v in group.pairs:
        entry: dict[str, object] = {
            "first": v.first.datapath, "second": v.second.datapath, "k": v.k,
            "classes": [group.class_of(v.first.datapath), group.class_of(v.second.datapath)],
            "status": v.status, "method": v.method, "solver_calls": len(v.calls),
            "solver_seconds": round(v.solver_seconds, 2), "seconds": round(v.seconds, 2)}
        if v.witness is not None:
            g = v.witness.groups()
            entry["witness"] = {"a": g["a"], "b": g["b"], "c": g["c"][0],
                                "scale_a": g["scale_a"] or None,
                                "scale_b": g["scale_b"] or None,
                                "nonzero": v.witness.nonzero(),
                                "words": {m: f"0x{x:0{digits}X}"
                                          for m, x in v.witness.words.items()}}
        pairs.append(entry)
    record: dict[str, object] = {
        "formats": group.key.label, **group.key.fields(), "k": group.k,
        "classes": [{"datapaths": c, "arches": sorted({arch_of(lookup(m).descriptor)
                                                       for m in c})}
                    for c in group.classes],
        "excluded": group.excluded, "pairs": pairs, "seconds": round(group.seconds, 1)}
    if suite is not None:
        record["suite"] = {"size": len(suite.probes), "undecided": suite.undecided,
                           "file": f"ref/vectors/fingerprints/{group.key.label}.jsonl"
                           if suite.probes else None}
    return record


def _short(name: str) -> str:
    desc = lookup(name).descriptor
    if isinstance(desc, ArchDescriptor):
        return f"{desc.arch} {desc.instruction} {desc.shape}"
    return f"tcgen05 {name}"


INTRO = ("Per format group (A, B, C, D formats; scale format and block), datapaths are "
         "compared at the largest K of the group, the others chained: the D of one "
         "instruction is the C of the next (SEMANTICS.md section 12; "
         "proofs/probes/portability.py). A **class** is a set of datapaths proved identical "
         "on every input: unsat of the full-K difference query, where `same term` means both "
         "chains are one node of the hash-consed DAG (the solver gets `false`) and `cut "
         "points` that every divergent node pair was proved equal. Between two classes, one "
         "solver witness, replayed on the specification and on both datapaths' compiled "
         "lowerings step by step; words are the D format's hex. NaN is compared by class "
         "where a side returns the host's NaN (FP64, AMD). Every word is a model's "
         "(MMA-Sim's rules off B200, the tcgen05 rows the B200 model), not a hardware "
         "observation.")


def table_markdown(records: Sequence[Mapping[str, Any]], command: str) -> str:
    """PORTABILITY.md from the records of :func:`group_record`."""
    def count(status: str, r: Mapping[str, Any]) -> int:
        return sum(p["status"] == status for p in r["pairs"])

    lines = ["# Portability: which architectures give the same words", "",
             f"Written by `{command}`.", "", INTRO, ""]
    members = sum(len(c["datapaths"]) for r in records for c in r["classes"])
    lines += [f"{len(records)} format groups, {members} "
              f"datapaths, {sum(len(r['classes']) for r in records)} classes; "
              f"{sum(len(r['pairs']) for r in records)} comparisons: "
              f"{sum(count(DIFFER, r) for r in records)} witnesses, "
              f"{sum(count(EQUAL, r) for r in records)} proved equal, "
              f"{sum(count(UNKNOWN, r) for r in records)} unknown.", "",
              "| formats | K | datapaths | classes | differ / equal / unknown | fingerprint "
              "inputs | seconds |", "|---|---|---|---|---|---|---|"]
    for r in records:
        size = r.get("suite", {}).get("size", "-")
        lines.append(f"| {r['formats']} | {r['k']} | "
                     f"{sum(len(c['datapaths']) for c in r['classes'])} | {len(r['classes'])} | "
                     f"{count(DIFFER, r)} / {count(EQUAL, r)} / {count(UNKNOWN, r)} | {size} | "
                     f"{r['seconds']} |")
    listed = {m for r in records for c in r["classes"] for m in c["datapaths"]}
    missing = [m for g in format_groups().values() for m in g.members if m not in listed]
    if missing:
        lines += ["", f"**Not in this table** ({len(missing)} comparable datapaths catalogued "
                  "after the groups were last built; rerun `--formats` on their groups): "
                  + ", ".join(missing) + "."]
    for r in records:
        lines += ["", f"## {r['formats']} (K={r['k']})", ""]
        for index, c in enumerate(r["classes"]):
            methods = sorted({p["method"] for p in r["pairs"] if p["status"] == EQUAL
                              and p["classes"] == [index, index]})
            how = f" (proved identical: {', '.join(methods)})" if len(c["datapaths"]) > 1 \
                else ""
            lines.append(f"- class {index}{how}: "
                         + ", ".join(_short(m) for m in c["datapaths"]))
        for p in r["pairs"]:
            i, j = p["classes"]
            if p["status"] == UNKNOWN:
                lines.append(f"- {i} vs {j}: unknown ({_short(p['first'])} vs "
                             f"{_short(p['second'])}, {p['solver_seconds']}s solving)")
            elif p["status"] == DIFFER:
                w = p["witness"]
                words = ", ".join(f"{_short(m)} {x}" for m, x in w["words"].items())
                lines.append(f"- {i} vs {j}: {words} on `{w['nonzero']}`")
        for m, why in r["excluded"].items():
            lines.append(f"- not compared: {m}: {why}")
        suite = r.get("suite")
        if suite and len(r["classes"]) == 1:
            lines.append("- one class: no input separates these datapaths (proved)")
        elif suite:
            alike = [c for c in r["classes"] if len(c["datapaths"]) > 1]
            lines.append(f"- fingerprint suite: {suite['size']} input(s) in `{suite['file']}` "
                         f"separate all {len(r['classes'])} classes"
                         + (f" except {len(suite['undecided'])} undecided pair(s)"
                            if suite["undecided"] else "")
                         + ("; no input separates the datapaths within a class"
                            if alike else ""))
    return "\n".join(lines) + "\n"


PORTABILITY_FILES = ("PORTABILITY.md", "PORTABILITY.json")


def report_files(groups: Sequence[Group], suites: Sequence[Suite], proofs_dir: Path,
                 fingerprint_dir: Path, command: str) -> dict[Path, str]:
    """The texts of PORTABILITY.md/.json in ``proofs_dir`` and of one fingerprint file per
    group (the command line writes them atomically). Groups already in the JSON and not
    rebuilt now are kept, in catalog order."""
    md, js = (proofs_dir / name for name in PORTABILITY_FILES)
    old: dict[str, Any] = {}
    if js.is_file():
        old = {r["formats"]: r for r in json.loads(js.read_text(encoding="utf-8"))["groups"]}
    for g, s in zip(groups, suites, strict=True):
        old[g.key.label] = group_record(g, s)
    for r in old.values():
        if r.get("suite") and not r["suite"]["size"]:
            r["suite"]["file"] = None
    order = [k.label for k in format_groups()]
    records = sorted(old.values(), key=lambda r: order.index(r["formats"])
                     if r["formats"] in order else len(order))
    texts: dict[Path, str] = {}
    for s in suites:
        if not s.probes:
            continue
        lines = [witness_record(s.group.key, s.group.k, w, words,
                                f"fingerprint:{s.group.key.label}:{i}", command)
                 for i, (w, words) in enumerate(s.probes)]
        texts[fingerprint_dir / f"{s.group.key.label}.jsonl"] = "".join(
            json.dumps(x) + "\n" for x in lines)
    texts[js] = json.dumps({"groups": records}, indent=1) + "\n"
    texts[md] = table_markdown(records, "tcspec probe --portability --report")
    return {md: texts.pop(md), js: texts.pop(js), **texts}


# ------------------------------------------------------------------ classify by observed words


@dataclass
class Observed:
    line: int
    key: FormatKey
    layout: list[InputSpec]
    inputs: list[int]
    expected: int
    name: str | None = None


def _open_lines(path: Path) -> Iterator[tuple[int, str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        yield from enumerate(handle, 1)


def _observed_key(obj: dict[str, Any]) -> tuple[FormatKey, AnyDescriptor | None]:
    if obj.get("datapath"):
        desc = lookup(str(obj["datapath"])).descriptor
        return format_key(desc), desc
    if obj.get("arch") and (obj.get("mmasim_qualifier") or obj.get("instruction")):
        from tcspec.ref.vectorfiles import arch_descriptor

        desc = arch_descriptor(obj)
        return format_key(desc), desc
    try:
        key = FormatKey(*(OPERAND_ALIASES.get(obj[f], obj[f]) if f.endswith("format") and
                          obj[f] else obj[f] for f in ("a_format", "b_format", "c_format",
                                                         "d_format")),
                        obj.get("scale_format"), obj.get("scale_block"))
    except KeyError as exc:
        raise ValueError(f"no {exc.args[0]!r} field (nor a datapath)") from None
    for f in ("a_format", "b_format", "c_format", "d_format", "scale_format"):
        value = getattr(key, f)
        if value is not None and value not in FORMATS:
            raise ValueError(f"unknown format {value!r} in {f}")
    return key, None


def read_observed(path: Path) -> tuple[list[Observed], list[tuple[int, str]]]:
    """Observed lines (inputs, formats, ``expected``) and the bad ones with their problem."""
    good, bad = [], []
    for number, text in _open_lines(path):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            key, desc = _observed_key(obj)
            for f in ("a", "b", "c", "expected"):
                if f not in obj:
                    raise ValueError(f"missing field {f!r}")
            k = len(obj["a"])
            group = format_groups().get(key)
            if group is None:
                raise ValueError(f"no two comparable datapaths read {key.label}")
            shape = desc or min((lookup(m).descriptor for m in group.members),
                                key=lambda d: d.k)
            layout = input_layout(shape, k)
            words = _plain_words(obj, layout)
            width = FORMATS[key.d_format].container_bits
            expected = obj["expected"]
            if isinstance(expected, bool) or not isinstance(expected, int) or not (
                    0 <= expected < 1 << width):
                raise ValueError(f"expected must be a {width}-bit word, got {expected!r}")
            good.append(Observed(number, key, layout, words, expected, obj.get("name")))
        except json.JSONDecodeError as exc:
            bad.append((number, json_line_problem(exc, text)))
        except (ValueError, TypeError) as exc:
            bad.append((number, str(exc)))
    return good, bad


def _plain_words(obj: dict[str, Any], layout: Sequence[InputSpec]) -> list[int]:
    lists = {"a": obj["a"], "b": obj["b"], "c": [obj["c"]], "scale_a": obj.get("scale_a") or [],
             "scale_b": obj.get("scale_b") or []}
    out = []
    for spec in layout:
        values = lists[spec.role]
        if spec.index >= len(values):
            raise ValueError(f"too few {spec.role} words for K={len(obj['a'])}")
        word = values[spec.index]
        if isinstance(word, bool) or not isinstance(word, int) or not 0 <= word < 1 << spec.width:
            raise ValueError(f"{spec.name} must be a {spec.width}-bit word, got {word!r}")
        out.append(word)
    return out


@dataclass
class ArchVerdicts:
    """Per format group: lines, and for each datapath the lines that rule it out."""

    key: FormatKey
    lines: int = 0
    against: dict[str, list[tuple[Observed, int]]] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)

    def consistent(self) -> list[str]:
        return [m for m, bad in self.against.items() if not bad]


def classify_observed(path: str | Path) -> tuple[list[ArchVerdicts], list[tuple[int, str]]]:
    """Each datapath of each observed format group run (chained) on every line."""
    path = existing_file(path, "observed-words file")
    lines, bad = read_observed(path)
    groups = format_groups()
    verdicts: dict[FormatKey, ArchVerdicts] = {}
    for obs in lines:
        v = verdicts.setdefault(obs.key, ArchVerdicts(obs.key))
        v.lines += 1
        k = len([s for s in obs.layout if s.role == "a"])
        for member in groups[obs.key].members:
            desc = lookup(member).descriptor
            v.against.setdefault(member, [])
            try:
                chain_steps(desc, k)
            except ValueError:
                v.skipped[member] = v.skipped.get(member, 0) + 1
                continue
            word = compiled_chain(Side(member), obs.layout, obs.inputs)
            if words_differ(obs.key.d_format, word, obs.expected, nan_by_class(desc)):
                v.against[member].append((obs, word))
    return list(verdicts.values()), bad


def classification_text(verdicts: Sequence[ArchVerdicts], bad: Sequence[tuple[int, str]]
                        ) -> str:
    lines = []
    for v in verdicts:
        digits = FORMATS[v.key.d_format].container_bits // 4
        consistent = v.consistent()
        lines.append(f"{v.key.label}: {v.lines} observed line(s)")
        lines.append("  consistent: " + (", ".join(
            f"{m} ({arch_of(lookup(m).descriptor)})" for m in consistent) or "none"))
        for member, against in v.against.items():
            if against:
                obs, word = against[0]
                label = f"line {obs.line}" + (f" ({obs.name})" if obs.name else "")
                more = f" ({len(against)} lines disagree)" if len(against) > 1 else ""
                lines.append(f"  ruled out: {member} by {label}: observed "
                             f"0x{obs.expected:0{digits}X}, model 0x{word:0{digits}X}{more}")
        for member, count in v.skipped.items():
            lines.append(f"  not applicable: {member} ({count} line(s) of a K it cannot "
                         "chain to)")
    arches = sorted({arch_of(lookup(m).descriptor) for v in verdicts for m in v.consistent()})
    lines.append("architectures with a datapath consistent with every line: "
                 + (", ".join(arches) or "none"))
    for number, problem in bad[:10]:
        lines.append(f"malformed line {number}: {problem}")
    return "\n".join(lines)
