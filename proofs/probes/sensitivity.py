"""Parameter sensitivity: which rule constants of the hardware model inputs can observe.

For each numeric rule constant of the hardware model on a datapath
(SEMANTICS.md sections 2 and 4: window width, the -133 clamp, the NVFP4 and
MXF4 product, scale and C windows, exact-sum group sizes, the MXF4
subnormal floor), the values ``v - 1`` and ``v + 1`` become models of their
own. The solver looks for an input on which a neighbour and the constant
give different words, or proves there is none (``equivalent``: the
constant is unobservable there, a finding), or does not decide
(``unknown`` with its time). Group sizes have no integer neighbours that
keep blocks whole, so their neighbours are the next divisors of the scale
block below and above (4 -> 2 and 8; 16 in a block of 16 -> 8 only).
Every neighbour is also run on the frozen B200 words of the datapath's
instruction family: the words it gets wrong are the evidence that already
pins the constant.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tcspec.proofs.probes.probe import (
    DEFAULT_PROBE_TIMEOUT,
    EQUIVALENT,
    FOUND,
    Constraints,
    Log,
    Probe,
    Searcher,
    check_constraints,
    model_word,
    quiet,
)
from tcspec.ref.vectorfiles import FROZEN_FILE, Record, read_vectors
from tcspec.smt.solve import DEFAULT_SOLVER
from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.blockscaled import BlockRules, rules_for
from tcspec.spec.candidates import (
    HARDWARE,
    Candidate,
    block_model,
    get_candidate,
    is_tf32_or_bf16,
    is_unscaled_float,
    window_model,
)
from tcspec.spec.catalog import DotInputs, input_layout, inputs_from
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import FORMATS, FloatFormat
from tcspec.spec.scalar import SCALAR
from tcspec.spec.window import WINDOW_BITS, WINDOW_CLAMP, default_clamp, window_dot


@dataclass(frozen=True)
class RuleConstant:
    """A constant of the hardware model and the models of its neighbouring values."""

    name: str
    value: int
    neighbours: tuple[tuple[int, Candidate | None], ...]
    shared_by: Callable[[Descriptor], bool]
    """Datapaths whose hardware rule uses the same constant (their frozen words pin it)."""


def _clamp_model(clamp: int):
    def dense(ops: Ops, desc: Descriptor, inputs: DotInputs) -> BV:
        fa, fb, fd = (FORMATS[desc.a_format], FORMATS[desc.b_format], FORMATS[desc.d_type])
        assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
        assert isinstance(fd, FloatFormat)
        return window_dot(ops, fa, fb, fd, inputs.a, inputs.b, inputs.c, clamp=clamp)

    return dense


def _variant(name: str, dense) -> Candidate:
    return Candidate(name, f"hardware with {name}", "this datapath", lambda d: True, dense)


def _divisor_neighbours(value: int, block: int) -> tuple[int | None, int | None]:
    divisors = [d for d in range(1, block + 1) if block % d == 0]
    below = [d for d in divisors if d < value]
    above = [d for d in divisors if d > value]
    return (below[-1] if below else None), (above[0] if above else None)


BLOCK_CONSTANTS = (("product_window", "product window"), ("scale_window", "scale window"),
                   ("c_window", "C window"), ("product_group", "product group"),
                   ("c_dominant_group", "C-dominant group"), ("subnormal_floor", "subnormal floor"))


def _same_rules(rules: BlockRules) -> Callable[[Descriptor], bool]:
    def shares(desc: Descriptor) -> bool:
        return desc.family == "block" and rules_for(desc.kind, desc.scaling) == rules

    return shares


def rule_constants(desc: Descriptor) -> list[RuleConstant]:
    """The numeric rule constants of the hardware model on ``desc`` with their neighbours."""
    if desc.family == "window":
        fa, fb = FORMATS[desc.a_format], FORMATS[desc.b_format]
        assert isinstance(fa, FloatFormat) and isinstance(fb, FloatFormat)
        found = [RuleConstant("window width", WINDOW_BITS, tuple(
            (w, _variant(f"window={w}", window_model(w))) for w in (WINDOW_BITS - 1,
                                                                     WINDOW_BITS + 1)),
            is_unscaled_float)]
        if default_clamp(fa, fb) is not None:
            found.append(RuleConstant("clamp of R", WINDOW_CLAMP, tuple(
                (v, _variant(f"clamp={v}", _clamp_model(v)))
                for v in (WINDOW_CLAMP - 1, WINDOW_CLAMP + 1)), is_tf32_or_bf16))
        return found
    if desc.family != "block":
        raise ValueError(f"{desc.name} has no rule constants to probe (integer sums are exact)")
    rules: BlockRules = rules_for(desc.kind, desc.scaling)
    block = desc.scale_block or desc.dense_k
    found = []
    for attribute, label in BLOCK_CONSTANTS:
        value = getattr(rules, attribute)
        if value is None:
            continue
        if attribute.endswith("group"):
            options = _divisor_neighbours(value, block)
        else:
            options = (value - 1, value + 1)
        neighbours = []
        for option in options:
            model = None
            if option is not None:
                changed = dataclasses.replace(rules, **{attribute: option})
                model = _variant(f"{attribute}={option}", block_model(changed))
            neighbours.append((option if option is not None else value, model))
        found.append(RuleConstant(label, value, tuple(neighbours), _same_rules(rules)))
    return found


@dataclass
class Outcome:
    """One neighbour: separated by a probe, equivalent, unknown, or not applicable."""

    value: int | None
    status: str
    probe: Probe | None = None
    seconds: float = 0.0
    detail: str = ""
    pinned_by: list[str] = field(default_factory=list)

    def cell(self) -> str:
        if self.status == "n/a":
            return "n/a"
        if self.status == FOUND and self.probe is not None:
            active, _ = self.probe.profile
            return f"probe ({active} lanes, {self.seconds:.1f}s)"
        if self.status == EQUIVALENT:
            return f"equivalent ({self.detail}, {self.seconds:.1f}s)"
        return f"unknown ({self.seconds:.1f}s)"


@dataclass
class SensitivityTable:
    desc: Descriptor
    rows: list[tuple[RuleConstant, list[Outcome]]]
    constraints: Constraints = field(default_factory=Constraints)

    def text(self) -> str:
        """The table: constant, value, v-1, v+1 and the frozen words that pin each side."""
        lines = [f"{self.desc.name}: rule constants of the hardware model; the last column "
                 "lists the frozen B200 words (of every datapath using the constant) that a "
                 f"neighbour gets wrong{self.constraints.under()}",
                 f"{'constant':18} {'value':>6}  {'v-1':34} {'v+1':34} frozen words pinning "
                 "(v-1 | v+1)"]
        for constant, outcomes in self.rows:
            low, high = outcomes
            cells = []
            for outcome in outcomes:
                label = f"{outcome.value}: " if outcome.value not in (None,) else ""
                cells.append(label + outcome.cell())
            pins = " | ".join(", ".join(o.pinned_by) or "none" for o in (low, high))
            lines.append(f"{constant.name:18} {constant.value:>6}  {cells[0]:34} {cells[1]:34} "
                         f"{pins}")
        return "\n".join(lines)


def frozen_words() -> list[Record]:
    return [r for r in read_vectors(FROZEN_FILE) if isinstance(r, Record)]


def pinned_by(model: Candidate, records: Sequence[Record]) -> list[str]:
    """Names of the frozen words ``model`` gets wrong."""
    wrong = []
    for record in records:
        layout = input_layout(record.descriptor)
        values = [SCALAR.const(w, s.width) for s, w in zip(layout, record.words)]
        word = SCALAR.value(model_word(SCALAR, model, record.descriptor,
                                       inputs_from(layout, values)))
        if word != record.expected:
            wrong.append(record.name or f"line {record.line}")
    return wrong


def sensitivity_table(desc: Descriptor, constraints: Constraints | None = None, *,
                      solver: str = DEFAULT_SOLVER, timeout: float = DEFAULT_PROBE_TIMEOUT,
                      log: Log = quiet) -> SensitivityTable:
    """Probe or prove equivalent each neighbour of each rule constant (see module doc)."""
    constraints = constraints or Constraints()
    check_constraints(desc, constraints)
    records = frozen_words()
    hardware = get_candidate(HARDWARE, desc)
    rows = []
    for constant in rule_constants(desc):
        outcomes = []
        for value, model in constant.neighbours:
            if model is None:
                outcomes.append(Outcome(None, "n/a"))
                continue
            shared = [r for r in records if constant.shared_by(r.descriptor)]
            outcomes.append(_neighbour(desc, hardware, model, value, constraints, shared,
                                       solver, timeout, log))
        rows.append((constant, outcomes))
    return SensitivityTable(desc, rows, constraints)


def _neighbour(desc: Descriptor, hardware: Candidate, model: Candidate, value: int,
               constraints: Constraints, records: Sequence[Record], solver: str,
               timeout: float, log: Log) -> Outcome:
    started = time.monotonic()
    pins = pinned_by(model, records)
    searcher = Searcher(desc, [hardware, model], solver=solver, timeout=timeout, log=log)
    status, probe = searcher.find([HARDWARE, model.name], constraints, cut_early=True)
    detail = ""
    if status == EQUIVALENT:
        proofs = [p for p in searcher.cut_proofs if p.proved]
        detail = f"cut points, {proofs[0].lemmas} lemmas" if proofs else "unsat at full K"
    return Outcome(value, status, probe, time.monotonic() - started, detail, pins)
