"""Sign symmetry of the float datapaths (covers spec/formats, spec/specials, spec/accumulate,
spec/convert, spec/window, spec/blockscaled).

Flipping the format's own sign bit of every A element and of C negates D,
except that a zero D stays +0 and a NaN stays the canonical NaN; the same
for B. Truncation toward zero (SEMANTICS.md sections 2.5 and 2.7) is what
makes this hold: a rounding mode that is not symmetric would break it. The
property compares the specification with itself on changed inputs, so it
needs no second formulation.

Each row is a chain (method ``chain``) over two runs of ``build_dot``'s own
DAG, its multipliers cut (:mod:`proofs.cutpoints`), for A and C flipped and
for B and C: on window paths :func:`unit_chain` (cut at the ``align`` stage's
units and quantum, half the row's time limit per query), on block paths
:func:`block_unit_chain` (cut at the ``groups`` stage's quanta, C-dominant
choice and units, on NVFP4 also inside each group at its signed sum and at
its magnitude and sign, at each level of the spec's own adder trees (the
groups' sums and the path sums), at the path sums and at the ``convert``
stage's sum; each query its own time limit). The stage lemmas of the earlier argument stay in
:func:`lemma_row` (never ``proved``: their composition, below, is prose):
for the window datapaths and the MXF8F6F4 block paths, flipping a sign
negates each aligned term and leaves every raw exponent (so the quantum)
alone; the exact sum of negated units is the negated sum (per-step lemmas
on ``sext`` and ``add``, units never the minimum by the alignment lemmas of
:mod:`proofs.error_bound`); conversion and specials are odd. NVFP4, whose
paths sum groups of products exactly before one truncation, is proved the
same way over :func:`proofs.stages.grouped_stages` (:data:`GROUPED_PATHS`):
flipping signs negates each group's units, and a group whose top raw is in
the window has units that are not the minimum. The MXF4 family (per-group C
merge, subnormal floor) is asked monolithically.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from tcspec.proofs import reference
from tcspec.proofs.carry import group_sum, group_terms
from tcspec.proofs.constants import CANONICAL_NAN
from tcspec.proofs.core import (
    CHAIN,
    LEMMAS,
    InternalError,
    Property,
    Query,
    QueryBody,
    Row,
    Settings,
    Variables,
    check_queries,
    cover_mismatches,
    dot_inputs,
    layout_variables,
    lift_refuted,
    run_dot,
    uncovered_row,
)
from tcspec.proofs.cutpoints import recorded
from tcspec.proofs.error_bound import (
    ranges_of,
    raw_range_query,
    scale_format,
    shape_variables,
    smax_step_query,
    static_facts,
    term_lemmas,
    term_of,
)
from tcspec.proofs.stages import (
    WindowRun,
    formats_of,
    rebuilds_datapath,
    run_stages,
    traced_inputs,
)
from tcspec.smt.trace import Node, TraceOps, cut_nodes
from tcspec.spec.accumulate import align_to_window, exact_product
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.blockscaled import GroupSum, align_group, rules_for
from tcspec.spec.catalog import DotInputs
from tcspec.spec.convert import encode_float
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.exact import raw_ceiling
from tcspec.spec.formats import EXP_WIDTH, Decoded, FloatFormat, Term, decode_float
from tcspec.spec.specials import Specials, apply_specials, classify_specials
from tcspec.spec.window import DESTINATIONS, WINDOW_BITS

REQUIRED = ("dense-tf32", "dense-bf16", "dense-f16", "dense-e4m3", "dense-e5m2", "dense-e2m3",
            "dense-e3m2", "dense-e2m1", "dense-nvfp4", "dense-mx-e4m3")


def sign_bit(name: str) -> int:
    """The bit of a raw word that holds the format's sign (section 1 container layout, from
    :mod:`proofs.reference`'s field table; never the spec's ``FORMATS``)."""
    return reference.sign_bit(name)


def d_bits(desc: Descriptor) -> int:
    """The D word's width (section 1: F32 32 bits, F16 16 bits), from the reference."""
    return reference.word_bits(desc.d_type)


def _flip(ops: Ops, word: BV, bit: int) -> BV:
    return ops.bvxor(word, 1 << bit)


def negated(ops: Ops, d: BV, d_format: str | FloatFormat, nan_word: int | None = None) -> BV:
    """``-d`` as the datapath must give it: a zero stays +0, a NaN stays canonical
    (``nan_word``; default: section 2.2's, :mod:`proofs.constants`)."""
    top = d.width - 1
    magnitude = ops.extract(d, top - 1, 0)
    is_zero = ops.eq(magnitude, 0)
    name = d_format if isinstance(d_format, str) else d_format.name
    canonical = CANONICAL_NAN[name] if nan_word is None else nan_word
    is_nan = ops.eq(d, canonical)
    flipped = _flip(ops, d, top)
    return ops.ite(ops.or_(is_zero, is_nan), d, flipped)


def sign_query(desc: Descriptor, k: int, operand: str, flip_c: bool = True) -> Query:
    """Violation: flipping every ``operand`` (``a`` or ``b``) sign and C's does not negate D
    (``flip_c=False`` leaves C alone: a property that fails, for tests)."""
    d_format = desc.d_type
    variables = layout_variables(desc, k)
    operand_format = desc.a_format if operand == "a" else desc.b_format
    lane_bit, c_bit = sign_bit(operand_format), sign_bit(desc.d_type)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        lanes = [_flip(ops, w, lane_bit) for w in getattr(inputs, operand)]
        c = _flip(ops, inputs.c, c_bit) if flip_c else inputs.c
        flipped = DotInputs(lanes if operand == "a" else inputs.a,
                            lanes if operand == "b" else inputs.b, c, inputs.scale_a,
                            inputs.scale_b, inputs.metadata)
        d = run_dot(ops, desc, inputs)
        d_flipped = run_dot(ops, desc, flipped)
        width = d_bits(desc)
        d, d_flipped = ops.extract(d, width - 1, 0), ops.extract(d_flipped, width - 1, 0)
        return ops.ne(d_flipped, negated(ops, d, d_format)), {"d": d, "d_flipped": d_flipped}

    return Query(f"flip-{operand}-and-c", "forall", variables, body, cut_products=True)


# ------------------------------------------------------------------ lemmas


def flipped_term_query(desc: Descriptor, shape: str, headroom: int = WINDOW_BITS) -> Query:
    """Violation: flipping the sign bit of A (``product-a``), B (``product-b``) or C (``c``)
    changes the term's raw or nonzero, or does not negate its units aligned with
    ``headroom`` (any ``q``)."""
    fa, fb, fd = formats_of(desc)
    term_shape = "c" if shape == "c" else "product"
    flipped_word = {"product-a": ("a", fa), "product-b": ("b", fb), "c": ("c", fd)}[shape]

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        name, fmt = flipped_word
        flipped_values = {**values, name: _flip(ops, values[name], sign_bit(fmt.name))}
        plain = term_of(ops, desc, term_shape, values)
        flipped = term_of(ops, desc, term_shape, flipped_values)
        q = values["q"]
        units = align_to_window(ops, plain, q, headroom)
        units_flipped = align_to_window(ops, flipped, q, headroom)
        ok = ops.and_(ops.eq(plain.raw, flipped.raw), ops.iff(plain.nonzero, flipped.nonzero),
                      ops.eq(units_flipped, ops.neg(units)))
        return ops.not_(ok), {"units": units, "units_flipped": units_flipped}

    variables = (*shape_variables(desc, term_shape), ("q", EXP_WIDTH))
    return Query(f"flip-{shape}", "forall", variables, body)


def decode_flip_query(fmt: FloatFormat) -> Query:
    """Violation: decoding a word with its sign bit flipped does not negate ``negative`` or
    changes the class (zero, Inf, NaN), the significand or the raw exponent."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        x = decode_float(ops, fmt, values["w"])
        y = decode_float(ops, fmt, _flip(ops, values["w"], sign_bit(fmt.name)))
        ok = ops.and_(ops.xor_(x.negative, y.negative), ops.iff(x.is_zero, y.is_zero),
                      ops.iff(x.is_inf, y.is_inf), ops.iff(x.is_nan, y.is_nan),
                      ops.eq(x.mag, y.mag), ops.eq(x.raw, y.raw))
        return ops.not_(ok), {}

    return Query(f"decode-flip-{fmt.name}", "forall", (("w", 32),), body)


def _free_decoded(ops: Ops, values: Variables, prefix: str, fmt: FloatFormat) -> Decoded:
    flag = {name: ops.eq(values[prefix + name], 1) for name in ("n", "z", "i", "x")}
    return Decoded(fmt, flag["n"], ops.const(0, 1), ops.const(0, EXP_WIDTH), flag["z"],
                   flag["i"], flag["x"])


def _negated_sign(ops: Ops, x: Decoded) -> Decoded:
    return Decoded(x.fmt, ops.not_(x.negative), x.mag, x.raw, x.is_zero, x.is_inf, x.is_nan)


def specials_query(desc: Descriptor, k: int, operand: str) -> Query:
    """Violation: with every ``operand`` lane's sign and C's negated (free flags; a free NaN
    scale flag on block paths), the NaN and infinity outcome differs, or an infinite result
    keeps its sign."""
    fa, fb, fd = formats_of(desc)
    names = [f"{p}{i}{f}" for i in range(k) for p in "ab" for f in "nzix"]
    names += [f"c{f}" for f in "nzix"] + (["scale_nan"] if desc.scaling else [])

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        pairs = [(_free_decoded(ops, values, f"a{i}", fa),
                  _free_decoded(ops, values, f"b{i}", fb)) for i in range(k)]
        c = _free_decoded(ops, values, "c", fd)
        flipped = [(_negated_sign(ops, x), y) if operand == "a" else (x, _negated_sign(ops, y))
                   for x, y in pairs]
        extra = ops.eq(values["scale_nan"], 1) if desc.scaling else None
        s = classify_specials(ops, pairs, c, extra_nan=extra)
        t = classify_specials(ops, flipped, _negated_sign(ops, c), extra_nan=extra)
        infinite = ops.and_(s.is_inf, ops.not_(s.is_nan))
        ok = ops.and_(ops.iff(s.is_nan, t.is_nan), ops.iff(s.is_inf, t.is_inf),
                      ops.implies(infinite, ops.xor_(s.inf_negative, t.inf_negative)))
        return ops.not_(ok), {}

    return Query(f"specials-flip-{operand}", "forall", tuple((n, 1) for n in names), body)


def sext_odd_query(width: int, wide: int) -> Query:
    """Violation: for ``x`` not the minimum, ``sext(-x) != -sext(x)``."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        x = values["x"]
        odd = ops.eq(ops.sext(ops.neg(x), wide), ops.neg(ops.sext(x, wide)))
        return ops.and_(ops.ne(x, 1 << (width - 1)), ops.not_(odd)), {}

    return Query(f"sext-odd-w{width}-to-{wide}", "forall", (("x", width),), body)


def add_odd_query(width: int) -> Query:
    """Violation: ``(-x) + (-y) != -(x + y)`` (modular, at ``width``)."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        x, y = values["x"], values["y"]
        return ops.ne(ops.add(ops.neg(x), ops.neg(y)), ops.neg(ops.add(x, y))), {}

    return Query(f"add-odd-w{width}", "forall", (("x", width), ("y", width)), body)


def encode_odd_query(desc: Descriptor, total_width: int,
                     quanta: tuple[int, int] | None = None) -> Query:
    """Violation: for units ``s`` (not the minimum) and ``q`` in range (``quanta``, default
    the window quanta), ``encode(-s, q) != negated(encode(s, q))``."""
    _, _, fd = formats_of(desc)
    low, high = quanta or ranges_of(desc).quantum

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        s, q = values["s"], values["q"]
        pre = ops.and_(ops.sge(q, low), ops.sle(q, high), ops.ne(s, 1 << (s.width - 1)))
        rounding = DESTINATIONS[fd.name]
        word = encode_float(ops, s, q, fd, rounding)
        word_negated = encode_float(ops, ops.neg(s), q, fd, rounding)
        return ops.and_(pre, ops.ne(word_negated, negated(ops, word, fd))), {
            "d": word, "d_negated": word_negated}

    return Query(f"encode-odd-{fd.name}", "forall", (("s", total_width), ("q", EXP_WIDTH)),
                 body)


def apply_specials_query(desc: Descriptor) -> Query:
    """Violation: specials related as :func:`specials_query` proves, applied to
    ``negated(f)``, do not give ``negated`` of the word for ``f``."""
    _, _, fd = formats_of(desc)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        flag = {n: ops.eq(values[n], 1) for n in ("nan", "inf", "neg", "neg2")}
        s = Specials(flag["nan"], flag["inf"], flag["neg"])
        t = Specials(flag["nan"], flag["inf"], flag["neg2"])
        infinite = ops.and_(flag["inf"], ops.not_(flag["nan"]))
        pre = ops.implies(infinite, ops.xor_(flag["neg"], flag["neg2"]))
        finite = values["f"]
        word = apply_specials(ops, s, finite, fd)
        word_flipped = apply_specials(ops, t, negated(ops, finite, fd), fd)
        return ops.and_(pre, ops.ne(word_flipped, negated(ops, word, fd))), {}

    variables = (("nan", 1), ("inf", 1), ("neg", 1), ("neg2", 1), ("f", fd.container_bits))
    return Query("apply-specials-odd", "forall", variables, body)


COMPOSITION = (
    "Composition over the stage rebuild (build_dot's own node): decode-flip-* negates "
    "only the sign of a decoded word; flip-* shows each product (and C) keeps raw and "
    "nonzero, so the window exponent (which reads only those) and q are unchanged, and "
    "its units are negated; specials-flip-* keeps NaN/Inf and negates an infinite "
    "result's sign; smax-step, raw-range-*, nonzero-* and align-* (proofs.error_bound) "
    "give |u_i| < 2^(w-1) when some term is nonzero, so by sext-odd and add-odd, by "
    "induction over exact_sum's tree, the sum of the negated units is the negated sum, "
    "which is not the minimum (the sum cannot wrap); encode-odd and apply-specials-odd "
    "finish: D' = negated(D). If no term is nonzero, every unit is 0 and both finite "
    "words are +0.")


def _sums(desc: Descriptor, k: int) -> tuple[list[tuple[list[int], int]], int]:
    """``([(unit widths, sum width) per exact sum], encoded width)`` of the stage rebuild."""
    ops, inputs = traced_inputs(desc, k)
    run = run_stages(ops, desc, inputs)
    if isinstance(run, WindowRun):
        return [([u.width for u in run.units], run.total.width)], run.total.width
    return [([u.width for u in units], total.width)
            for units, total in zip(run.units, run.totals)], run.total.width


def sum_lemmas(sums: list[tuple[list[int], int]], total: int) -> list[Query]:
    """sext-odd for every unit width to its sum's width and every sum's width to ``total``,
    add-odd at every sum's width."""
    extensions = sorted({(w, summed) for widths, summed in sums for w in widths}
                        | {(summed, total) for _, summed in sums if summed != total})
    return [*[sext_odd_query(w, wide) for w, wide in extensions],
            *[add_odd_query(w) for w in sorted({summed for _, summed in sums})]]


BLOCK_PATHS = (
    " Block path (MXF8F6F4, groups of one product): both the C-dominant and the product "
    "path are negated as above (c_dominant reads only raws and nonzero flags; the chosen "
    "path has raw <= q + 25 for every nonzero term), and sext-odd carries the chosen sum to "
    "the common width.")


def stage_lemmas(desc: Descriptor, k: int) -> list[Query]:
    """Every lemma of a stage-lemma row, for A and for B (shared ones once)."""
    sums, total = _sums(desc, k)
    formats = {fmt.name: fmt for fmt in formats_of(desc)}
    return [*[decode_flip_query(fmt) for fmt in formats.values()],
            flipped_term_query(desc, "product-a"), flipped_term_query(desc, "product-b"),
            flipped_term_query(desc, "c"), specials_query(desc, k, "a"),
            specials_query(desc, k, "b"), *sum_lemmas(sums, total),
            encode_odd_query(desc, total), apply_specials_query(desc),
            smax_step_query(), *term_lemmas(desc)]


# --------------------------------------------- block paths that sum groups (NVFP4)


def grouped(desc: Descriptor) -> bool:
    """Block paths that sum groups of products, with neither the per-group C merge nor the
    subnormal floor (NVFP4, section 4)."""
    if desc.family != "block":
        return False
    rules = rules_for(desc.kind, desc.scaling or "")
    return ((rules.product_group, rules.c_dominant_group) != (1, 1)
            and not rules.group_c_merge and rules.subnormal_floor is None
            and rules.scale_window is not None)


def _window_bound(desc: Descriptor) -> int:
    rules = rules_for(desc.kind, desc.scaling or "")
    return max(rules.product_window, rules.c_window)


def _group_words(size: int) -> tuple[tuple[str, int], ...]:
    return (*((f"a{i}", 32) for i in range(size)), *((f"b{i}", 32) for i in range(size)),
            ("scale_a", 8), ("scale_b", 8), ("q", EXP_WIDTH))


def _group_units(ops: Ops, desc: Descriptor, values: Variables, size: int) -> tuple[BV, Bool,
                                                                                    BV]:
    """``(align_group units at q, group nonzero, group top raw)`` of ``size`` products."""
    group = group_sum(ops, desc, group_terms(ops, desc, values, count=size))
    return align_group(ops, group, values["q"], _window_bound(desc)), group.nonzero, \
        group.top_raw


def group_flip_query(desc: Descriptor, size: int, operand: str) -> Query:
    """Violation: flipping the sign bit of every ``operand`` word of a group of ``size``
    products does not negate the group's aligned units (any ``q``)."""
    bit = sign_bit(desc.a_format if operand == "a" else desc.b_format)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        names = [f"{operand}{i}" for i in range(size)]
        flipped = {**values, **{n: _flip(ops, values[n], bit) for n in names}}
        units, _, _ = _group_units(ops, desc, values, size)
        units_flipped, _, _ = _group_units(ops, desc, flipped, size)
        return ops.ne(units_flipped, ops.neg(units)), {"units": units,
                                                       "units_flipped": units_flipped}

    return Query(f"group-flip-{operand}-{size}", "forall", _group_words(size), body)


def group_units_query(desc: Descriptor, size: int, guarded: bool = True) -> Query:
    """Violation: a group of ``size`` products whose top raw is at most ``q + window bound``
    (when nonzero) has aligned units equal to the minimum of their width (``guarded=False``
    drops that condition: a property that fails, for tests)."""
    bound = _window_bound(desc)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        units, nonzero, top = _group_units(ops, desc, values, size)
        pre = ops.implies(nonzero, ops.sge(values["q"], ops.sub(top, bound))) if guarded \
            else ops.true()
        return ops.and_(pre, ops.eq(units, 1 << (units.width - 1))), {"units": units}

    return Query(f"group-units-{size}", "forall", _group_words(size), body)


def c_units_query(desc: Descriptor) -> Query:
    """Violation: C with raw at most ``q + window bound`` (when nonzero) has aligned units
    equal to the minimum of their width."""
    _, _, fd = formats_of(desc)
    bound = _window_bound(desc)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        c, q = decode_float(ops, fd, values["c"]).term, values["q"]
        units = align_to_window(ops, c, q, bound)
        pre = ops.implies(c.nonzero, ops.sge(q, ops.sub(c.raw, bound)))
        return ops.and_(pre, ops.eq(units, 1 << (units.width - 1))), {"units": units}

    return Query("c-units", "forall", (("c", fd.container_bits), ("q", EXP_WIDTH)), body)


def scale_pair_range_query(desc: Descriptor) -> Query:
    """Violation: the raw exponent of a pair of scale bytes lies outside its static range."""
    fs = scale_format(desc)
    assert fs is not None
    low, high = 2 * fs.min_raw, 2 * raw_ceiling(fs)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        pair = exact_product(ops, decode_float(ops, fs, values["sa"]).term,
                             decode_float(ops, fs, values["sb"]).term)
        return ops.or_(ops.slt(pair.raw, low), ops.sgt(pair.raw, high)), {"raw": pair.raw}

    return Query("raw-range-scale-pair", "forall", (("sa", 8), ("sb", 8)), body)


def encode_zero_query(desc: Descriptor, total_width: int) -> Query:
    """Violation: zero units encode to anything but +0 (any ``q``)."""
    _, _, fd = formats_of(desc)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        word = encode_float(ops, ops.const(0, total_width), values["q"], fd,
                            DESTINATIONS[fd.name])
        return ops.ne(word, 0), {"d": word}

    return Query(f"encode-zero-{fd.name}", "forall", (("q", EXP_WIDTH),), body)


def grouped_quanta(desc: Descriptor) -> tuple[int, int]:
    """The quanta a grouped block path can choose when some term is nonzero:
    ``q = rC - c window`` or ``max(top - product window, S - scale window)``."""
    rules = rules_for(desc.kind, desc.scaling or "")
    ranges, fs = ranges_of(desc), scale_format(desc)
    assert fs is not None and rules.scale_window is not None
    low = min(ranges.c_raw[0] - rules.c_window, ranges.product_raw[0] - rules.product_window)
    high = max(ranges.c_raw[1] - rules.c_window, ranges.product_raw[1] - rules.product_window,
               2 * raw_ceiling(fs) - rules.scale_window)
    return low, high


GROUPED_PATHS = (
    "Composition over the stage rebuild (build_dot's own node; block path summing groups of "
    "products exactly, one truncation per group: NVFP4 groups of 4 on the product path, 16 "
    "on the C-dominant path). decode-flip-* negate only the sign of a decoded word; flip-* "
    "(window bound {bound}) keep every product's and C's raw and nonzero, so top raw, scale "
    "top, c_dominant and both quanta (which read only those and the unflipped scales) are "
    "unchanged, and flip-c negates C's units; group-flip-* negate each group's units at any "
    "q; specials-flip-* keep NaN/Inf and negate an infinite result's sign. smax-step, by "
    "induction over max_raw's trees, gives every group's top raw <= top raw; on the chosen "
    "path every nonzero group and C has raw <= q + {bound} (C-dominant: q = rC - {cw} and "
    "top <= rC; product path: q >= top - {pw}, and a nonzero C there has rC < top), so "
    "group-units-* and c-units give units that are not the minimum of their width; by "
    "sext-odd and add-odd, by induction over exact_sum's tree, each path's sum of negated "
    "units is the negated sum, which is not the minimum (it cannot wrap), and sext-odd "
    "carries the chosen sum to the common width; raw-range-product, raw-range-c and "
    "raw-range-scale-pair put the chosen q in [{low}, {high}], where encode-odd and "
    "apply-specials-odd finish: D' = negated(D). If no product and not C is nonzero, every "
    "unit is 0 and encode-zero gives +0 at any q on both sides.")


def grouped_facts(desc: Descriptor, k: int) -> str:
    """The static no-wrap facts of :data:`GROUPED_PATHS` (checked here)."""
    sums, total = _sums(desc, k)
    for widths, summed in sums:
        if len(widths) * (1 << (max(widths) - 1)) > 1 << (summed - 1):
            raise ValueError(f"an exact sum of {desc.name} could wrap")
    low, high = grouped_quanta(desc)
    if not -(1 << (EXP_WIDTH - 1)) < low - 64 < high + 64 < 1 << (EXP_WIDTH - 1):
        raise ValueError(f"quantum range of {desc.name} leaves no exponent headroom")
    return "; ".join(f"exact sum of n={len(widths)} units of <= {max(widths)} bits in "
                     f"{summed} bits cannot wrap" for widths, summed in sums) + \
        f"; chosen sum carried to {total} bits"


def grouped_lemmas(desc: Descriptor, k: int) -> list[Query]:
    """Every lemma of a grouped block path's row, for A and for B (shared ones once)."""
    sums, total = _sums(desc, k)
    rules = rules_for(desc.kind, desc.scaling or "")
    sizes = sorted({rules.product_group, rules.c_dominant_group})
    bound = _window_bound(desc)
    formats = {fmt.name: fmt for fmt in formats_of(desc)}
    return [*[decode_flip_query(fmt) for fmt in formats.values()],
            *[flipped_term_query(desc, shape, bound) for shape in ("product-a", "product-b", "c")],
            specials_query(desc, k, "a"), specials_query(desc, k, "b"),
            *[group_flip_query(desc, size, operand) for size in sizes for operand in "ab"],
            *[group_units_query(desc, size) for size in sizes], c_units_query(desc),
            *sum_lemmas(sums, total),
            encode_odd_query(desc, total, grouped_quanta(desc)), encode_zero_query(desc, total),
            apply_specials_query(desc), smax_step_query(), raw_range_query(desc, "product"),
            raw_range_query(desc, "c"), scale_pair_range_query(desc)]


def staged(desc: Descriptor) -> bool:
    """Window paths and block paths whose groups are single products (MXF8F6F4)."""
    if desc.family == "window":
        return True
    rules = rules_for(desc.kind, desc.scaling or "")
    return desc.family == "block" and (rules.product_group, rules.c_dominant_group,
                                       rules.scale_window) == (1, 1, None)


Level = list[tuple[BV, BV, int]]
"""Nodes of one level of a sum tree in both runs: ``(node, flipped run's node, bound)``."""


def sum_tree(ops: Ops, leaves: Level) -> list[Level]:
    """The levels of ``ops.sum``'s balanced tree (adjacent pairs, an odd last node carried
    up) over ``leaves`` in both runs, leaves first; an inner node's bound is the sum of its
    children's. On :class:`TraceOps` the nodes are the DAG's own (hash-consing)."""
    level, levels = leaves, [leaves]
    while len(level) > 1:
        paired = [(ops.add(x1, y1), ops.add(x2, y2), bx + by)
                  for (x1, x2, bx), (y1, y2, by) in zip(level[0::2], level[1::2])]
        level = paired + level[len(paired) * 2:]
        levels.append(level)
    return levels


def level_facts(ops: Ops, level: Level) -> Bool:
    """Each node of ``level``: the flipped run's node is the negated node, whose magnitude
    is within its bound (so it is not the minimum)."""
    return ops.all_([ops.and_(ops.eq(x2, ops.neg(x)), ops.sle(-bound, x), ops.sle(x, bound),
                              ops.ne(x, 1 << (x.width - 1)))
                     for x, x2, bound in level])


def terms_differ(ops: Ops, pairs: list[tuple[Term, Term]]) -> Bool:
    """Some term's raw or nonzero flag differs between the two runs."""
    return ops.not_(ops.all_([ops.and_(ops.eq(x.raw, y.raw), ops.iff(x.nonzero, y.nonzero))
                              for x, y in pairs]))


def terms_cut(ops: TraceOps, pairs: list[tuple[Term, Term]], desc: Descriptor
              ) -> dict[int, Node]:
    """Each term's raw and nonzero flag one free variable for both runs (sound once
    :func:`terms_differ` is unsat)."""
    chosen: dict[int, Node] = {}
    for i, (x, y) in enumerate(pairs):
        raw, nonzero = ops.variable(f"cut!raw{i}", x.raw.width), ops.bool_variable(
            f"cut!nonzero{i}")
        for node, free in ((x.raw, raw), (y.raw, raw), (x.nonzero, nonzero),
                           (y.nonzero, nonzero)):
            if chosen.setdefault(node.node.id, free.node) is not free.node:
                raise InternalError(f"{desc.name}: two terms' raws or flags share a node")
    return chosen


def negated_cut(ops: TraceOps, chosen: dict[int, Node], pairs: list[tuple[BV, BV]],
                name: str, desc: Descriptor) -> list[Bool]:
    """Cut each pair ``(x, x2)`` (a node and the flipped run's node) to ``y`` and ``-y``
    in ``chosen``; returns the premises ``y`` is not the minimum."""
    premises = []
    for i, (x, x2) in enumerate(pairs):
        if x.node.id in chosen or x2.node.id in chosen:
            raise InternalError(f"{desc.name}: two cut nodes share a node")
        y = ops.variable(f"cut!{name}!{i}", x.width)
        chosen[x.node.id], chosen[x2.node.id] = y.node, ops.neg(y).node
        premises.append(ops.ne(y, 1 << (y.width - 1)))
    return premises


def window_runs(desc: Descriptor, k: int, operand: str
                ) -> Callable[[Ops, Variables], tuple[BV, BV, dict, dict]]:
    """Both runs of a window path's sign chain: ``(D, D flipped, stages, flipped stages)``,
    each stage record the first ``align`` stage's units, quantum and terms and the sum the
    ``convert`` stage encodes."""
    lane_bit, c_bit = sign_bit(desc.a_format if operand == "a" else desc.b_format), sign_bit(
        desc.d_type)
    width = d_bits(desc)

    def runs(ops: Ops, values: Variables) -> tuple[BV, BV, dict, dict]:
        inputs = dot_inputs(desc, k, values)
        lanes = [_flip(ops, w, lane_bit) for w in getattr(inputs, operand)]
        flipped = dataclasses.replace(inputs, c=_flip(ops, inputs.c, c_bit),
                                      **{operand: lanes})
        d, first = recorded(ops, lambda: run_dot(ops, desc, inputs))
        d2, second = recorded(ops, lambda: run_dot(ops, desc, flipped))
        return (ops.extract(d, width - 1, 0), ops.extract(d2, width - 1, 0),
                *({"units": list(stage["align"]["units"]), "quantum": stage["align"]["quantum"],
                   "terms": list(stage["align"]["terms"]),
                   "sum": stage["convert"]["units"] if "convert" in stage else None}
                  for stage in (first, second)))

    return runs


def window_cover(desc: Descriptor, k: int, operand: str, lanes: int | None = None
                 ) -> list[str]:
    """The counts :func:`unit_chain` covers against the traced DAG: ``lanes + 1`` terms and
    units (the lanes of the first ``align`` stage and C; default all ``k``) in both runs;
    the sum tree's levels then follow from the units (checked by node identity)."""
    ops = TraceOps()
    variables = layout_variables(desc, k)
    _, _, first, second = window_runs(desc, k, operand)(
        ops, {n: ops.variable(n, w) for n, w in variables})
    n = (k if lanes is None else lanes) + 1
    return cover_mismatches([
        ("aligned units (lanes and C)", n, len(first["units"])),
        ("terms (lanes and C)", n, len(first["terms"])),
        ("aligned units of the flipped run", n, len(second["units"])),
        ("terms of the flipped run", n, len(second["terms"]))])


def unit_chain(desc: Descriptor, k: int, operand: str, cut_sum: bool = True) -> list[Query]:
    """Sign symmetry of a window path as a chain of queries on two runs of ``build_dot``'s
    DAG (signs flipped or not), cut at the units its ``align`` stage reports, at each level
    of :func:`spec.accumulate.exact_sum`'s tree over them and at the sum its ``convert``
    stage encodes.

    - ``terms-agree``: every term's raw and nonzero flag are equal in the two runs;
      ``quanta-agree`` (those cut to one variable for both runs): so are the quanta.
    - ``units-negate`` (both quanta one free ``q``; :data:`UNITS_PER_WINDOW_QUERY` units a
      query): each unit of the flipped run is the negated unit; ``units-in-range`` (the
      first run's real nodes): no unit is the most negative value.
    - ``sum-negates`` (one query per level of :func:`sum_tree`; the first with the units
      cut to ``v_i`` and ``-v_i``, ``v_i`` not the minimum; then the level below cut, free
      under its facts): each node of the flipped run is the negated node, within the sum
      of its leaves' bounds (so never the minimum). The root is checked to be the sum the
      ``convert`` stage reports (hash-consing gives back the DAG's own node).
    - ``word-negates`` (sum cut to ``s`` and ``-s``, ``s`` not the minimum, both quanta to
      one ``q``): the violation is unsat.

    Where the traced sum is not that tree (a broken ``exact_sum``), ``word-negates`` is
    asked with the units cut instead of the tree. ``cut_sum=False`` (models whose
    ``convert`` stage is not the sum of the first ``align`` stage's units) asks one
    ``units-negate`` on the real DAG (quanta equal, units negated and never the minimum),
    then ``word-negates`` with the units cut.
    Products are cut in each query (:mod:`proofs.cutpoints`).
    """
    d_format = desc.d_type
    variables = layout_variables(desc, k)
    runs = window_runs(desc, k, operand)

    def terms_agree(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        _, _, first, second = runs(ops, values)
        return terms_differ(ops, list(zip(first["terms"], second["terms"]))), {}

    def quanta_agree(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        """Violation: the quanta differ, with every term's raw and nonzero flag one
        variable for both runs (sound by ``terms-agree``)."""
        _, _, first, second = runs(ops, values)
        violation = ops.ne(first["quantum"], second["quantum"])
        if not isinstance(ops, TraceOps):
            return violation, {}
        chosen = terms_cut(ops, list(zip(first["terms"], second["terms"])), desc)
        (cut,), _ = cut_nodes([violation.node], lambda n: chosen.get(n.id), ops=ops)
        return ops.wrap_bool(cut), {}

    def units_part_negate(part: range) -> QueryBody:
        """Violation: a unit of ``part`` in the flipped run is not the negated unit, with
        both quanta one free ``q`` (sound by ``quanta-agree``)."""
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, second = runs(ops, values)
            violation = ops.any_(ops.ne(second["units"][i], ops.neg(first["units"][i]))
                                 for i in part)
            if not isinstance(ops, TraceOps):
                return violation, {}
            chosen = quantum_cut(ops, first, second)
            (cut,), _ = cut_nodes([violation.node], lambda n: chosen.get(n.id), ops=ops)
            return ops.wrap_bool(cut), {}
        return body

    def units_in_range(part: range) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, _ = runs(ops, values)
            return ops.any_(ops.eq(first["units"][i], 1 << (first["units"][i].width - 1))
                            for i in part), {}
        return body

    def violated(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        d, d2, _, _ = runs(ops, values)
        return ops.ne(d2, negated(ops, d, d_format)), {"d": d, "d_flipped": d2}

    def units_negate(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        _, _, first, second = runs(ops, values)
        bad = [ops.ne(first["quantum"], second["quantum"])]
        for u, v in zip(first["units"], second["units"]):
            bad += [ops.ne(v, ops.neg(u)), ops.eq(u, 1 << (u.width - 1))]
        return ops.any_(bad), {}

    def quantum_cut(ops: TraceOps, first: dict, second: dict) -> dict[int, Node]:
        q = ops.variable("unit!q", first["quantum"].width).node
        return {first["quantum"].node.id: q, second["quantum"].node.id: q}

    def levels(ops: Ops, first: dict, second: dict) -> list[Level]:
        total, total2 = first["sum"], second["sum"]
        if total is None or total2 is None:
            raise InternalError(f"{desc.name}: no convert stage reports the sum")
        leaves = [(ops.sext(u, total.width), ops.sext(v, total.width), (1 << (u.width - 1)) - 1)
                  for u, v in zip(first["units"], second["units"])]
        tree = sum_tree(ops, leaves)
        ((root, root2, bound),) = tree[-1]
        if (root.node.id, root2.node.id) != (total.node.id, total2.node.id):
            raise InternalError(f"{desc.name}: the sum is not ops.sum's tree over the units")
        if bound >= 1 << (total.width - 1):
            raise InternalError(f"{desc.name}: the sum could reach its minimum")
        return tree

    def sum_level(index: int) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, second = runs(ops, values)
            if not isinstance(ops, TraceOps):
                return violated(ops, values)
            tree = levels(ops, first, second)
            chosen = quantum_cut(ops, first, second)
            if index == 1:
                premise = ops.all_(negated_cut(ops, chosen, [
                    (u, v) for u, v in zip(first["units"], second["units"])], "unit", desc))
            else:
                below = tree[index - 1]
                negated_cut(ops, chosen, [(x, x2) for x, x2, _ in below],
                            f"level{index - 1}", desc)
                premise = level_facts(ops, below)
            violation = ops.not_(level_facts(ops, tree[index]))
            (cut, premise_cut), _ = cut_nodes([violation.node, premise.node],
                                              lambda n: chosen.get(n.id), ops=ops)
            return ops.and_(ops.wrap_bool(cut), ops.wrap_bool(premise_cut)), {}
        return body

    def word_negates(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        d, d2, first, second = runs(ops, values)
        violation = ops.ne(d2, negated(ops, d, d_format))
        if not isinstance(ops, TraceOps):
            return violation, {"d": d, "d_flipped": d2}
        chosen = quantum_cut(ops, first, second)
        if cut_sum:
            pairs = [(first["sum"], second["sum"])]
            if pairs[0][0] is None or pairs[0][1] is None:
                raise InternalError(f"{desc.name}: no convert stage reports the sum")
        else:
            pairs = list(zip(first["units"], second["units"]))
        premises = negated_cut(ops, chosen, pairs, "sum" if cut_sum else "unit", desc)
        (cut,), _ = cut_nodes([violation.node], lambda n: chosen.get(n.id), ops=ops)
        return ops.and_(ops.wrap_bool(cut), *premises), {}

    def sum_is_tree() -> bool:
        ops = TraceOps()
        _, _, first, second = runs(ops, {name: ops.variable(name, w) for name, w in variables})
        try:
            levels(ops, first, second)
        except InternalError:
            return False
        return True

    if not cut_sum:
        negate = [Query(f"units-negate ({operand})", "forall", variables, units_negate,
                        cut_products=True, lift=violated)]
    else:
        parts = _parts(0, k + 1, UNITS_PER_WINDOW_QUERY)
        label = {part: "" if len(parts) == 1 else f", units {part.start}-{part.stop - 1}"
                 for part in parts}
        negate = [Query(f"terms-agree ({operand})", "forall", variables, terms_agree,
                        lift=violated),
                  Query(f"quanta-agree ({operand}, term raws and flags cut)", "forall",
                        variables, quanta_agree, lift=violated,
                        cut_at="the terms' raws and nonzero flags"),
                  *(Query(f"units-negate ({operand}, quanta cut{label[part]})", "forall",
                          variables, units_part_negate(part), cut_products=True, lift=violated,
                          cut_at="the quanta") for part in parts),
                  *(Query(f"units-in-range ({operand}{label[part]})", "forall", variables,
                          units_in_range(part), cut_products=True, lift=violated)
                    for part in parts)]
    if not (cut_sum and sum_is_tree()):
        return [*negate, Query(f"word-negates ({operand}, units cut)", "forall", variables,
                              word_negates, cut_products=True, lift=violated,
                              cut_at="the units and quanta the align stage reports")]
    depth = (k + 1 - 1).bit_length()
    return [*negate,
            *(Query(f"sum-negates ({operand}, tree level {index}, "
                    f"{'units' if index == 1 else 'level below'} cut)", "forall", variables,
                    sum_level(index), cut_products=True, lift=violated,
                    cut_at="the units and quanta" if index == 1 else "the tree level below")
              for index in range(1, depth + 1)),
            Query(f"word-negates ({operand}, sum cut)", "forall", variables, word_negates,
                  cut_products=True, lift=violated,
                  cut_at="the sum and quantum the convert stage encodes")]


UNITS_PER_WINDOW_QUERY = 8
"""A window chain's ``units-negate`` and ``units-in-range`` queries cover at most this many
units each."""

PRODUCTS_PER_QUERY = 16
"""The block chain's unit queries cover at most this many products each (a group of more
is one query): one query over every group of NVFP4 at K=64 gives no answer in 120 s."""

LEAVES_PER_QUERY = 16
"""The leaf level of the NVFP4 group sums' trees (one signed element product per leaf) is
asked in queries of at most this many leaves (all 64 of K=64 in one take about 40 s, 16
about 0.5 s)."""

UNITS_PER_RANGE_QUERY = 4
"""The block chain's ``units-in-range`` queries cover at most this many units (and
:data:`PRODUCTS_PER_QUERY` products) each: on MXF8F6F4 at K=32 four units take about 1 s,
sixteen about 6 s; one NVFP4 group of 16 about 0.5 s (z3 2.5 s), four of them 3-6 s
(neither cvc5 nor z3 in 120 s)."""


def _parts(start: int, stop: int, size: int) -> list[range]:
    return [range(i, min(i + size, stop)) for i in range(start, stop, size)]


BlockRuns = Callable[[Ops, Variables], tuple[BV, BV, dict, dict]]


def block_runs(desc: Descriptor, k: int, operand: str, flip_c: bool = True) -> BlockRuns:
    """Both runs of a block path's sign chain: ``(D, D flipped, stages, flipped stages)``,
    each stage record the ``groups`` stage's values with the ``convert`` stage's sum and
    quantum and the ``products`` stage's products."""
    lane_bit, c_bit = sign_bit(desc.a_format if operand == "a" else desc.b_format), sign_bit(
        desc.d_type)
    width = d_bits(desc)

    def runs(ops: Ops, values: Variables) -> tuple[BV, BV, dict, dict]:
        inputs = dot_inputs(desc, k, values)
        lanes = [_flip(ops, w, lane_bit) for w in getattr(inputs, operand)]
        c = _flip(ops, inputs.c, c_bit) if flip_c else inputs.c
        flipped = dataclasses.replace(inputs, c=c, **{operand: lanes})
        d, first = recorded(ops, lambda: run_dot(ops, desc, inputs))
        d2, second = recorded(ops, lambda: run_dot(ops, desc, flipped))
        return (ops.extract(d, width - 1, 0), ops.extract(d2, width - 1, 0),
                *({**stage["groups"], "sum": stage["convert"]["units"],
                   "quantum": stage["convert"]["quantum"],
                   "products": stage["products"]["products"]} for stage in (first, second)))

    return runs


@dataclasses.dataclass(frozen=True)
class BlockShape:
    """What a block path's traced DAG holds, which the block chain's queries must cover:
    units per path (C's last), products per group, and the mismatches found (issue 30)."""

    c_units: int
    product_units: int
    c_group: int
    product_group: int
    mismatches: tuple[str, ...]


def _group_size(groups: list[GroupSum]) -> tuple[int, set[int]]:
    sizes = {len(g.placed) or 1 for g in groups}
    return (next(iter(sizes)) if len(sizes) == 1 else max(sizes, default=1)), sizes


def block_shape(desc: Descriptor, k: int, operand: str, flip_c: bool = True) -> BlockShape:
    """Trace both runs once and read the counts the block chain covers from the DAG: each
    path's units (one per group and C's), the products per group; the chain covers those
    and nothing else, so each count is checked: both runs alike, one unit per group and
    C's, one group size per path, the groups covering the K lanes exactly, a summed group's
    signed element sum present."""
    ops = TraceOps()
    variables = layout_variables(desc, k)
    _, _, first, second = block_runs(desc, k, operand, flip_c)(
        ops, {n: ops.variable(n, w) for n, w in variables})
    counts: list[tuple[str, int, int]] = []
    sizes = {}
    for path, units, groups in (("C-dominant", "c_units", "c_groups"),
                                ("product", "product_units", "product_groups")):
        counts.append((f"{path} units of the flipped run", len(first[units]),
                       len(second[units])))
        counts.append((f"{path} units (one per group and C's)", len(first[groups]) + 1,
                       len(first[units])))
        size, found = _group_size(first[groups])
        sizes[path] = size
        counts.append((f"{path} group sizes", 1, len(found)))
        counts.append((f"{path} lanes in its groups", k, size * len(first[groups])))
        if size > 1:
            counts.append((f"{path} groups with a signed element sum", len(first[groups]),
                           sum(g.total is not None for g in first[groups])))
    counts.append(("products", k, len(first["products"])))
    return BlockShape(len(first["c_units"]), len(first["product_units"]), sizes["C-dominant"],
                      sizes["product"], tuple(cover_mismatches(counts)))


def block_unit_chain(desc: Descriptor, k: int, operand: str,
                     flip_c: bool = True) -> list[Query]:
    """Sign symmetry of a block path as a chain of queries on two runs of ``build_dot``'s
    DAG (signs flipped or not), cut at nodes its ``groups`` and ``convert`` stages report.

    Each query cuts only nodes whose conclusions an earlier query proved on the real
    nodes; a cut node is replaced at every occurrence (in the flipped run by the negated
    variable where the conclusion is negation). In order:

    - ``terms-agree``: every product's and C's raw and nonzero flag are equal in the two
      runs; ``quanta-agree`` (those cut to one variable for both runs): both quanta and
      the C-dominant choice are equal (no multiplier in their cone).
    - Block paths that sum groups of products (NVFP4), per path: ``group-sums-negate``,
      one query per level of ``ops.sum``'s balanced tree inside every group (the leaves,
      each group's signed element products, in queries of :data:`LEAVES_PER_QUERY`):
      each node of the flipped run is the negated node, within a static bound that
      keeps the group's signed sum off the minimum; above the leaves the level below is
      cut. ``group-terms-negate`` (group sums cut to ``t``, ``-t``, ``t`` not the
      minimum): each group's magnitude (after the scale multiply) is equal in the two
      runs and, when nonzero, its sign differs.
    - ``units-negate`` (quanta cut; on NVFP4 also the groups' magnitudes, to one variable
      for both runs, and signs, which differ when the magnitude is nonzero): every
      group's and C's units on both paths of the flipped run are the negated units.
    - ``units-in-range`` (in queries of :data:`UNITS_PER_RANGE_QUERY` units): on the
      first run, the units of the path the datapath chooses are never the minimum.
    - ``c-path-negates`` / ``product-path-negates``: one query per level of the tree of
      :func:`spec.accumulate.exact_sum` over the path's units (:func:`sum_tree`; the
      first with the units cut, free under ``units-in-range``; then the level below cut,
      free under its facts): on the chosen path each node of the flipped run is the
      negated node, within the sum of its leaves' bounds, never the minimum; the root is
      checked to be the path sum the stage reports.
    - ``sum-negates`` (path sums cut): the chosen sum is negated and the quantum equal.
    - ``word-negates`` (sum and quantum cut): the violation, unsat with the sum free
      (not the minimum), its flipped run's ``-s`` and one quantum.

    Products are cut (:mod:`proofs.cutpoints`) in each but ``terms-agree``,
    ``quanta-agree`` and ``units-in-range``, whose bound needs the real group products.
    ``flip_c=False`` leaves C alone (a property that fails, for tests).
    """
    d_format = desc.d_type
    variables = layout_variables(desc, k)
    runs = block_runs(desc, k, operand, flip_c)

    def units_cut(ops: TraceOps, first: dict, second: dict) -> dict[int, Node]:
        chosen = quanta(ops, first, second)
        for i, ((_, u), (_, v)) in enumerate(zip(paths(first), paths(second))):
            if u.node.id in chosen or v.node.id in chosen:
                raise InternalError(f"{desc.name}: two units share a node")
            x = ops.variable(f"unit!{i}", u.width)
            chosen[u.node.id], chosen[v.node.id] = x.node, ops.neg(x).node
        return chosen

    def path_levels(ops: Ops, first: dict, second: dict, on_c: bool
                    ) -> list[list[tuple[BV, BV, int]]]:
        """The levels of ``ops.sum``'s balanced tree in :func:`exact_sum` over the path's
        units, in both runs: ``(node, flipped run's node, bound)`` per node, the leaves
        (each unit sign-extended) first; ``bound`` is the static bound on the node's
        magnitude when no unit is the minimum (a leaf of width w: 2^(w-1) - 1; an inner
        node: the sum of its children's). The last level is the path sum the stage
        reports (checked: hash-consing gives back the DAG's own nodes)."""
        units, units2 = (stage["c_units" if on_c else "product_units"]
                         for stage in (first, second))
        name = "c_total" if on_c else "product_total"
        width = first[name].width
        levels = sum_tree(ops, [(ops.sext(u, width), ops.sext(v, width),
                                 (1 << (u.width - 1)) - 1) for u, v in zip(units, units2)])
        level = levels[-1]
        ((root, root2, bound),) = level
        if (root.node.id, root2.node.id) != (first[name].node.id, second[name].node.id):
            raise InternalError(f"{desc.name}: the path sum is not ops.sum's tree over its units")
        if bound >= 1 << (width - 1):
            raise InternalError(f"{desc.name}: the path sum could reach its minimum")
        return levels

    def path_level(on_c: bool, index: int) -> QueryBody:
        """Violation: on the chosen path ``on_c`` (C-dominant or not), level ``index`` of
        :func:`path_levels` breaks :func:`level_facts`, with the level below cut (the
        units for the first level, free under ``units-in-range``; then the nodes, free
        under the level below's facts)."""
        name = "c_total" if on_c else "product_total"

        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, second = runs(ops, values)
            total, total2 = first[name], second[name]
            chosen_path = first["c_dominant"] if on_c else ops.not_(first["c_dominant"])
            if not isinstance(ops, TraceOps):
                return ops.and_(chosen_path, ops.or_(
                    ops.ne(total2, ops.neg(total)), ops.eq(total, 1 << (total.width - 1)))), {}
            levels = path_levels(ops, first, second, on_c)
            violation = ops.and_(chosen_path, ops.not_(level_facts(ops, levels[index])))
            if index <= 1:
                chosen = units_cut(ops, first, second)
                premise = in_range(ops, first)
            else:
                chosen = quanta(ops, first, second)
                below = levels[index - 1]
                negated_cut(ops, chosen, [(x, x2) for x, x2, _ in below],
                            f"level{index - 1}", desc)
                premise = level_facts(ops, below)
            (cut, premise_cut), _ = cut_nodes([violation.node, premise.node],
                                              lambda n: chosen.get(n.id), ops=ops)
            return ops.and_(ops.wrap_bool(cut), ops.wrap_bool(premise_cut)), {}

        return body

    def path_facts(ops: Ops, stage: dict, other: dict) -> Bool:
        """The two path queries' conclusions (on the runs' nodes)."""
        facts = []
        for on_c, name in ((True, "c_total"), (False, "product_total")):
            total, total2 = stage[name], other[name]
            chosen_path = stage["c_dominant"] if on_c else ops.not_(stage["c_dominant"])
            facts.append(ops.implies(chosen_path, ops.and_(
                ops.eq(total2, ops.neg(total)), ops.ne(total, 1 << (total.width - 1)))))
        return ops.all_(facts)

    def sum_negates(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        _, _, first, second = runs(ops, values)
        total = first["sum"]
        violation = ops.not_(ops.and_(ops.eq(second["sum"], ops.neg(total)),
                                      ops.ne(total, 1 << (total.width - 1)),
                                      ops.eq(second["quantum"], first["quantum"])))
        if not isinstance(ops, TraceOps):
            return violation, {}
        chosen = quanta(ops, first, second)
        for name in ("c_total", "product_total"):
            if first[name].node.id in chosen or second[name].node.id in chosen:
                raise InternalError(f"{desc.name}: two path sums share a node")
            chosen[first[name].node.id] = ops.variable(f"cut!{name}", first[name].width).node
            chosen[second[name].node.id] = ops.variable(f"cut!{name}!flipped",
                                                        second[name].width).node
        premise_node = ops.and_(path_facts(ops, first, second),
                                ops.iff(first["c_dominant"], second["c_dominant"])).node
        (cut, premise), _ = cut_nodes([violation.node, premise_node],
                                      lambda n: chosen.get(n.id), ops=ops)
        return ops.and_(ops.wrap_bool(cut), ops.wrap_bool(premise)), {}

    def word_negates(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        d, d2, first, second = runs(ops, values)
        violation = ops.ne(d2, negated(ops, d, d_format))
        if not isinstance(ops, TraceOps):
            return violation, {"d": d, "d_flipped": d2}
        q = first["quantum"]
        quantum = ops.variable("cut!q", q.width)
        chosen = {q.node.id: quantum.node, second["quantum"].node.id: quantum.node}
        if len(chosen) != 2:
            raise InternalError(f"{desc.name}: the two runs' quanta share a node")
        premises = negated_cut(ops, chosen, [(first["sum"], second["sum"])], "sum", desc)
        (cut,), _ = cut_nodes([violation.node], lambda n: chosen.get(n.id), ops=ops)
        return ops.and_(ops.wrap_bool(cut), *premises), {}

    def paths(stage: dict) -> list[tuple[bool, BV]]:
        """``(on the C-dominant path, units)`` of every unit the stage reports."""
        return [*((True, u) for u in stage["c_units"]),
                *((False, u) for u in stage["product_units"])]

    def quanta(ops: TraceOps, first: dict, second: dict) -> dict[int, Node]:
        dominant = ops.bool_variable("cut!c_dominant").node
        chosen: dict[int, Node] = {first["c_dominant"].node.id: dominant,
                                   second["c_dominant"].node.id: dominant}
        if len(chosen) != 2:
            raise InternalError(f"{desc.name}: the two runs' C-dominant flags share a node")
        for name in ("c_quantum", "product_quantum"):
            free = ops.variable(f"cut!{name}", first[name].width).node
            for stage in (first, second):
                if chosen.setdefault(stage[name].node.id, free) is not free:
                    raise InternalError(f"{desc.name}: the two quanta share a node")
        return chosen

    def violated(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        d, d2, _, _ = runs(ops, values)
        return ops.ne(d2, negated(ops, d, d_format)), {"d": d, "d_flipped": d2}

    def term_pairs(first: dict, second: dict) -> list[tuple[Term, Term]]:
        """Every product and C, in both runs."""
        return [*zip(first["products"], second["products"]),
                (first["c_term"], second["c_term"])]

    def terms_agree(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        _, _, first, second = runs(ops, values)
        return terms_differ(ops, term_pairs(first, second)), {}

    def quanta_agree(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        """Violation: the quanta or the C-dominant choice differ between the runs, with
        each product's and C's raw and nonzero flag cut to one variable for both runs
        (sound by ``terms-agree``)."""
        _, _, first, second = runs(ops, values)
        violation = ops.not_(ops.and_(
            ops.eq(first["c_quantum"], second["c_quantum"]),
            ops.eq(first["product_quantum"], second["product_quantum"]),
            ops.iff(first["c_dominant"], second["c_dominant"])))
        if not isinstance(ops, TraceOps):
            return violation, {}
        chosen = terms_cut(ops, term_pairs(first, second), desc)
        (cut,), _ = cut_nodes([violation.node], lambda n: chosen.get(n.id), ops=ops)
        return ops.wrap_bool(cut), {}

    def negations(ops: Ops, first: dict, second: dict, part: range) -> Bool:
        pairs = list(zip(paths(first), paths(second)))
        return ops.all_([ops.eq(v, ops.neg(u)) for (_, u), (_, v) in
                         (pairs[i] for i in part)])

    def units_negate(part: range) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, second = runs(ops, values)
            violation = ops.not_(negations(ops, first, second, part))
            if not isinstance(ops, TraceOps):
                return violation, {}
            chosen = quanta(ops, first, second)
            premises = []
            if summed:
                for i, (g, h) in enumerate(group_pairs(first, second, part)):
                    m, s, s2 = (ops.variable(f"cut!mag{i}", g.mag.width),
                                ops.bool_variable(f"cut!negative{i}"),
                                ops.bool_variable(f"cut!negative{i}!flipped"))
                    for node, free in ((g.mag, m), (h.mag, m), (g.negative, s),
                                       (h.negative, s2)):
                        if chosen.setdefault(node.node.id, free.node) is not free.node:
                            raise InternalError(f"{desc.name}: two group terms share a node")
                    premises.append(ops.implies(ops.ne(m, 0), ops.xor_(s, s2)))
            (cut,), _ = cut_nodes([violation.node], lambda n: chosen.get(n.id), ops=ops)
            return ops.and_(ops.wrap_bool(cut), *premises), {}
        return body

    def group_pairs(first: dict, second: dict, part: range) -> list[tuple[GroupSum, GroupSum]]:
        """The groups (both runs) whose units ``part`` covers (C's units are no group)."""
        groups = [*first["c_groups"], None, *first["product_groups"], None]
        groups2 = [*second["c_groups"], None, *second["product_groups"], None]
        return [(groups[i], groups2[i]) for i in part if groups[i] is not None]

    def signed_total(group: GroupSum) -> BV:
        """The group's signed exact sum before the abs and the scale multiply."""
        if group.total is None:
            raise InternalError(f"{desc.name}: a group of one product has no signed sum")
        return group.total

    def group_levels(ops: Ops, first: dict, second: dict, on_c: bool) -> list[Level]:
        """The levels of the sum trees of every group of a path, both runs, all groups'
        nodes of one level together; the leaves are the groups' signed element products
        (``GroupSum.placed``), bound so that a group of n leaves cannot reach the minimum
        of its sum's width, the roots the groups' signed sums (``GroupSum.total``; each
        checked: ``ops.sum`` over the leaves gives the group's own node back)."""
        name = "c_groups" if on_c else "product_groups"
        size = c_size if on_c else p_size
        depth = (size - 1).bit_length()
        merged: list[Level] = [[] for _ in range(depth + 1)]
        for g, h in zip(first[name], second[name]):
            total, total2 = signed_total(g), signed_total(h)
            bound = ((1 << (total.width - 1)) >> depth) - 1
            levels = sum_tree(ops, [(x, x2, bound) for x, x2 in
                                    zip(g.placed, h.placed)])
            ((root, root2, _),) = levels[-1]
            if len(levels) != depth + 1 or (root.node.id, root2.node.id) != (
                    total.node.id, total2.node.id):
                raise InternalError(f"{desc.name}: a group sum is not ops.sum's tree")
            for merged_level, level in zip(merged, levels):
                merged_level.extend(level)
        return merged

    def group_tree(on_c: bool, index: int, leaves: range | None = None) -> QueryBody:
        """Violation: level ``index`` of :func:`group_levels` breaks :func:`level_facts`
        (the leaves, those in ``leaves``: on the real DAG; above: with the level below cut,
        free under its facts)."""
        part = range(0, c_count - 1) if on_c else range(c_count, c_count + p_count - 1)

        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, second = runs(ops, values)
            if not isinstance(ops, TraceOps):
                return ops.not_(negations(ops, first, second, part)), {}
            levels = group_levels(ops, first, second, on_c)
            if index == 0:
                assert leaves is not None
                return ops.not_(level_facts(ops, levels[0][leaves.start:leaves.stop])), {}
            violation = ops.not_(level_facts(ops, levels[index]))
            chosen: dict[int, Node] = {}
            below = levels[index - 1]
            negated_cut(ops, chosen, [(x, x2) for x, x2, _ in below],
                        f"group_level{index - 1}", desc)
            (cut, premise), _ = cut_nodes([violation.node, level_facts(ops, below).node],
                                          lambda n: chosen.get(n.id), ops=ops)
            return ops.and_(ops.wrap_bool(cut), ops.wrap_bool(premise)), {}
        return body

    def terms_negate(part: range) -> QueryBody:
        """Violation: with each group's signed sum cut (``t`` and ``-t``, ``t`` not the
        minimum, by ``group-sums-negate``), a group's magnitude differs between the runs
        or, when nonzero, its sign is the same."""
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, second = runs(ops, values)
            if not isinstance(ops, TraceOps):
                return ops.not_(negations(ops, first, second, part)), {}
            chosen: dict[int, Node] = {}
            facts, premises = [], []
            for i, (g, h) in enumerate(group_pairs(first, second, part)):
                total, total2 = signed_total(g), signed_total(h)
                t = ops.variable(f"cut!group_sum{i}", total.width)
                if total.node.id in chosen or total2.node.id in chosen:
                    raise InternalError(f"{desc.name}: two group sums share a node")
                chosen[total.node.id], chosen[total2.node.id] = t.node, ops.neg(t).node
                premises.append(ops.ne(t, 1 << (t.width - 1)))
                facts += [ops.eq(h.mag, g.mag),
                          ops.implies(ops.ne(g.mag, 0), ops.xor_(g.negative, h.negative))]
            (cut,), _ = cut_nodes([ops.not_(ops.all_(facts)).node],
                                  lambda n: chosen.get(n.id), ops=ops)
            return ops.and_(ops.wrap_bool(cut), *premises), {}
        return body

    def in_range(ops: Ops, stage: dict, part: range | None = None) -> Bool:
        dominant = stage["c_dominant"]
        units = paths(stage)
        return ops.all_([ops.implies(dominant if on_c else ops.not_(dominant),
                                     ops.ne(u, 1 << (u.width - 1)))
                         for on_c, u in (units[i] for i in (part or range(len(units))))])

    def units_in_range(part: range) -> QueryBody:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            _, _, first, _ = runs(ops, values)
            return ops.not_(in_range(ops, first, part)), {}
        return body

    shape = block_shape(desc, k, operand, flip_c)
    c_size, p_size = shape.c_group, shape.product_group
    summed = min(p_size, c_size) > 1
    c_count, p_count = shape.c_units, shape.product_units
    parts = [*_parts(0, c_count, max(1, PRODUCTS_PER_QUERY // c_size)),
             *_parts(c_count, c_count + p_count, max(1, PRODUCTS_PER_QUERY // p_size))]
    range_parts = [*_parts(0, c_count, max(1, min(UNITS_PER_RANGE_QUERY,
                                                  PRODUCTS_PER_QUERY // c_size))),
                   *_parts(c_count, c_count + p_count, max(1, min(
                       UNITS_PER_RANGE_QUERY, PRODUCTS_PER_QUERY // p_size)))]
    grouped_parts = [part for part in parts
                     if any(i not in (c_count - 1, c_count + p_count - 1) for i in part)]

    def label(part: range) -> str:
        return "" if len(parts) == 1 else f", units {part.start}-{part.stop - 1}"

    def levels(count: int) -> list[int]:
        return [0] if count == 1 else list(range(1, (count - 1).bit_length() + 1))

    def group_depth(size: int) -> int:
        return (size - 1).bit_length()

    group_queries = [] if not summed else [
        *(Query(f"group-sums-negate ({operand}, {path} groups, tree level {level}"
                f"{', level below cut' if level else ''}"
                f"{f', leaves {leaves.start}-{leaves.stop - 1}' if not level else ''})",
                "forall", variables, group_tree(on_c, level, leaves), cut_products=True,
                lift=violated, cut_at="the tree level below" if level else "")
          for on_c, path, size in ((True, "C-dominant", c_size), (False, "product", p_size))
          for level in range(group_depth(size) + 1)
          for leaves in (_parts(0, k, LEAVES_PER_QUERY) if level == 0 else [None])),
        *(Query(f"group-terms-negate ({operand}, group sums cut{label(part)})", "forall",
                variables, terms_negate(part), cut_products=True, lift=violated,
                cut_at="the groups' signed sums")
          for part in grouped_parts)]
    cut_units_at = "the quanta and the groups' magnitudes and signs" if summed else "the quanta"
    cut_units_name = "quanta and group terms" if summed else "quanta"
    return [Query(f"terms-agree ({operand})", "forall", variables, terms_agree, lift=violated),
            Query(f"quanta-agree ({operand}, term raws and flags cut)", "forall", variables,
                  quanta_agree, lift=violated, cut_at="the terms' raws and nonzero flags"),
            *group_queries,
            *(Query(f"units-negate ({operand}, {cut_units_name} cut{label(part)})", "forall",
                    variables,
                    units_negate(part), cut_products=True, lift=violated, cut_at=cut_units_at)
              for part in parts),
            *(Query(f"units-in-range ({operand}{label(part)})", "forall", variables,
                    units_in_range(part), lift=violated)
              for part in range_parts),
            *(Query(f"c-path-negates ({operand}, tree level {level}, "
                    f"{'units' if level <= 1 else 'level below'} cut)", "forall", variables,
                    path_level(True, level), cut_products=True,
                    cut_at="the units and quanta" if level <= 1 else "the tree level below")
              for level in levels(c_count)),
            *(Query(f"product-path-negates ({operand}, tree level {level}, "
                    f"{'units' if level <= 1 else 'level below'} cut)", "forall", variables,
                    path_level(False, level), cut_products=True,
                    cut_at="the units and quanta" if level <= 1 else "the tree level below")
              for level in levels(p_count)),
            Query(f"sum-negates ({operand}, path sums cut)", "forall", variables, sum_negates,
                  cut_products=True, cut_at="the path sums and quanta"),
            Query(f"word-negates ({operand}, sum cut)", "forall", variables, word_negates,
                  cut_products=True, cut_at="the sum and quantum the convert stage encodes")]


def check(desc: Descriptor, k: int, settings: Settings) -> Row:
    """Two chains (flip A and C, flip B and C) on two runs of ``build_dot``'s own DAG, its
    multipliers cut (:mod:`proofs.cutpoints`), each query its own time limit. The counts the
    chains cover (units, terms, groups and their products) are first checked against the
    traced DAG: a mismatch is an ``unknown`` row naming it (issue 30)."""
    window = desc.family == "window"
    if window:
        detail = ("two runs of build_dot (signs flipped), cut at every term's raw and nonzero "
                  "flag and the quanta (terms-agree, quanta-agree: q' = q), at the units its "
                  "align stage reports (units-negate with q cut: u' = -u; units-in-range: u "
                  "never the minimum), at "
                  "each level of ops.sum's tree over them (sum-negates: each node negated, "
                  "within its leaves' bound) and at the sum and quantum its convert stage "
                  "encodes (word-negates proves D' = -D with them free), and at the "
                  "multipliers; each query assumes on its cut variables only what an "
                  "earlier query proved on the real nodes, each its own time limit")
        mismatches = [*window_cover(desc, k, "a"), *window_cover(desc, k, "b")]
    else:
        detail = ("two runs of build_dot (signs flipped), cut at the quanta, C-dominant choice "
                  "and units its groups stage reports (after every product's raw and nonzero "
                  "flag, cut for the quanta; on grouped paths also at each group's "
                  "signed sum, magnitude and sign), at each level of ops.sum's trees (inside "
                  "the groups and over each path's units), at its two path sums and at the "
                  "sum and quantum its convert stage encodes (each query assumes on its cut "
                  "variables only what an earlier query proved on the real nodes), and at "
                  "the multipliers; each query its own time limit")
        mismatches = [m for operand in "ab" for m in block_shape(desc, k, operand).mismatches]
    detail += ("; sign bits and the D width from proofs/reference.py (SEMANTICS.md section "
               "1), the canonical NaN from proofs/constants.py (section 2.2)")
    if mismatches:
        return uncovered_row("sign-symmetry", desc, k, mismatches, CHAIN, detail)
    chain = unit_chain if window else block_unit_chain
    queries = [*chain(desc, k, "a"), *chain(desc, k, "b")]
    row = check_queries("sign-symmetry", desc, k, queries, settings, CHAIN, detail)
    return lift_refuted(row, dataclasses.replace(sign_query(desc, k, "a"), cut_products=False),
                        settings)


def lemma_row(desc: Descriptor, k: int, settings: Settings) -> Row:
    """The stage lemmas of the earlier argument (:data:`COMPOSITION`): a row that is never
    ``proved``, kept for the lemmas' own tests."""
    if grouped(desc):
        if not rebuilds_datapath(desc, k):
            raise ValueError(f"the grouped rebuild of {desc.name} is not build_dot's node")
        rules = rules_for(desc.kind, desc.scaling or "")
        low, high = grouped_quanta(desc)
        composition = GROUPED_PATHS.format(bound=_window_bound(desc), cw=rules.c_window,
                                           pw=rules.product_window, low=low, high=high)
        return check_queries("sign-symmetry", desc, k, grouped_lemmas(desc, k), settings,
                             LEMMAS, f"{composition} Static: {grouped_facts(desc, k)}.")
    if not rebuilds_datapath(desc, k):
        raise ValueError(f"the staged rebuild of {desc.name} is not build_dot's node")
    _, facts = static_facts(desc, k)
    composition = COMPOSITION + (BLOCK_PATHS if desc.family == "block" else "")
    return check_queries("sign-symmetry", desc, k, stage_lemmas(desc, k),
                         settings, LEMMAS, f"{composition} Static: {facts}.")


def applies(desc: Descriptor) -> bool:
    return desc.family in ("window", "block")


PROPERTIES: tuple[Property, ...] = ()
"""``sign-symmetry`` is a declaration on the equivalence engine now
(:mod:`proofs.families.sign_symmetry`); this module keeps the chain's queries that the
per-architecture matrix and the breakers' small-K counterexamples still use."""
