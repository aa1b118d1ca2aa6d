"""Error bound of the window datapaths against the exact sum (covers spec/window,
spec/accumulate, spec/convert, spec/exact, spec/formats, spec/specials).

For finite inputs (no special applies) whose D is finite, with ``n = K + 1``
terms (the K products and C) and ``q`` the window quantum:
``|D - exact| < n * 2^q + ulp(D)`` (SEMANTICS.md sections 2.4-2.7): each
term loses less than one quantum to truncation toward zero, and the RZ
conversion loses less than one unit in the last place of D (``ulp(D)``:
``2^(E-23)`` for a normal D of exponent E, ``2^-149`` for a subnormal or
zero D). ``exact`` is a separate wide fixed-point sum of the *untruncated*
products and C (:func:`spec.exact.exact_operand_sum`), not the spec's sum of
truncated units.

Method ``lemmas`` (one query over the whole datapath and the wide sum did
not finish in 120 s even at K=2): per-stage lemmas on free values (the
window maximum, raw ranges, alignment as a floor, conversion as a floor to
ulp(D)), composed as :data:`COMPOSITION` states over the stage rebuild of
:mod:`proofs.stages`. That composition is prose, so the row is never
``proved`` (``unknown``, lemmas listed): issue 16 asks for it as a chain of
queries; one query with the multipliers cut (:mod:`proofs.cutpoints`) and the
reference of :mod:`proofs.reference` did not finish in 120 s even at K=2.
:func:`bound_chain` is that chain, cut at ``build_dot``'s ``align`` and ``convert``
stages, but it is not the row's check yet: on dense-tf32 at K=2 its ``window`` query
proves in 0.1 s, while ``aligned``, ``sum`` and ``encode`` give no answer in 120 s and
``bound`` (a triangle inequality) takes 97 s (bitwuzla, 2026-12-02). They state exact
values in the reference's 543-bit register, and bit-blasting does not scale there: the
bare triangle inequality on free 543-bit values is not decided in 60 s (32 bits: 10 s).
The witness (property ``error-bound-witness``) is
one query over the datapath and the wide sum: an input whose error is at
least ``(n - 1) * 2^q`` with ``ulp(D) <= 4 * 2^q``, within one quantum and
ulp(D) of the bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcspec.proofs import reference
from tcspec.proofs.core import (
    LEMMAS,
    MONOLITHIC,
    InternalError,
    Property,
    Query,
    Row,
    Settings,
    Variables,
    check_queries,
    dot_inputs,
    layout_variables,
    run_dot,
)
from tcspec.proofs.cutpoints import recorded
from tcspec.proofs.floor import floor_shift_holds
from tcspec.proofs.reference import BoundParts, Fixed
from tcspec.proofs.stages import (
    WindowRun,
    formats_of,
    rebuilds_datapath,
    scaled_stages,
    traced_inputs,
    window_stages,
)
from tcspec.smt.trace import Node, TraceOps, cut_nodes
from tcspec.spec.accumulate import align_to_window, exact_product
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.convert import encode_float
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.exact import exact_operand_sum, operand_range, product_range, raw_ceiling
from tcspec.spec.formats import EXP_WIDTH, FORMATS, FloatFormat, Term, decode_float
from tcspec.spec.window import WINDOW_BITS, default_clamp

REQUIRED = ("dense-tf32", "dense-bf16", "dense-f16", "dense-e4m3")

def scale_of(desc: Descriptor) -> int:
    """A static exponent below every quantum, exact-sum LSB and D LSB of ``desc``."""
    fa, fb, fd = formats_of(desc)
    lowest_raw = min(fa.min_raw + fb.min_raw, fd.min_raw)
    clamp = default_clamp(fa, fb)
    lowest_top = lowest_raw if clamp is None else max(lowest_raw, clamp)
    return min(product_range(fa, fb).min_exponent, operand_range(fd).min_exponent,
               lowest_top - WINDOW_BITS, fd.emin - fd.frac_bits)


def _place(ops: Ops, value: BV, shift: BV, width: int) -> BV:
    """``value`` (unsigned) times ``2^shift`` (``shift >= 0``) in ``width`` bits."""
    return ops.shl(ops.zext(value, width), ops.resize_signed(shift, width))


class Measure:
    """The exact sum, D's value, the quantum and ulp(D) as signed integers in units of
    ``2^scale`` (``width`` bits: none of them can wrap)."""

    def __init__(self, ops: Ops, desc: Descriptor, run: WindowRun) -> None:
        fa, fb, fd = formats_of(desc)
        self.scale = scale_of(desc)
        exact = exact_operand_sum(ops, run.operands)
        span = max(product_range(fa, fb).top, operand_range(fd).top) - self.scale
        self.width = max(exact.value.width + exact.lsb - self.scale, span) + 8
        lsb = ops.const(self.scale, EXP_WIDTH)
        self.exact = ops.shl(ops.sext(exact.value, self.width), exact.lsb - self.scale)
        d = decode_float(ops, fd, run.word)
        d_exponent = ops.sub(d.raw, fd.frac_bits)
        d_magnitude = _place(ops, d.mag, ops.sub(d_exponent, lsb), self.width)
        self.d = ops.ite(d.negative, ops.neg(d_magnitude), d_magnitude)
        self.d_finite = ops.and_(ops.not_(d.is_inf), ops.not_(d.is_nan))
        one = ops.const(1, 1)
        self.quantum = _place(ops, one, ops.sub(run.quantum, lsb), self.width)
        self.ulp = _place(ops, one, ops.sub(d_exponent, lsb), self.width)
        self.terms = len(run.terms)
        error = ops.sub(self.d, self.exact)
        self.error = ops.abs_signed(error)
        self.applies = ops.and_(ops.not_(run.specials.is_nan), ops.not_(run.specials.is_inf),
                                self.d_finite, ops.any_(t.nonzero for t in run.terms))

    def quanta(self, ops: Ops, count: int) -> BV:
        return ops.mul(self.quantum, ops.const(count, self.width))


# ------------------------------------------------------------------ lemmas


@dataclass(frozen=True)
class Ranges:
    """Static ranges of the row's exponents (SEMANTICS.md section 2.4)."""

    product_raw: tuple[int, int]
    c_raw: tuple[int, int]
    quantum: tuple[int, int]


def ranges_of(desc: Descriptor) -> Ranges:
    """Raw exponents any word decodes to (Inf/NaN patterns included), and the quanta a
    window over them can have: ``q = max(raw of some nonzero term, clamp) - 25``."""
    fa, fb, fd = formats_of(desc)
    fs = scale_format(desc)
    scales = (2 * fs.min_raw, 2 * raw_ceiling(fs)) if fs else (0, 0)
    product = (fa.min_raw + fb.min_raw + scales[0], raw_ceiling(fa) + raw_ceiling(fb) + scales[1])
    c = (fd.min_raw, raw_ceiling(fd))
    low, high = min(product[0], c[0]), max(product[1], c[1])
    clamp = default_clamp(fa, fb)
    if clamp is not None:
        low = max(low, clamp)
    return Ranges(product, c, (low - WINDOW_BITS, high - WINDOW_BITS))


def _in_range(ops: Ops, value: BV, bounds: tuple[int, int]) -> Bool:
    return ops.and_(ops.sge(value, bounds[0]), ops.sle(value, bounds[1]))


def scale_format(desc: Descriptor) -> FloatFormat | None:
    """The block scale format of a block-scaled path (its products carry two scales)."""
    fmt = FORMATS[desc.scaling] if desc.scaling else None
    assert fmt is None or isinstance(fmt, FloatFormat)
    return fmt


def term_of(ops: Ops, desc: Descriptor, shape: str, values: Variables) -> Term:
    """The ``product`` (scaled by ``sa``/``sb`` on a block path) or ``c`` term of the words."""
    fa, fb, fd = formats_of(desc)
    if shape == "c":
        return decode_float(ops, fd, values["c"]).term
    term = exact_product(ops, decode_float(ops, fa, values["a"]).term,
                         decode_float(ops, fb, values["b"]).term)
    fs = scale_format(desc)
    if fs is None:
        return term
    pair = exact_product(ops, decode_float(ops, fs, values["sa"]).term,
                         decode_float(ops, fs, values["sb"]).term)
    return exact_product(ops, term, pair)


def shape_variables(desc: Descriptor, shape: str) -> tuple[tuple[str, int], ...]:
    if shape == "c":
        return (("c", 32),)
    scales = (("sa", 8), ("sb", 8)) if desc.scaling else ()
    return (("a", 32), ("b", 32), *scales)


def raw_range_query(desc: Descriptor, shape: str) -> Query:
    """Violation: a product (or C) of any words has a raw exponent outside its static range."""
    bounds = getattr(ranges_of(desc), f"{shape}_raw")

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        term = term_of(ops, desc, shape, values)
        return ops.not_(_in_range(ops, term.raw, bounds)), {"raw": term.raw}

    return Query(f"raw-range-{shape}", "forall", shape_variables(desc, shape), body)


def smax_step_query() -> Query:
    """Violation: ``smax(x, y)`` is not an upper bound of both and equal to one of them."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        x, y = values["x"], values["y"]
        m = ops.smax(x, y)
        ok = ops.and_(ops.sge(m, x), ops.sge(m, y), ops.or_(ops.eq(m, x), ops.eq(m, y)))
        return ops.not_(ok), {"max": m}

    return Query("smax-step", "forall", (("x", EXP_WIDTH), ("y", EXP_WIDTH)), body)


def _shape(desc: Descriptor, shape: str) -> tuple[int, int]:
    """``(significand width, frac_offset)`` of a product (or C) term."""
    fa, fb, fd = formats_of(desc)
    if shape == "c":
        return fd.sig_bits, fd.frac_bits
    fs = scale_format(desc)
    scales = (2 * fs.sig_bits, 2 * fs.frac_bits) if fs else (0, 0)
    return fa.sig_bits + fb.sig_bits + scales[0], fa.frac_bits + fb.frac_bits + scales[1]


def nonzero_query(desc: Descriptor, shape: str) -> Query:
    """Violation: a product (or C) of any words is flagged nonzero other than exactly when
    its significand is not 0."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        term = term_of(ops, desc, shape, values)
        return ops.xor_(term.nonzero, ops.ne(term.mag, 0)), {"mag": term.mag}

    return Query(f"nonzero-{shape}", "forall", shape_variables(desc, shape), body)


def align_query(desc: Descriptor, shape: str, rounding: str = "rz") -> Query:
    """Violation of: for a free term of the product (or C) shape, raw in its range and
    ``raw <= q + 25`` when nonzero, ``q`` in range, the aligned units ``u`` satisfy
    ``|u| = floor(|t| / 2^q)`` with the sign of ``t`` and ``|u| < 2^(w-1)`` (so
    ``|t - u 2^q| < 2^q``, truncation toward zero, no wrap)."""
    ranges = ranges_of(desc)
    width, frac_offset = _shape(desc, shape)
    raw_bounds = getattr(ranges, f"{shape}_raw")

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        mag, raw, q = values["mag"], values["raw"], values["q"]
        term = Term(ops.eq(values["negative"], 1), mag, raw, frac_offset, ops.ne(mag, 0))
        pre = ops.and_(_in_range(ops, q, ranges.quantum), _in_range(ops, raw, raw_bounds),
                       ops.implies(term.nonzero, ops.sle(raw, ops.add(q, WINDOW_BITS))))
        units = align_to_window(ops, term, q, WINDOW_BITS, rounding)
        magnitude = ops.abs_signed(units)
        shift = ops.sub(ops.sub(raw, frac_offset), q)
        signed = ops.ite(term.negative, ops.sle(units, 0), ops.sge(units, 0))
        ok = ops.and_(ops.ult(magnitude, 1 << (units.width - 1)), signed,
                      floor_shift_holds(ops, mag, shift, magnitude))
        return ops.and_(pre, ops.not_(ok)), {"units": units}

    variables = (("mag", width), ("raw", EXP_WIDTH), ("negative", 1), ("q", EXP_WIDTH))
    return Query(f"align-{shape}", "forall", variables, body)


def encode_query(desc: Descriptor, total_width: int) -> Query:
    """Violation of: for units ``s`` (not the minimum) and ``q`` in range, ``D = encode(s, q)``
    finite has ``|D| = floor(|s| 2^q / ulp(D)) ulp(D)``, ``ulp(D) = 2^(raw_D - 23)``, with the
    sign of ``s``, and is ``+0`` when that is 0 (so ``|s 2^q - D| < ulp(D)``)."""
    _, _, fd = formats_of(desc)
    ranges = ranges_of(desc)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        s, q = values["s"], values["q"]
        pre = ops.and_(_in_range(ops, q, ranges.quantum), ops.ne(s, 1 << (s.width - 1)))
        word = encode_float(ops, s, q, fd, "rz")
        d = decode_float(ops, fd, word)
        shift = ops.sub(q, ops.sub(d.raw, fd.frac_bits))
        zero = ops.eq(d.mag, 0)
        signed = ops.ite(zero, ops.eq(word, 0), ops.iff(d.negative, ops.sign(s)))
        ok = ops.and_(signed, floor_shift_holds(ops, ops.abs_signed(s), shift, d.mag))
        finite = ops.and_(ops.not_(d.is_inf), ops.not_(d.is_nan))
        return ops.and_(pre, finite, ops.not_(ok)), {"d": word}

    return Query(f"encode-{fd.name}", "forall", (("s", total_width), ("q", EXP_WIDTH)), body)


def static_facts(desc: Descriptor, k: int) -> tuple[int, str]:
    """The exact-sum width and the static no-wrap facts of the composition (checked here)."""
    ops, inputs = traced_inputs(desc, k)
    if desc.family == "block":
        scaled = scaled_stages(ops, desc, inputs)
        sums = list(zip(scaled.units, scaled.totals))
        total = scaled.total.width
    else:
        run = window_stages(ops, desc, inputs)
        sums, total = [(run.units, run.total)], run.total.width
    for units, summed in sums:
        widths = [u.width for u in units]
        if len(widths) * (1 << (max(widths) - 1)) > 1 << (summed.width - 1):
            raise ValueError(f"exact sum of {desc.name} could wrap")
    low, high = ranges_of(desc).quantum
    if not -(1 << (EXP_WIDTH - 1)) < low - 64 < high + 64 < 1 << (EXP_WIDTH - 1):
        raise ValueError(f"quantum range of {desc.name} leaves no exponent headroom")
    width = max(u.width for units, _ in sums for u in units)
    return total, (f"exact sum of n={len(sums[0][0])} units of <= {width} bits in "
                   f"{sums[0][1].width} bits cannot wrap (n 2^{width - 1} <= "
                   f"2^{sums[0][1].width - 1}); quantum in [{low}, {high}]")


COMPOSITION = (
    "Composition (every stage covered; the stage rebuild is build_dot's own node): "
    "smax-step gives, by induction over smax_all's tree, a window exponent at least the "
    "raw of every nonzero term and equal to one of them or the clamp, so by raw-range-* q "
    "is in range and raw <= q + 25; with nonzero-* (nonzero iff significand not 0), "
    "align-* gives |t_i - u_i 2^q| < 2^q and |u_i| < 2^(w-1); so exact_sum is the integer "
    "sum S of the u_i; encode gives |S 2^q - D| < ulp(D) with D finite; exact = sum of "
    "t_i (spec/exact's wide register cannot wrap); by the triangle inequality |D - exact| "
    "< ulp(D) + n 2^q. If no term is nonzero, every unit is 0, D = +0 and exact = 0.")


def bound_query(desc: Descriptor, k: int) -> Query:
    """Violation of the bound as one query over the datapath and the wide sum (too slow for a
    solver; replayed on the scalar lowering by the tests)."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        run = window_stages(ops, desc, dot_inputs(desc, k, values))
        m = Measure(ops, desc, run)
        bound = ops.add(m.quanta(ops, m.terms), m.ulp)
        return ops.and_(m.applies, ops.uge(m.error, bound)), {"d": run.word, "error": m.error,
                                                             "bound": bound}

    return Query("error-below-bound", "forall", layout_variables(desc, k), body)


def witness_query(desc: Descriptor, k: int) -> Query:
    """Witness: finite inputs, finite D with ``ulp(D) <= 4 * 2^q`` (D at the window's top, so
    the conversion adds at most 3 quanta) and ``|D - exact| >= (n - 1) * 2^q``. To keep the
    search small: C = +0, lanes 2.. repeat lane 1, and A and B lane 0 are 1.0 in formats
    with 5 or more exponent bits (in narrower ones products cannot reach 2^-25)."""

    fa, fb, _ = formats_of(desc)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        run = window_stages(ops, desc, inputs)
        m = Measure(ops, desc, run)
        near = ops.and_(ops.uge(m.error, m.quanta(ops, m.terms - 1)),
                        ops.ule(m.ulp, m.quanta(ops, 4)))
        hints = [ops.eq(inputs.c, 0)]
        hints += [ops.eq(word, (f.bias << f.frac_bits) << f.cleared_bits)
                  for word, f in ((inputs.a[0], fa), (inputs.b[0], fb)) if f.exp_bits >= 5]
        hints += [ops.eq(word, lanes[1]) for lanes in (inputs.a, inputs.b) for word in lanes[2:]]
        return ops.and_(m.applies, near, *hints), {"d": run.word, "quantum": run.quantum,
                                                   **{n: v for n, v in values.items()}}

    return Query("error-near-bound", "exists", layout_variables(desc, k), body)


def term_lemmas(desc: Descriptor) -> list[Query]:
    """Raw ranges, nonzero flags and alignment of the product and C terms."""
    return [query(desc, shape) for query in (raw_range_query, nonzero_query, align_query)
            for shape in ("product", "c")]


def lemma_queries(desc: Descriptor, k: int) -> tuple[list[Query], str]:
    total_width, facts = static_facts(desc, k)
    queries = [smax_step_query(), *term_lemmas(desc), encode_query(desc, total_width)]
    return queries, facts


def check(desc: Descriptor, k: int, settings: Settings) -> Row:
    if not rebuilds_datapath(desc, k):
        raise ValueError(f"the staged rebuild of {desc.name} is not build_dot's node")
    queries, facts = lemma_queries(desc, k)
    return check_queries("error-bound", desc, k, queries, settings, LEMMAS,
                         f"{COMPOSITION} Static: {facts}.")


def check_witness(desc: Descriptor, k: int, settings: Settings) -> Row:
    return check_queries("error-bound-witness", desc, k, [witness_query(desc, k)], settings,
                         MONOLITHIC, "exists, against spec/exact's wide sum: "
                         "|D - exact| >= K 2^q with ulp(D) <= 4 2^q, under the search hints "
                         "(C = +0, lanes 2.. repeat lane 1, lane 0 = 1.0 x 1.0 for formats "
                         "with >= 5 exponent bits); refuted means no witness under the hints")


def applies(desc: Descriptor) -> bool:
    return desc.family == "window" and not desc.sparse and desc.d_type == "f32"


COVERS = ("spec.window", "spec.accumulate", "spec.convert", "spec.exact", "spec.formats",
          "spec.specials")

PROPERTIES = [
    Property("error-bound", "|D - exact| < (K+1) 2^q + ulp(D) for finite inputs and finite D",
             COVERS, REQUIRED, applies, check, fast=(("dense-e2m1", 2),)),
    Property("error-bound-witness", "an input with |D - exact| >= K 2^q and ulp(D) <= 4 2^q "
             "(within one quantum and ulp(D) of the bound)", COVERS, REQUIRED, applies,
             check_witness, fast=(("dense-e4m3", 2),)),
]


# ------------------------------------------------------------------ the chain


def _fixed_for_chain(desc: Descriptor, k: int, unit_width: int, sum_width: int) -> Fixed:
    """:func:`proofs.reference.fixed_for`, checked to hold every unit and the sum of units
    at the highest quantum exactly (the chain states ``u 2^q`` in it)."""
    fixed = reference.fixed_for(desc.a_format, desc.b_format, desc.d_type, k)
    _, high = reference.quantum_range(desc.a_format, desc.b_format, desc.d_type)
    needed = max(unit_width, sum_width) + high - fixed.lsb + (k + 1).bit_length() + 2
    return fixed if needed <= fixed.width else Fixed(fixed.lsb, needed)


def _placed(ops: Ops, fixed: Fixed, units: BV, q: BV) -> BV:
    """``units * 2^q`` (signed units) in ``fixed``'s register."""
    shift = ops.resize_signed(ops.sub(q, fixed.lsb), fixed.width)
    return ops.shl(ops.sext(units, fixed.width), shift)


def _not_minimum(ops: Ops, x: BV) -> Bool:
    return ops.ne(x, 1 << (x.width - 1))


@dataclass(frozen=True)
class ChainNodes:
    """One traced run of ``build_dot`` and the reference bound, with the chain's conclusions
    stated on their nodes (SEMANTICS.md sections 2.4-2.7)."""

    parts: BoundParts
    word: BV
    units: list[BV]
    align_q: BV
    convert_q: BV
    total: BV
    window: Bool
    aligned: Bool
    no_wrap: Bool
    summed: Bool
    encoded: Bool


def chain_nodes(ops: Ops, desc: Descriptor, k: int, values: Variables) -> ChainNodes:
    """The conclusions of :func:`bound_chain`, on ``build_dot``'s own nodes (its ``align``
    and ``convert`` stages) and on :mod:`proofs.reference`'s.

    window: the quanta both stages use equal the reference quantum ``q`` (SEMANTICS
    section 2.4), which is in its static range; aligned: every unit ``u_i`` is not the
    minimum and ``|t_i - u_i 2^q| < 2^q`` (``t_i`` the reference term value); no-wrap: the
    sum ``S`` the convert stage encodes is not the minimum; summed: ``|exact - S 2^q| <
    n 2^q``; encoded: a finite D has ``|D - S 2^q| < ulp(D)``.
    """
    inputs = dot_inputs(desc, k, values)
    d, stages = recorded(ops, lambda: run_dot(ops, desc, inputs))
    word = ops.extract(d, 31, 0)
    units = list(stages["align"]["units"])
    align_q, convert_q = stages["align"]["quantum"], stages["convert"]["quantum"]
    total = stages["convert"]["units"]
    fixed = _fixed_for_chain(desc, k, max(u.width for u in units), total.width)
    parts = reference.error_bound_parts(ops, desc.a_format, desc.b_format, inputs.a,
                                        inputs.b, inputs.c, word, fixed)
    q = parts.quantum
    low, high = reference.quantum_range(desc.a_format, desc.b_format, desc.d_type)
    window = ops.and_(ops.eq(ops.resize_signed(align_q, q.width), q),
                      ops.eq(ops.resize_signed(convert_q, q.width), q),
                      ops.sge(q, low), ops.sle(q, high))
    quantum = fixed.power(ops, q)
    aligned = ops.and_(*[ops.and_(_not_minimum(ops, u), ops.ult(
        ops.abs_signed(ops.sub(t, _placed(ops, fixed, u, q))), quantum))
        for t, u in zip(parts.values, units)])
    summed = ops.ult(ops.abs_signed(ops.sub(parts.exact, _placed(ops, fixed, total, q))),
                     ops.mul(quantum, ops.const(len(units), fixed.width)))
    d_error = ops.abs_signed(ops.sub(parts.d_value, _placed(ops, fixed, total, q)))
    encoded = ops.implies(parts.applies, ops.ult(d_error, parts.ulp))
    return ChainNodes(parts, word, units, align_q, convert_q, total, window, aligned,
                      _not_minimum(ops, total), summed, encoded)


CHAIN_DETAIL = (
    "build_dot's own DAG cut at the units and quantum its align stage reports and the sum "
    "and quantum its convert stage encodes; the exact side, the quantum and its range from "
    "proofs/reference.py (SEMANTICS sections 1, 2.4-2.7). Each query assumes, on its cut "
    "variables, exactly the conclusions earlier queries proved on the real nodes: window "
    "(q_align = q_convert = q, q in range), aligned (|t_i - u_i 2^q| < 2^q, u_i not the "
    "minimum), sum (U cut: S not the minimum, |exact - S 2^q| < n 2^q), encode (S, q cut: "
    "|D - S 2^q| < ulp(D)), bound (D, S, exact, q cut: |D - exact| < n 2^q + ulp(D)); "
    "every query under finite inputs with some term nonzero")


def bound_chain(desc: Descriptor, k: int) -> list[Query]:
    """The error bound as a chain of queries on ``build_dot``'s own DAG (:data:`CHAIN_DETAIL`).

    Each later query replaces chosen nodes, at every occurrence, by free variables
    (:func:`smt.trace.cut_nodes`) and assumes the earlier conclusions on them: the real
    nodes are one instance of the variables, so each query's unsat answer holds of the
    real DAG, and the last one is the property (SEMANTICS sections 2.4-2.7).
    """
    variables = layout_variables(desc, k)

    def lift(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        nodes = chain_nodes(ops, desc, k, values)
        return nodes.parts.violation, {"d": nodes.word, "quantum": nodes.parts.quantum}

    def cut(ops: Ops, nodes: ChainNodes, chosen: dict[int, Node], premises: list[Bool],
            conclusion: Bool) -> Bool:
        roots = [nodes.parts.inputs_ok.node, conclusion.node, *(p.node for p in premises)]
        new, _ = cut_nodes(roots, lambda n: chosen.get(n.id), ops=ops)
        inputs_ok, concluded, *assumed = (ops.wrap_bool(r) for r in new)
        return ops.and_(inputs_ok, *assumed, ops.not_(concluded))

    def quantum_cut(ops: TraceOps, nodes: ChainNodes) -> dict[int, Node]:
        q = ops.variable("cut!q", nodes.parts.quantum.width)
        chosen = {nodes.parts.quantum.node.id: q.node}
        for spec_q in (nodes.align_q, nodes.convert_q):
            chosen[spec_q.node.id] = ops.resize_signed(q, spec_q.width).node
        return chosen

    def lemma(name: str, conclusion: str) -> Query:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            nodes = chain_nodes(ops, desc, k, values)
            return ops.and_(nodes.parts.inputs_ok, ops.not_(getattr(nodes, conclusion))), {
                "quantum": nodes.parts.quantum}
        return Query(name, "forall", variables, body, cut_products=True, lift=lift)

    def sum_body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        if not isinstance(ops, TraceOps):
            return lift(ops, values)
        nodes = chain_nodes(ops, desc, k, values)
        chosen = quantum_cut(ops, nodes)
        for i, (t, u) in enumerate(zip(nodes.parts.values, nodes.units)):
            for node, name in ((t, f"cut!t{i}"), (u, f"cut!u{i}")):
                if node.node.id in chosen:
                    raise InternalError(f"{desc.name}: two cut-points share a node")
                chosen[node.node.id] = ops.variable(name, node.width).node
        conclusion = ops.and_(nodes.no_wrap, nodes.summed)
        return cut(ops, nodes, chosen, [nodes.window, nodes.aligned], conclusion), {}

    def encode_body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        if not isinstance(ops, TraceOps):
            return lift(ops, values)
        nodes = chain_nodes(ops, desc, k, values)
        chosen = quantum_cut(ops, nodes)
        chosen[nodes.total.node.id] = ops.variable("cut!s", nodes.total.width).node
        return cut(ops, nodes, chosen, [nodes.window, nodes.no_wrap], nodes.encoded), {}

    def bound_body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        if not isinstance(ops, TraceOps):
            return lift(ops, values)
        nodes = chain_nodes(ops, desc, k, values)
        chosen = quantum_cut(ops, nodes)
        for node, name in ((nodes.total, "cut!s"), (nodes.parts.exact, "cut!exact"),
                           (nodes.word, "cut!d")):
            chosen[node.node.id] = ops.variable(name, node.width).node
        violation = nodes.parts.violation
        new, _ = cut_nodes([violation.node, nodes.window.node, nodes.summed.node,
                            nodes.encoded.node], lambda n: chosen.get(n.id), ops=ops)
        return ops.and_(*(ops.wrap_bool(r) for r in new)), {}

    def possible(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        nodes = chain_nodes(ops, desc, k, values)
        return nodes.parts.applies, {"d": nodes.word}

    return [Query("hypothesis satisfiable", "exists", variables, possible),
            lemma("window", "window"), lemma("aligned", "aligned"),
            Query("sum (units cut)", "forall", variables, sum_body,
                  cut_at="the units and quantum"),
            Query("encode (sum cut)", "forall", variables, encode_body,
                  cut_at="the sum and quantum"),
            Query("bound (D, sum, exact cut)", "forall", variables, bound_body,
                  cut_at="D, the sum, the exact sum and the quantum")]
