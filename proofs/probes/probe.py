"""Discriminating probes: solver-made inputs on which two models of one datapath differ.

Both models (SEMANTICS.md section 7, :mod:`spec.candidates`) are traced over
the SAME input variables (``input_layout`` order) in one :class:`TraceOps`;
the query asserts that their result words differ, plus the constraints of a
:class:`Constraints` value. A model the solver returns is decoded into
input words and replayed on the scalar backend for every model; only probes
that truly disagree there are returned. No distinguishing input under the
constraints is *equivalence under those constraints* (with the solver's
time); a solver that does not decide is ``unknown``.

Search ladder: a query first leaves only a few lanes free (the others are
the constant 0, so the tracer folds them away) and widens to 2, 8, 32 and
all K lanes; only the full-K query can prove equivalence. Probe words are
canonical: bits outside a format's container and the cleared fraction bits
of tf32/bf16 are zero, so a CUDA harness sees exactly the decoded value.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from tcspec.proofs.probes.equivalence import CutProof, prove_equal
from tcspec.smt.solve import DEFAULT_SOLVER, SolveResult, check_sat
from tcspec.smt.trace import TraceOps
from tcspec.spec.accumulate import masked_max
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.candidates import Candidate, get_candidate
from tcspec.spec.catalog import (
    DotInputs,
    compact_sparse,
    input_layout,
    inputs_from,
    is_specified,
    metadata_legal,
)
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import EXP_WIDTH, FORMATS, FloatFormat
from tcspec.spec.scalar import SCALAR
from tcspec.spec.specials import Operands, decode_operands

SHAPES = ("one-lane", "c-only", "cancel")
C_CHOICES = ("zero", "nonzero")
CANCEL_LANES = (0, 1)
LADDER = (2, 8, 32)
DEFAULT_PROBE_TIMEOUT = 60.0
LEMMA_TIMEOUT = 10.0
CUT_BUDGET = 60.0
"""Seconds one cut-point proof may spend on its lemmas in all."""

FOUND, EQUIVALENT, UNKNOWN = "found", "equivalent", "unknown"

Log = Callable[[str], None]


def quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class Constraints:
    """What a probe must satisfy besides making the models differ (all optional).

    - ``finite``: no Inf or NaN among A, B, C and the scale bytes;
    - ``active_lanes``: at most this many lanes with a nonzero product
      (a lane is active when neither A nor B decodes to zero);
    - ``c``: ``"zero"`` or ``"nonzero"`` (C decoded in D's format);
    - ``exp_range``: every nonzero A, B and C has its raw exponent in ``[lo, hi]``;
    - ``shape``: ``one-lane`` (exactly one active lane), ``c-only`` (no active
      lane), ``cancel`` (lanes 0 and 1 have exactly opposite nonzero products,
      every other nonzero product and C have smaller raw exponents);
    - ``fixed``: input words held constant (``scale_a0``, ``meta0``, ...);
    - ``spread``: nonzero A, B and C raw exponents lie within this distance.
    """

    finite: bool = False
    active_lanes: int | None = None
    c: str | None = None
    exp_range: tuple[int, int] | None = None
    shape: str | None = None
    fixed: tuple[tuple[str, int], ...] = ()
    spread: int | None = None

    def describe(self) -> dict[str, object]:
        """The constraints that are set, for a probe line's provenance."""
        out: dict[str, object] = {}
        for name in ("finite", "active_lanes", "c", "exp_range", "shape", "spread"):
            value = getattr(self, name)
            if value is not None and value is not False:
                out[name] = list(value) if isinstance(value, tuple) else value
        if self.fixed:
            out["fixed"] = {name: word for name, word in self.fixed}
        return out

    def under(self) -> str:
        """`` under NAME=VALUE, ...`` naming every set constraint (empty when none): a
        verdict reached under constraints holds only under them, so it must say so."""
        parts = []
        for name, value in self.describe().items():
            if value is True:
                parts.append(name)
            elif isinstance(value, dict):
                parts += [f"{key}=0x{word:X}" for key, word in value.items()]
            elif isinstance(value, list):
                parts.append(f"{name}={':'.join(map(str, value))}")
            else:
                parts.append(f"{name}={value}")
        return f" under {', '.join(parts)}" if parts else ""


def check_constraints(desc: Descriptor, constraints: Constraints) -> None:
    """Refuse constraints that are malformed or contradict each other on ``desc`` (ValueError)."""
    if not is_specified(desc) or desc.family == "integer":
        raise ValueError(f"probes need a float datapath; {desc.name} is not one")
    k = desc.k
    n = constraints.active_lanes
    if n is not None and not 0 <= n <= k:
        raise ValueError(f"--active-lanes must be between 0 and K={k} for {desc.name}, got {n}")
    if constraints.c is not None and constraints.c not in C_CHOICES:
        raise ValueError(f"--c must be one of {', '.join(C_CHOICES)}, got {constraints.c!r}")
    shape = constraints.shape
    if shape is not None and shape not in SHAPES:
        raise ValueError(f"--shape must be one of {', '.join(SHAPES)}, got {shape!r}")
    needed = {"one-lane": 1, "cancel": 2}.get(shape or "", 0)
    if n is not None and n < needed:
        raise ValueError(f"--shape {shape} needs at least {needed} active lanes, "
                         f"but --active-lanes is {n}")
    if constraints.exp_range is not None:
        lo, hi = constraints.exp_range
        if lo > hi:
            raise ValueError(f"--exp-range {lo}:{hi} is empty (LO > HI)")
        for fmt in _formats(desc)[:2]:
            if hi < fmt.min_raw or lo > fmt.max_raw:
                raise ValueError(f"--exp-range {lo}:{hi} misses every finite {fmt.name} raw "
                                 f"exponent ({fmt.min_raw}..{fmt.max_raw})")
    names = {spec.name: spec for spec in input_layout(desc)}
    for name, word in constraints.fixed:
        if name not in names:
            raise ValueError(f"{desc.name} has no input {name!r} to fix")
        if not 0 <= word < (1 << names[name].width):
            raise ValueError(f"fixed {name}={word:#x} does not fit in {names[name].width} bits")


def fixed_inputs(desc: Descriptor, scale_a: Sequence[int] | None = None,
                 scale_b: Sequence[int] | None = None,
                 metadata: Sequence[int] | None = None) -> tuple[tuple[str, int], ...]:
    """Scale bytes and metadata words held fixed; one value is reused for every slot."""
    fixed: list[tuple[str, int]] = []
    for what, words, count, prefix in (("--scale-a", scale_a, desc.scale_count, "scale_a"),
                                       ("--scale-b", scale_b, desc.scale_count, "scale_b"),
                                       ("--metadata", metadata, desc.metadata_words, "meta")):
        if not words:
            continue
        if not count:
            raise ValueError(f"{what} given, but {desc.name} has no "
                             f"{'scale bytes' if prefix != 'meta' else 'metadata'}")
        if len(words) != 1 and len(words) < count:
            raise ValueError(f"{what} has {len(words)} words but {desc.name} needs {count}")
        values = list(words) * count if len(words) == 1 else list(words[:count])
        fixed += [(f"{prefix}{i}", w) for i, w in enumerate(values)]
    if metadata:
        from tcspec.ref.inputs import check_metadata

        check_metadata(desc, [w for name, w in fixed if name.startswith("meta")])
    return tuple(fixed)


# ------------------------------------------------------------------ operands


def _formats(desc: Descriptor) -> tuple[FloatFormat, FloatFormat, FloatFormat]:
    fa, fb = FORMATS[desc.a_format], FORMATS[desc.b_format]
    fc = FORMATS[desc.d_type]
    assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
    assert isinstance(fc, FloatFormat)
    return fa, fb, fc


def _decoded(ops: Ops, desc: Descriptor, inputs: DotInputs) -> Operands:
    """The logical-K operands of one dot product through the spec's decode stage
    (sections 1, 2.1-2.2)."""
    fs = FORMATS[desc.scaling] if desc.scaling else None
    assert fs is None or isinstance(fs, FloatFormat)
    return decode_operands(ops, *_formats(desc), inputs.a, inputs.b, inputs.c, fs,
                           inputs.scale_a, inputs.scale_b)


def _active(ops: Ops, operands: Operands, lane: int) -> Bool:
    """Lane ``lane`` has a nonzero product: neither factor decodes to zero."""
    return ops.not_(ops.or_(operands.a[lane].is_zero, operands.b[lane].is_zero))


def _scale_index(desc: Descriptor, lane: int) -> int:
    """The scale byte covering logical lane ``lane`` (sparse: via its compacted position)."""
    assert desc.scale_block is not None
    if desc.sparse:
        size = desc.sparse_chunk[0]  # type: ignore[index]
        lane = (lane // size) * (size // 2)
    return lane // desc.scale_block


def _product_raw(ops: Ops, desc: Descriptor, operands: Operands, lane: int) -> BV:
    raw = ops.add(operands.a[lane].raw, operands.b[lane].raw)
    if desc.scaling:
        block = _scale_index(desc, lane)
        raw = ops.add(raw, ops.add(operands.scale_a[block].raw, operands.scale_b[block].raw))
    return raw


def _canonical(ops: Ops, word: BV, container: int, cleared: int) -> Bool:
    """Bits outside the container and the cleared fraction bits are zero."""
    kept = ((1 << container) - 1) ^ ((1 << cleared) - 1)
    ignored = ((1 << word.width) - 1) ^ kept
    return ops.eq(ops.bvand(word, ignored), 0) if ignored else ops.true()


def _count(ops: Ops, flags: Sequence[Bool]) -> BV:
    width = max(1, len(flags).bit_length())
    return ops.sum([ops.bool_to_bv(f, width) for f in flags] or [ops.const(0, width)])


def constraint_terms(ops: Ops, desc: Descriptor, inputs: DotInputs,
                     constraints: Constraints) -> list[Bool]:
    """Every condition a probe's inputs must meet, written over ``ops`` (also replayable)."""
    fa, fb, fc = _formats(desc)
    operands = _decoded(ops, desc, inputs)
    terms = [metadata_legal(ops, desc, inputs)]
    terms += [_canonical(ops, w, fa.container_bits, fa.cleared_bits) for w in inputs.a]
    terms += [_canonical(ops, w, fb.container_bits, fb.cleared_bits) for w in inputs.b]
    terms.append(_canonical(ops, inputs.c, fc.container_bits, 0))
    if desc.scaling:
        fs = FORMATS[desc.scaling]
        assert isinstance(fs, FloatFormat)
        terms += [_canonical(ops, s, fs.container_bits, 0)
                  for s in [*inputs.scale_a, *inputs.scale_b]]
    values = [*operands.a, *operands.b, operands.c]
    if constraints.finite:
        terms += [ops.not_(ops.or_(v.is_nan, v.is_inf))
                  for v in [*values, *operands.scale_a, *operands.scale_b]]
    k = desc.k
    active = [_active(ops, operands, lane) for lane in range(k)]
    count = _count(ops, active)
    if constraints.active_lanes is not None:
        terms.append(ops.ule(count, min(constraints.active_lanes, (1 << count.width) - 1)))
    if constraints.c is not None:
        zero = operands.c.is_zero
        terms.append(zero if constraints.c == "zero" else ops.not_(zero))
    if constraints.exp_range is not None:
        lo, hi = constraints.exp_range
        for v in values:
            inside = ops.and_(ops.sle(ops.const(lo, EXP_WIDTH), v.raw),
                              ops.sle(v.raw, ops.const(hi, EXP_WIDTH)))
            terms.append(ops.or_(v.is_zero, inside))
    if constraints.spread is not None:
        present = [ops.not_(v.is_zero) for v in values]
        top, _ = masked_max(ops, [v.raw for v in values], present)
        negated_bottom, any_present = masked_max(ops, [ops.neg(v.raw) for v in values], present)
        spread = ops.add(top, negated_bottom)
        terms.append(ops.or_(ops.not_(any_present),
                             ops.sle(spread, ops.const(constraints.spread, EXP_WIDTH))))
    if constraints.shape == "one-lane":
        terms.append(ops.eq(count, 1))
    elif constraints.shape == "c-only":
        terms.append(ops.eq(count, 0))
    elif constraints.shape == "cancel":
        terms += _cancel_terms(ops, desc, operands, active)
    return terms


def _cancel_terms(ops: Ops, desc: Descriptor, operands: Operands, active: Sequence[Bool]
                  ) -> list[Bool]:
    """Lanes 0 and 1: exactly opposite products; every other term strictly below them."""
    p, q = CANCEL_LANES
    raw_p, raw_q = (_product_raw(ops, desc, operands, lane) for lane in (p, q))
    mag = [ops.mul_wide(operands.a[lane].mag, operands.b[lane].mag) for lane in (p, q)]
    signs = [ops.xor_(operands.a[lane].negative, operands.b[lane].negative) for lane in (p, q)]
    terms = [active[p], active[q], ops.eq(raw_p, raw_q), ops.eq(mag[0], mag[1]),
             ops.xor_(signs[0], signs[1])]
    for v in (*operands.a[p:q + 1], *operands.b[p:q + 1]):
        terms.append(ops.not_(ops.or_(v.is_nan, v.is_inf)))
    for lane in range(desc.k):
        if lane not in CANCEL_LANES:
            below = ops.slt(_product_raw(ops, desc, operands, lane), raw_p)
            terms.append(ops.or_(ops.not_(active[lane]), below))
    c = operands.c
    terms.append(ops.or_(c.is_zero, ops.slt(c.raw, raw_p)))
    return terms


# ------------------------------------------------------------------ models


def model_word(ops: Ops, model: Candidate, desc: Descriptor, inputs: DotInputs) -> BV:
    """``model``'s result word (sparse: the dense definition on the active lanes, section 5)."""
    if desc.sparse:
        desc, inputs = compact_sparse(ops, desc, inputs)
    return model.dense(ops, desc, inputs)


def resolve_models(desc: Descriptor, names: Sequence[str]) -> list[Candidate]:
    """The candidates called ``names`` on ``desc`` (unknown or not applying: ValueError)."""
    models = [get_candidate(name, desc) for name in names]
    seen: set[str] = set()
    for model in models:
        if model.name in seen:
            raise ValueError(f"model {model.name!r} is listed twice")
        seen.add(model.name)
    return models


def _constant_inputs(desc: Descriptor, words: Sequence[int]) -> DotInputs:
    layout = input_layout(desc)
    return inputs_from(layout, [SCALAR.const(w, s.width) for s, w in zip(layout, words)])


def replay(desc: Descriptor, models: Sequence[Candidate], words: Sequence[int]
           ) -> dict[str, int]:
    """Each model's word on concrete input words (``input_layout`` order), scalar backend."""
    inputs = _constant_inputs(desc, words)
    return {m.name: SCALAR.value(model_word(SCALAR, m, desc, inputs)) for m in models}


def satisfies(desc: Descriptor, constraints: Constraints, words: Sequence[int]) -> bool:
    """Whether concrete words meet every constraint (the same terms, scalar backend)."""
    inputs = _constant_inputs(desc, words)
    fixed = dict(constraints.fixed)
    if any(words[i] != fixed[s.name] for i, s in enumerate(input_layout(desc)) if s.name in fixed):
        return False
    return all(SCALAR.truth(t) for t in constraint_terms(SCALAR, desc, inputs, constraints))


def operand_profile(desc: Descriptor, words: Sequence[int]) -> tuple[int, int]:
    """``(active lanes, raw exponent spread of the nonzero A, B, C)`` of concrete words."""
    inputs = _constant_inputs(desc, words)
    operands = _decoded(SCALAR, desc, inputs)
    active = sum(SCALAR.truth(_active(SCALAR, operands, lane)) for lane in range(desc.k))
    raws = [SCALAR.signed_value(v.raw) for v in [*operands.a, *operands.b, operands.c]
            if not SCALAR.truth(v.is_zero)]
    return active, (max(raws) - min(raws)) if raws else 0


# ------------------------------------------------------------------ queries


class ProbeSpace:
    """One query's inputs (free or constant), the models' words and the constraint terms.

    ``live`` lanes of A and B are free; the others are the constant 0
    (``None``: every lane is free). Fixed inputs are constants too.
    """

    def __init__(self, desc: Descriptor, models: Sequence[Candidate], constraints: Constraints,
                 live: Sequence[int] | None = None) -> None:
        self.desc = desc
        self.ops = ops = TraceOps()
        self.layout = input_layout(desc)
        fixed = dict(constraints.fixed)
        live_set = set(range(desc.k)) if live is None else set(live)
        values: list[BV] = []
        self.constants: dict[str, int] = {}
        for spec in self.layout:
            if spec.name in fixed:
                self.constants[spec.name] = fixed[spec.name]
            elif spec.role in ("a", "b") and spec.index not in live_set:
                self.constants[spec.name] = 0
            if spec.name in self.constants:
                values.append(ops.const(self.constants[spec.name], spec.width))
            else:
                values.append(ops.variable(spec.name, spec.width))
        self.variables = [v.node for v in values if v.node.op == "var"]
        self.values = {spec.name: v for spec, v in zip(self.layout, values)}
        inputs = inputs_from(self.layout, values)
        self.words = {m.name: model_word(ops, m, desc, inputs) for m in models}
        self.assumptions = constraint_terms(ops, desc, inputs, constraints)

    def differ(self, first: str, second: str) -> Bool:
        return self.ops.ne(self.words[first], self.words[second])

    def all_differ(self, names: Sequence[str]) -> Bool:
        return self.ops.all_(self.differ(x, y) for i, x in enumerate(names)
                             for y in names[i + 1:])

    def blocking(self, words: Sequence[int]) -> Bool | None:
        """A clause excluding these input words (``None`` when the constants already do)."""
        equal = []
        for spec, word in zip(self.layout, words):
            if spec.name in self.constants:
                if self.constants[spec.name] != word:
                    return None
                continue
            equal.append(self.ops.eq(self.values[spec.name], word))
        return self.ops.not_(self.ops.all_(equal))

    def seeded(self, rng: random.Random) -> list[Bool]:
        """Random fixed bits: the sign and lowest kept fraction bit of free A/B words."""
        fa, fb, _ = _formats(self.desc)
        terms = []
        for spec in self.layout:
            if spec.role not in ("a", "b") or spec.name in self.constants:
                continue
            fmt = fa if spec.role == "a" else fb
            value = self.values[spec.name]
            for bit in (fmt.container_bits - 1, fmt.cleared_bits):
                terms.append(self.ops.eq(self.ops.extract(value, bit, bit), rng.getrandbits(1)))
        return terms

    def solve(self, extra: Sequence[Bool], solver: str, timeout: float) -> SolveResult:
        nodes = [t.node for t in [*self.assumptions, *extra]]
        return check_sat(nodes, self.variables, solver=solver, timeout=timeout)

    def decode(self, model: Mapping[str, int]) -> list[int]:
        """Input words in layout order from a solver model (constants filled in)."""
        return [self.constants.get(s.name, model.get(s.name, 0)) for s in self.layout]


@dataclass
class Probe:
    """A verified probe: input words and every model's replayed word."""

    desc: Descriptor
    words: list[int]
    predicted: dict[str, int]
    solver: str = ""
    seconds: float = 0.0
    live_lanes: int = 0

    @property
    def profile(self) -> tuple[int, int]:
        return operand_profile(self.desc, self.words)

    def separates(self, first: str, second: str) -> bool:
        return self.predicted[first] != self.predicted[second]


@dataclass
class ProbeReport:
    """The outcome of a probe search: probes found, or equivalence, or unknown."""

    status: str
    models: list[str] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    calls: list[tuple[str, SolveResult]] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""

    @property
    def solver_seconds(self) -> float:
        return sum(result.seconds for _, result in self.calls)

    def text(self, desc: Descriptor, pair: Sequence[str], constraints: Constraints) -> str:
        """A human summary: each probe's nonzero inputs and words, or the verdict."""
        under = constraints.under()
        calls = f"{len(self.calls)} solver calls, {self.solver_seconds:.1f}s solving"
        if self.status == EQUIVALENT:
            return (f"{desc.name}: {pair[0]} and {pair[1]} are equivalent{under}: no input "
                    f"makes them differ (unsat at full K={desc.k}; {calls})")
        if self.status == UNKNOWN:
            last = self.calls[-1][1].describe() if self.calls else "no call"
            return (f"{desc.name}: {pair[0]} vs {pair[1]}{under}: unknown, the solver did not "
                    f"decide ({last}; {calls})")
        lines = [f"{desc.name}: {len(self.probes)} verified probe(s) where {pair[0]} and "
                 f"{pair[1]} differ{under} ({self.seconds:.1f}s, {calls})"]
        digits = 4 if desc.d_type == "f16" else 8
        for index, probe in enumerate(self.probes):
            active, spread = probe.profile
            shown = [f"{s.name}=0x{w:X}" for s, w in zip(input_layout(desc), probe.words) if w]
            words = ", ".join(f"{m} 0x{probe.predicted[m]:0{digits}X}" for m in pair)
            lines.append(f"  probe {index}: {words}  [{active} active lanes, exponent spread "
                         f"{spread}]  {' '.join(shown) or 'all inputs zero'}")
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)


def ladder(desc: Descriptor, constraints: Constraints, rng: random.Random | None = None
           ) -> list[list[int]]:
    """The free lanes of each rung of the search ladder; the last rung frees all K lanes.

    Unscaled paths free the first 2, 8, 32 lanes (the cancel pair first; with a
    seed, the others at random). Block-scaled paths free lanes 0, 1, B/2 and
    B/2+1 of the first two scale blocks of B lanes (two products in one group,
    two groups in one block, two blocks with their own scales), then those
    two blocks whole.
    """
    k = desc.k
    if constraints.shape == "c-only":
        counts = [0]
    elif desc.scaling and not desc.sparse:
        block = desc.scale_block or k
        blocks = range(min(2, k // block))
        offsets = sorted({0, 1, block // 2, block // 2 + 1})
        rungs = [[b * block + o for b in blocks for o in offsets],
                 [lane for b in blocks for lane in range(b * block, (b + 1) * block)]]
        return [r for r in rungs if len(r) < k] + [list(range(k))]
    else:
        first = max(2 if constraints.shape == "cancel" else 1, constraints.active_lanes or 2)
        counts = [min(max(first, n), k) for n in LADDER]
    return [_live(desc, n, rng) for n in sorted(set(counts)) if n < k] + [list(range(k))]


def _live(desc: Descriptor, count: int, rng: random.Random | None) -> list[int]:
    if rng is None or count < len(CANCEL_LANES):
        return list(range(count))
    pool = [lane for lane in range(desc.k) if lane not in CANCEL_LANES]
    return [*CANCEL_LANES, *rng.sample(pool, count - len(CANCEL_LANES))]


class Searcher:
    """Finds verified probes that separate two or more models of one datapath."""

    def __init__(self, desc: Descriptor, models: Sequence[Candidate], *,
                 solver: str = DEFAULT_SOLVER, timeout: float = DEFAULT_PROBE_TIMEOUT,
                 log: Log = quiet) -> None:
        self.desc = desc
        self.models = list(models)
        self.solver = solver
        self.timeout = timeout
        self.log = log
        self.calls: list[tuple[str, SolveResult]] = []
        self.cut_proofs: list[CutProof] = []

    def _record(self, what: str, result: SolveResult) -> None:
        self.calls.append((what, result))
        self.log(f"{what}: {result.describe()}")

    def find(self, separate: Sequence[str], constraints: Constraints,
             blocked: Sequence[Sequence[int]] = (), seed: int | None = None,
             cut_early: bool = False) -> tuple[str, Probe | None]:
        """One probe on which all ``separate`` models differ pairwise, up the ladder.

        Before the full-K rung, two models are first tried for equivalence by cut
        points (:mod:`proofs.probes.equivalence`), which succeeds fast when they differ in
        one parameter that cannot matter; ``cut_early`` tries that after the first rung.
        """
        rng = random.Random(seed) if seed is not None else None
        undecided = False
        rungs = ladder(self.desc, constraints, rng)
        cut_before = 1 if cut_early else len(rungs) - 1
        for index, live in enumerate(rungs):
            rung = len(live)
            if index == cut_before and len(separate) == 2 and not blocked and \
                    self.equal_by_cut_points(separate, constraints):
                return EQUIVALENT, None
            space = ProbeSpace(self.desc, self.models, constraints, live)
            clauses = [c for c in (space.blocking(w) for w in blocked) if c is not None]
            goal = [space.all_differ(list(separate)), *clauses]
            attempts = [space.seeded(rng), []] if rng is not None else [[]]
            for extra in attempts:
                what = f"{'/'.join(separate)} with {rung} free lanes" + (
                    " (seeded)" if extra else "")
                result = space.solve([*goal, *extra], self.solver, self.timeout)
                self._record(what, result)
                if result.sat:
                    return FOUND, self._verified(space, result, separate, constraints, rung)
                if result.status == UNKNOWN:
                    undecided = True
                    break
        return (UNKNOWN if undecided else EQUIVALENT), None

    def _verified(self, space: ProbeSpace, result: SolveResult, separate: Sequence[str],
                  constraints: Constraints, rung: int) -> Probe:
        words = space.decode(result.model)
        predicted = replay(self.desc, self.models, words)
        distinct = len({predicted[name] for name in separate}) == len(separate)
        if not distinct or not satisfies(self.desc, constraints, words):
            raise RuntimeError(f"solver model for {'/'.join(separate)} on {self.desc.name} "
                               f"does not replay on the scalar backend: {words}")
        return Probe(self.desc, words, predicted, result.solver, result.seconds, rung)

    def equal_by_cut_points(self, pair: Sequence[str], constraints: Constraints) -> bool:
        space = ProbeSpace(self.desc, self.models, constraints)
        first, second = (space.words[name].node for name in pair)
        proof = prove_equal(space.ops, first, second, [t.node for t in space.assumptions],
                            space.variables, solver=self.solver,
                            timeout=min(self.timeout, LEMMA_TIMEOUT),
                            budget=min(self.timeout, CUT_BUDGET))
        self.cut_proofs.append(proof)
        self.log(f"{'/'.join(pair)} cut-point proof: "
                 + ("proved equal" if proof.proved else f"not proved ({proof.reason})")
                 + f", {proof.lemmas} lemmas, {proof.seconds:.1f}s")
        return proof.proved

    def constraints_satisfiable(self, constraints: Constraints) -> str:
        space = ProbeSpace(self.desc, self.models[:1], constraints)
        result = space.solve([], self.solver, self.timeout)
        self._record("constraints alone", result)
        return result.status


def find_probes(desc: Descriptor, model: str, vs: str,
                constraints: Constraints | None = None, *, count: int = 1,
                minimize: bool = False, seed: int | None = None,
                solver: str = DEFAULT_SOLVER, timeout: float = DEFAULT_PROBE_TIMEOUT,
                log: Log = quiet) -> ProbeReport:
    """Up to ``count`` verified probes with pairwise different inputs on which ``model``
    and ``vs`` give different words (SEMANTICS.md section 7)."""
    if count < 1:
        raise ValueError(f"--count must be at least 1, got {count}")
    constraints = constraints or Constraints()
    check_constraints(desc, constraints)
    models = resolve_models(desc, [model, vs])
    searcher = Searcher(desc, models, solver=solver, timeout=timeout, log=log)
    pair = [m.name for m in models]
    started = time.monotonic()
    probes: list[Probe] = []
    status = FOUND
    active = constraints
    while len(probes) < count:
        derived = None if seed is None else seed + len(probes)
        status, probe = searcher.find(pair, active, [p.words for p in probes], derived)
        if probe is None and active is not constraints:
            active = constraints
            continue
        if probe is None:
            break
        if minimize and not probes:
            probe, active = minimized(searcher, pair, constraints, probe)
        probes.append(probe)
    report = ProbeReport(FOUND if probes else status, pair, probes, searcher.calls,
                         time.monotonic() - started)
    if probes and len(probes) < count:
        report.note = (f"only {len(probes)} distinct probes: the next search was {status} "
                       "(equivalent means no further distinguishing input exists)")
    if not probes and status == EQUIVALENT and searcher.constraints_satisfiable(
            constraints) == "unsat":
        raise ValueError("the constraints admit no input at all on "
                         f"{desc.name}: {constraints.describe()}")
    return report


def minimized(searcher: Searcher, pair: Sequence[str], constraints: Constraints,
               probe: Probe) -> tuple[Probe, Constraints]:
    """Fewer active lanes first, then a smaller raw exponent spread (iterative tightening)."""
    lanes, _ = probe.profile
    while lanes > 0:
        tighter = replace(constraints, active_lanes=lanes - 1)
        try:
            check_constraints(searcher.desc, tighter)
        except ValueError:
            break
        _, found = searcher.find(pair, tighter)
        if found is None:
            break
        probe, lanes = found, found.profile[0]
    best = replace(constraints, active_lanes=lanes)
    low, high = 0, probe.profile[1]
    while low < high:
        middle = (low + high) // 2
        _, found = searcher.find(pair, replace(best, spread=middle))
        if found is None:
            low = middle + 1
        else:
            probe, high = found, found.profile[1]
    return probe, replace(best, spread=high)


# ------------------------------------------------------------------ output

FORMATS_OUT = ("jsonl", "csv")
DESCRIPTOR_COLUMNS = ("a_format", "b_format", "d_type", "saturate", "scaling", "kind",
                      "scale_vec")


def probe_record(probe: Probe, name: str, command: str, extra: Mapping[str, object] = ()
                 ) -> dict[str, object]:
    """A probe in the shared line format (ref/vectors/README.md), without ``expected``.

    ``predicted`` maps each model to its word; ``source`` is the tcspec command that made it.
    """
    desc = probe.desc
    groups: dict[str, list[int]] = {"a": [], "b": [], "c": [], "scale_a": [], "scale_b": [],
                                    "metadata": []}
    for spec, word in zip(input_layout(desc), probe.words):
        groups[spec.role].append(word)
    digits = 4 if desc.d_type == "f16" else 8
    active, spread = probe.profile
    record: dict[str, object] = {
        "name": name, "datapath": desc.name, "descriptor": desc.fields(),
        "a": groups["a"], "b": groups["b"], "c": groups["c"][0],
        "scale_a": groups["scale_a"] or None, "scale_b": groups["scale_b"] or None,
        "sparse_metadata": groups["metadata"] or None,
        "predicted": dict(probe.predicted),
        "predicted_hex": {m: f"0x{w:0{digits}X}" for m, w in probe.predicted.items()},
        "active_lanes": active, "exponent_spread": spread,
        "solver": probe.solver, "solve_seconds": round(probe.seconds, 2),
        "source": command,
    }
    record.update(dict(extra))
    return record


def csv_header(desc: Descriptor, models: Sequence[str]) -> list[str]:
    """Column order: name, datapath, descriptor fields, a0..a(K-1), b0..b(K-1), c,
    scale_a*, scale_b*, meta*, then one ``d_<model>`` column per model."""
    return (["name", "datapath", *DESCRIPTOR_COLUMNS]
            + [spec.name for spec in input_layout(desc)] + [f"d_{m}" for m in models])


def csv_row(record: Mapping[str, object], desc: Descriptor, models: Sequence[str]) -> list[str]:
    """A probe record as CSV cells: hex words, descriptor fields as text."""
    fields = desc.fields()
    cells = [str(record["name"]), desc.name]
    cells += ["" if fields[f] is None else str(fields[f]).lower() for f in DESCRIPTOR_COLUMNS]
    for spec in input_layout(desc):
        digits = spec.width // 4
        if spec.role in ("a", "b"):
            word = record[spec.role][spec.index]  # type: ignore[index]
        elif spec.role == "c":
            word = record["c"]
        else:
            key = "sparse_metadata" if spec.role == "metadata" else spec.role
            word = record[key][spec.index]  # type: ignore[index]
        cells.append(f"0x{word:0{digits}X}")
    predicted = record["predicted_hex"]
    cells += [predicted[m] for m in models]  # type: ignore[index]
    return cells


def render_probes(records: Sequence[Mapping[str, object]], desc: Descriptor,
                  models: Sequence[str], fmt: str) -> str:
    """Probe records as JSON lines or CSV text (see :func:`csv_header`)."""
    import csv
    import io
    import json

    if fmt not in FORMATS_OUT:
        raise ValueError(f"--format must be one of {', '.join(FORMATS_OUT)}, got {fmt!r}")
    if fmt == "jsonl":
        return "".join(json.dumps(r) + "\n" for r in records)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(csv_header(desc, models))
    for record in records:
        writer.writerow(csv_row(record, desc, models))
    return buffer.getvalue()
