"""``equals-reference``: every datapath equal to the rule book, for all inputs (issue 30).

The specification (``spec/``, through :func:`spec.catalog.build_dot`) and the second
specification written from the rule text alone (:mod:`proofs.rulebook`, which imports
nothing of ``spec/`` but the ops protocol) are traced over the same input words, and the
equivalence engine (:mod:`proofs.engine`) decides whether their D words are equal for
every input. The statement reads nothing from ``spec/``: the input words and their widths
are the rule book's (the spec's layout must be the same list, or the row says where they
differ), and so is the one hypothesis, the rule book's ``defined`` (sparse metadata whose
every selector is legal); the spec's own legality predicate is proved equal to it first,
with no hypothesis at all. Dense datapaths have no hypothesis: every word, NaN and Inf
included, every scale byte.

Samples for the engine's simulation are drawn per format from the rule book's field
tables (random words, exponent bands, zeros, specials, cancelling pairs); they only guide
which cut-points are proposed and never enter a verdict.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tcspec.proofs import rulebook
from tcspec.proofs.core import PROVED, REFUTED, UNKNOWN, Property, Row, Settings
from tcspec.proofs.cutpoints import recorded
from tcspec.proofs.engine import (
    EngineSettings,
    EquivalenceResult,
    ProofCache,
    prove_equivalent,
    structure_key,
)
from tcspec.proofs.engine.cache import default_cache_dir
from tcspec.proofs.rulebook import sparse as rulebook_sparse
from tcspec.proofs.rulebook.fields import FORMATS as FIELD_TABLE
from tcspec.proofs.rulebook.fields import Format
from tcspec.proofs.rulebook.names import ONE_OF_TWO, parse
from tcspec.smt.trace import Node, TraceOps, evaluate
from tcspec.spec.bitvec import BV, Bool
from tcspec.spec.catalog import (
    CATALOG,
    build_dot,
    compact_sparse,
    input_layout,
    inputs_from,
    metadata_legal,
)
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.scalar import SCALAR

EQUIVALENCE = "equivalence"
"""The row's method: the equivalence engine (DESIGN.md, "equals-reference")."""

SAMPLES = 192
"""Simulation samples per row before refinement."""

LEGAL_SELECTORS = {ONE_OF_TWO: (0x4, 0xE)}
"""Section 5: the legal selectors of the 1-of-2 rule; the other rules take these seven."""
TWO_FIELD_SELECTORS = (0x4, 0x8, 0xC, 0x9, 0xD, 0x6, 0xE)


def proof_cache() -> ProofCache:
    """The on-disk query cache (``$TCSPEC_PROOF_CACHE``: a file, or ``off``; default under
    the user's cache folder)."""
    where = os.environ.get("TCSPEC_PROOF_CACHE", "")
    if where == "off":
        return ProofCache()
    return ProofCache(Path(where) if where else default_cache_dir() / "queries.jsonl")


_CACHE: ProofCache | None = None


def shared_cache() -> ProofCache:
    global _CACHE
    if _CACHE is None:
        _CACHE = proof_cache()
    return _CACHE


# ------------------------------------------------------------------ sampling


def _float_word(rng: random.Random, f: Format, regime: str, band: int, bits: int) -> int:
    """A word of format ``f`` in ``regime``, junk in the bits the format ignores."""
    top = (1 << f.exp_bits) - 1
    if regime == "raw":
        return rng.getrandbits(bits)
    if regime == "special" and rng.random() < 0.3:
        exponent = top
    elif regime == "tiny":
        exponent = rng.choice((0, 0, 1, min(2, top)))
    elif regime == "huge":
        exponent = max(0, top - rng.randrange(3))
    elif regime == "zeros" and rng.random() < 0.5:
        return (rng.getrandbits(1) << f.sign_bit) if f.sign_bit is not None else 0
    else:
        exponent = min(top, max(0, band + rng.randrange(-2, 3)))
    fraction = rng.getrandbits(f.frac_bits) if f.frac_bits else 0
    if f.frac_bits and rng.random() < 0.3:
        fraction &= ~((1 << max(0, f.frac_bits - 2)) - 1)
    word = (exponent << f.exp_lo) | (fraction << f.frac_lo)
    if f.sign_bit is not None and rng.random() < 0.5:
        word |= 1 << f.sign_bit
    if rng.random() < 0.2:
        ignored = ((1 << bits) - 1) ^ (((1 << f.container) - 1) ^ ((1 << f.cleared) - 1))
        word |= rng.getrandbits(bits) & ignored
    return word


def _meta_word(rng: random.Random, selection: str, legal: bool) -> int:
    choices = LEGAL_SELECTORS.get(selection, TWO_FIELD_SELECTORS)
    word = 0
    for nibble in range(8):
        word |= rng.choice(choices) << (4 * nibble)
    if not legal:
        word ^= rng.randrange(1, 16) << (4 * rng.randrange(8))
    return word


REGIMES = ("raw", "band", "band", "zeros", "special", "tiny", "huge", "cancel")

LOW = "low"
"""A regime for callers that ask for it: products and C near the bottom of D's normal
range (where window floors and subnormal rules act), C zero half the time (a nonzero C
holds the window up at its own exponent)."""


def samples_for(name: str, count: int = SAMPLES, seed: int = 0,
                layout: Sequence[tuple[str, int]] | None = None,
                regimes: Sequence[str] = REGIMES) -> dict[str, list[int]]:
    """``count`` input samples of datapath ``name`` (module docstring), by input word name;
    ``layout`` (name, width) pairs for another K than the instruction's; ``regimes`` the
    cycle of regimes (:data:`REGIMES`, optionally :data:`LOW`)."""
    rec = parse(name)
    d_field = FIELD_TABLE.get(rec.d_format)
    d_low = 1 - d_field.bias if d_field is not None else 0
    layout = rulebook.layout(name) if layout is None else list(layout)
    rng = random.Random(f"{name}:{seed}")
    columns: dict[str, list[int]] = {word: [] for word, _ in layout}
    widths = dict(layout)
    for index in range(count):
        regime = regimes[index % len(regimes)] if index >= 4 else ("zeros", "tiny", "raw",
                                                                     "special")[index]
        target = d_low + rng.randrange(-20, 2) if regime == LOW else 0
        lanes = [(w, int(w[1:])) for w in columns if w[0] in "ab" and w[1:].isdigit()]
        for word, bits in ((w, widths[w]) for w, _ in layout):
            role = word.rstrip("0123456789")
            if role in ("a", "b", "c"):
                fmt_name = {"a": rec.a_format, "b": rec.b_format, "c": rec.c_format}[role]
                f = FIELD_TABLE.get(fmt_name)
                if f is None:
                    value = _integer_word(rng, fmt_name, regime, bits)
                else:
                    band = rng.randrange(1 << f.exp_bits)
                    if regime == LOW:
                        share = target if role == "c" else target // 2 - rng.randrange(6)
                        band = min((1 << f.exp_bits) - 1, max(0, share + f.bias))
                    value = _float_word(rng, f, "band" if regime in ("cancel", LOW) else regime,
                                        band, bits)
                    if regime == LOW and role == "c" and rng.random() < 0.5:
                        value = 0
            elif role in ("scale_a", "scale_b"):
                value = _scale_byte(rng, rec.scaling or "", regime)
            else:
                value = _meta_word(rng, rec.selection or "", rng.random() > 0.2)
            columns[word].append(value)
        if regime == "cancel" and lanes:
            for i in range(1, len(lanes) // 2, 2):
                a_f = FIELD_TABLE.get(rec.a_format)
                columns[f"b{i}"][-1] = columns[f"b{i - 1}"][-1]
                flip = 1 << a_f.sign_bit if a_f and a_f.sign_bit is not None else 0
                columns[f"a{i}"][-1] = columns[f"a{i - 1}"][-1] ^ flip
    return columns


def _integer_word(rng: random.Random, fmt_name: str, regime: str, bits: int) -> int:
    if regime in ("huge", "special"):
        return rng.choice((0x7F, 0x80, 0xFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)) & \
            ((1 << bits) - 1)
    if regime in ("zeros", "tiny"):
        return rng.choice((0, 1, (1 << bits) - 1))
    return rng.getrandbits(bits)


def _scale_byte(rng: random.Random, scaling: str, regime: str) -> int:
    unit = 0x38 if scaling == "ue4m3" else 0x7F
    pick = rng.random()
    if regime == "special" and pick < 0.3:
        return rng.choice((0xFF, 0x7F))
    if regime == "tiny" or pick < 0.15:
        return rng.choice((0, 1, 2, 0x80, 0x81))
    if regime == "huge" or pick < 0.3:
        return rng.choice((0xFE, 0xFD, 0x7E, 0xF0))
    if pick < 0.7:
        return (unit + rng.randrange(-3, 4)) & 0xFF
    return rng.getrandbits(8)


# ------------------------------------------------------------------ tracing


@dataclasses.dataclass
class Traced:
    """Both texts of one datapath traced over the same input words."""

    ops: TraceOps
    words: dict[str, BV]
    spec_word: BV
    spec_legal: Bool
    reference: rulebook.Result
    labels: dict[int, str]
    hints: list[Bool] = dataclasses.field(default_factory=list)
    """Case splits the rule book names (``ops.observe("hint", split=...)``): conditions
    under which its values take a simpler form (e.g. "some term is nonzero", 2.4)."""


def layout_difference(desc: Descriptor, k: int) -> str:
    """Where the spec's input words differ from the rule book's ('' when they agree)."""
    ours = [(s.name, s.width) for s in input_layout(desc, k)]
    theirs = rulebook.layout(desc.name)
    if ours == theirs:
        return ""
    extra = [w for w in ours if w not in theirs][:4]
    missing = [w for w in theirs if w not in ours][:4]
    return (f"the spec reads {len(ours)} input words, the rule book {len(theirs)}"
            + (f"; only the spec has {extra}" if extra else "")
            + (f"; only the rule book has {missing}" if missing else "")
            + ("" if extra or missing else "; in another order"))


MAX_HINTS = 2
"""Hint splits per row: each doubles the cases."""


def trace_both(desc: Descriptor) -> Traced:
    """``build_dot`` and the rule book's ``reference_dot`` over one set of input variables."""
    ops = TraceOps()
    layout = input_layout(desc, desc.k)
    words = {spec.name: ops.variable(spec.name, spec.width) for spec in layout}
    inputs = inputs_from(layout, [words[s.name] for s in layout])
    spec_word, stages = recorded(ops, lambda: build_dot(ops, desc, inputs))
    spec_legal = metadata_legal(ops, desc, inputs)
    hints: list[Bool] = []

    def observe(stage: str, **values: Any) -> None:
        if stage == "hint":
            hints.extend(v for v in values.values() if isinstance(v, Bool))

    ops.observe = observe  # type: ignore[method-assign]
    try:
        reference = rulebook.reference_dot(ops, desc.name, words)
    finally:
        del ops.observe
    return Traced(ops, words, spec_word, spec_legal, reference, stage_labels(stages),
                  hints[:MAX_HINTS])


def stage_labels(stages: Mapping[str, Mapping[str, Any]]) -> dict[int, str]:
    """Node id -> ``stage.value[index]`` for the values the spec reports at its stages."""
    labels: dict[int, str] = {}

    def visit(value: Any, path: str, depth: int) -> None:
        if depth > 4:
            return
        if isinstance(value, (BV, Bool)):
            node = value.node
            if isinstance(node, Node):
                labels.setdefault(node.id, path)
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                visit(item, f"{path}[{i}]", depth + 1)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                visit(getattr(value, f.name), f"{path}.{f.name}", depth + 1)

    for stage, values in stages.items():
        for key, value in values.items():
            visit(value, f"{stage}.{key}", 0)
    return labels


def replayer(desc: Descriptor, with_legal: bool = False):
    """Input words -> (spec word, rule-book word) on the executable (scalar) lowerings."""
    layout = input_layout(desc, desc.k)

    def replay(words: dict[str, int]) -> list[tuple[int, int]]:
        values = {s.name: SCALAR.const(words.get(s.name, 0), s.width) for s in layout}
        inputs = inputs_from(layout, [values[s.name] for s in layout])
        reference = rulebook.reference_dot(SCALAR, desc.name, values)
        if with_legal:
            return [(int(bool(metadata_legal(SCALAR, desc, inputs).node)),
                     int(bool(reference.defined.node)))]
        return [(int(build_dot(SCALAR, desc, inputs).node), int(reference.word.node))]

    return replay


def row_key(traced: Traced, settings: Settings) -> str:
    """The row's cache key: both DAGs, the hypothesis, the hints, the solver and its
    limits."""
    roots = [traced.spec_word.node, traced.spec_legal.node, traced.reference.word.node,
             traced.reference.defined.node, *(h.node for h in traced.hints)]
    return structure_key(roots, "equals-reference", settings.solver, settings.timeout)


def engine_settings(settings: Settings) -> EngineSettings:
    """The engine's limits for one row: 1.5 x ``--timeout`` for the whole row (every
    case; the outputs get what the pairs left, at least 5 s), ``--timeout`` for an output
    query; local queries 10 s, cones 15 s."""
    return EngineSettings(solver=settings.solver,
                          local_timeout=min(settings.timeout, 10.0),
                          cone_timeout=min(settings.timeout, 15.0),
                          output_timeout=settings.timeout,
                          row_budget=1.5 * settings.timeout)


def check(desc: Descriptor, k: int, settings: Settings) -> Row:
    """One ``equals-reference`` row (module docstring)."""
    started = time.monotonic()

    key = ""

    def row(result: str, detail: str, words: dict[str, int] | None = None,
            lemmas: Sequence[dict[str, Any]] = ()) -> Row:
        return Row("equals-reference", desc.name, k, result, settings.solver,
                   time.monotonic() - started, EQUIVALENCE, desc.k, detail, list(lemmas),
                   None, words or {}, key)

    if k != desc.k:
        raise ValueError(f"equals-reference compares the instruction's K={desc.k}, not {k}")
    difference = layout_difference(desc, k)
    if difference:
        return row(UNKNOWN, f"the two texts do not take the same input words: {difference}")
    traced = trace_both(desc)
    key = row_key(traced, settings)
    if traced.spec_word.width != traced.reference.word.width:
        return row(UNKNOWN, f"D is {traced.spec_word.width} bits in the spec and "
                            f"{traced.reference.word.width} in the rule book")
    engine = engine_settings(settings)
    samples = samples_for(desc.name)
    cache = shared_cache()
    lemmas: list[dict[str, Any]] = []
    hypothesis = traced.reference.defined
    if not _always_true(hypothesis) or not _always_true(traced.spec_legal):
        legal = prove_equivalent([(traced.spec_legal, hypothesis)], samples=samples,
                                 settings=engine, replay=replayer(desc, with_legal=True),
                                 cache=cache, labels=traced.labels)
        lemmas.append(_lemma("legality-equal", legal))
        if legal.result != PROVED:
            return row(legal.result, _detail("the metadata legality predicates", legal),
                       _named_words(legal, "legal"), lemmas)
    composed = _composed(desc, traced, settings, samples, lemmas)
    if composed is not None:
        return row(*composed, lemmas=lemmas)
    outcome = prove_equivalent([(traced.spec_word, traced.reference.word)], samples=samples,
                               assumptions=[] if _always_true(hypothesis) else [hypothesis],
                               settings=engine, replay=replayer(desc), cache=cache,
                               labels=traced.labels, splits=traced.hints)
    lemmas.append(_lemma("d-equal", outcome))
    hypothesis_text = "" if _always_true(hypothesis) else \
        "hypothesis: every metadata selector legal (the rule book's, section 5); "
    return row(outcome.result, hypothesis_text + _detail("D", outcome),
               _named_words(outcome, "d"), lemmas)


@dataclasses.dataclass
class Composition:
    """A sparse datapath as both texts write it (section 5): each text's D is, node for
    node, its dense sibling's D on the lanes its own compaction keeps."""

    spec_lanes: list[BV]
    reference_lanes: list[BV]
    dense: Descriptor


def composition(desc: Descriptor, traced: Traced) -> Composition | None:
    """The two texts' compacted lanes, when ``build_dot``'s sparse word *is* (by
    hash-consing) its dense sibling's word on ``compact_sparse``'s lanes and the rule
    book's *is* its dense sibling's on its own compaction's; None otherwise."""
    if not desc.sparse:
        return None
    ops, words = traced.ops, traced.words
    rec = parse(desc.name)
    dense = CATALOG[rec.dense_name or ""].descriptor
    layout = input_layout(desc, desc.k)
    _, spec_inputs = compact_sparse(ops, desc, inputs_from(layout, [words[s.name] for s in layout]))
    if build_dot(ops, dense, spec_inputs).node is not traced.spec_word.node:
        return None
    dense_words, legal = rulebook_sparse.dense_words(ops, rec, words)
    reference = rulebook.reference_dot(ops, dense.name, dense_words)
    if reference.word.node is not traced.reference.word.node or \
            not _always_true(reference.defined) or \
            legal.node is not traced.reference.defined.node:
        return None
    kept = [dense_words[f"{side}{i}"] for side in "ab" for i in range(dense.k)]
    return Composition([*spec_inputs.a, *spec_inputs.b], kept, dense)


def committed_row(desc: Descriptor, settings: Settings) -> Row | None:
    """The committed report's proved ``equals-reference`` row of ``desc`` when its key (both
    traced DAGs, the solver, the limits) is this run's: the runner reuses such a row rather
    than decide it again, and so does a composition that cites it (its ``run`` set)."""
    from tcspec.proofs.runner import REPORT_JSON, row_from_json

    try:
        rows = json.loads(REPORT_JSON.read_text(encoding="utf-8"))["rows"]
    except (OSError, ValueError, KeyError):
        return None
    for data in rows:
        if (data.get("property"), data.get("datapath"), data.get("k")) == \
                ("equals-reference", desc.name, desc.k):
            if data.get("result") != PROVED or not data.get("key") or \
                    data["key"] != row_key(trace_both(desc), settings):
                return None
            row = row_from_json(data)
            row.run = data.get("run")  # type: ignore[attr-defined]
            return row
    return None


def _composed(desc: Descriptor, traced: Traced, settings: Settings,
              samples: Mapping[str, list[int]], lemmas: list[dict[str, Any]]
              ) -> tuple[str, str] | None:
    """A sparse row by composition (section 5): the compacted lanes of the two texts are
    equal under the rule book's legality (``lanes-equal``, one engine run), and the dense
    sibling's D is the rule book's for every input (``dense-equal``: that datapath's own
    row, the committed one when its key is this run's, else decided here). Then D is
    equal for every legal input. None (decide D whole) when
    the texts are not built that way or the dense row is refuted (its words are no sparse
    input; the whole run gives sparse words)."""
    parts = composition(desc, traced)
    if parts is None:
        return None

    def replay(words: dict[str, int]) -> list[tuple[int, int]]:
        again = composition(desc, trace_both(desc))
        assert again is not None
        spec = evaluate([x.node for x in again.spec_lanes], words)
        reference = evaluate([x.node for x in again.reference_lanes], words)
        return [(int(x), int(y)) for x, y in zip(spec, reference)]

    lanes = prove_equivalent(list(zip(parts.spec_lanes, parts.reference_lanes)),
                             samples=samples, assumptions=[traced.reference.defined],
                             settings=engine_settings(settings), replay=replay,
                             cache=shared_cache(), labels=traced.labels)
    lemmas.append(_lemma("lanes-equal", lanes))
    if lanes.result != PROVED:
        return lanes.result, _detail("the compacted lanes", lanes)
    dense = committed_row(parts.dense, settings) or check(parts.dense, parts.dense.k, settings)
    reused = f"; the committed row of run {dense.run}, reused by its key" \
        if getattr(dense, "run", None) is not None else ""
    lemmas.append({"name": f"dense-equal ({parts.dense.name})", "result": dense.result,
                   "solver": "engine", "seconds": round(dense.seconds, 2), "second": None,
                   "reason": dense.detail + reused})
    if dense.result == REFUTED:
        return None
    head = "hypothesis: every metadata selector legal (the rule book's, section 5); by " \
        f"composition: each text's D is its dense sibling's on its own compacted lanes " \
        f"(hash-consed), the lanes are equal ({lanes.stats.summary()})"
    if dense.result == PROVED:
        return PROVED, f"{head}, and {parts.dense.name} equals the rule book's for every " \
            f"input ({dense.seconds:.0f}s{reused}): D equal for every legal input"
    return UNKNOWN, f"{head}; {parts.dense.name}'s D not decided: {dense.detail}"


def _always_true(value: Bool) -> bool:
    node = value.node
    return bool(node.is_const and node.value)


def _lemma(name: str, outcome: EquivalenceResult) -> dict[str, Any]:
    return {"name": name, "result": outcome.result, "solver": "engine",
            "seconds": round(outcome.seconds, 2), "second": None,
            "reason": outcome.stopped, "engine": outcome.stats.to_json()}


def _detail(what: str, outcome: EquivalenceResult) -> str:
    head = {PROVED: f"{what} equal for every input", REFUTED: f"{what} differ (replayed)",
            UNKNOWN: f"{what} not decided: {outcome.stopped}"}[outcome.result]
    return f"{head}; {outcome.stats.summary()}"


def _named_words(outcome: EquivalenceResult, what: str) -> dict[str, int]:
    if outcome.result != REFUTED:
        return {}
    words = dict(outcome.words)
    if outcome.outputs:
        spec, reference = outcome.outputs[0]
        words[f"{what}_spec"] = spec
        words[f"{what}_reference"] = reference
    return words


PROPERTIES = (
    Property("equals-reference",
             "D equals the rule book's second specification (proofs/rulebook) for every input",
             ("spec (every family)", "proofs/rulebook"), tuple(CATALOG),
             lambda desc: desc.name in CATALOG, check, fast=(("dense-tf32", 8),),
             key=lambda desc, k, settings: row_key(trace_both(desc), settings)),
)
