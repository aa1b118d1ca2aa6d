"""Sign symmetry of the float datapaths (covers spec/formats, spec/specials, spec/accumulate,
spec/convert, spec/window, spec/blockscaled).

Flipping the format's own sign bit of every A element and of C negates D,
except that a zero D stays +0 and a NaN stays the canonical NaN; the same
for B. Truncation toward zero (SEMANTICS.md sections 2.5 and 2.7) is what
makes this hold: a rounding mode that is not symmetric would break it. The
property compares the specification with itself on changed inputs, so it
needs no second formulation.

The window datapaths (section 2) and the MXF8F6F4 block paths (section 4,
products truncated one by one) are proved by ``lemmas`` over the stage
rebuild of :mod:`proofs.stages` (:data:`COMPOSITION`): flipping a sign
negates each aligned term and leaves every raw exponent (so the quantum)
alone; the exact sum of negated units is the negated sum (per-step lemmas
on ``sext`` and ``add``, units never the minimum by the alignment lemmas of
:mod:`proofs.error_bound`); conversion and specials are odd. Block paths
that sum groups of products (NVFP4, MXF4) are asked monolithically.
"""

from __future__ import annotations

from tcspec.proofs.core import (
    LEMMAS,
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
from tcspec.proofs.error_bound import (
    ranges_of,
    shape_variables,
    smax_step_query,
    static_facts,
    term_lemmas,
    term_of,
)
from tcspec.proofs.stages import (
    formats_of,
    rebuilds_datapath,
    scaled_stages,
    traced_inputs,
    window_stages,
)
from tcspec.spec.accumulate import align_to_window
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.blockscaled import rules_for
from tcspec.spec.catalog import DotInputs, output_width
from tcspec.spec.convert import encode_float
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.formats import EXP_WIDTH, FORMATS, Decoded, FloatFormat, decode_float
from tcspec.spec.specials import Specials, apply_specials, canonical_nan, classify_specials
from tcspec.spec.window import DESTINATIONS, WINDOW_BITS

REQUIRED = ("dense-tf32", "dense-bf16", "dense-f16", "dense-e4m3", "dense-e5m2", "dense-e2m3",
            "dense-e3m2", "dense-e2m1", "dense-nvfp4", "dense-mx-e4m3")


def sign_bit(name: str) -> int:
    """The bit of a raw word that holds the format's sign (section 1 container layout)."""
    fmt = FORMATS[name]
    assert isinstance(fmt, FloatFormat)
    return fmt.container_bits - 1


def _flip(ops: Ops, word: BV, bit: int) -> BV:
    return ops.bvxor(word, 1 << bit)


def negated(ops: Ops, d: BV, d_format: FloatFormat) -> BV:
    """``-d`` as the datapath must give it: a zero stays +0, a NaN stays canonical."""
    top = d.width - 1
    magnitude = ops.extract(d, top - 1, 0)
    is_zero = ops.eq(magnitude, 0)
    is_nan = ops.eq(d, canonical_nan(d_format))
    flipped = _flip(ops, d, top)
    return ops.ite(ops.or_(is_zero, is_nan), d, flipped)


def sign_query(desc: Descriptor, k: int, operand: str, flip_c: bool = True) -> Query:
    """Violation: flipping every ``operand`` (``a`` or ``b``) sign and C's does not negate D
    (``flip_c=False`` leaves C alone: a property that fails, for tests)."""
    d_format = FORMATS[desc.d_type]
    assert isinstance(d_format, FloatFormat)
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
        width = output_width(desc)
        d, d_flipped = ops.extract(d, width - 1, 0), ops.extract(d_flipped, width - 1, 0)
        return ops.ne(d_flipped, negated(ops, d, d_format)), {"d": d, "d_flipped": d_flipped}

    return Query(f"flip-{operand}-and-c", "forall", variables, body)


# ------------------------------------------------------------------ lemmas


def flipped_term_query(desc: Descriptor, shape: str) -> Query:
    """Violation: flipping the sign bit of A (``product-a``), B (``product-b``) or C (``c``)
    changes the term's raw or nonzero, or does not negate its aligned units (any ``q``)."""
    fa, fb, fd = formats_of(desc)
    term_shape = "c" if shape == "c" else "product"
    flipped_word = {"product-a": ("a", fa), "product-b": ("b", fb), "c": ("c", fd)}[shape]

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        name, fmt = flipped_word
        flipped_values = {**values, name: _flip(ops, values[name], sign_bit(fmt.name))}
        plain = term_of(ops, desc, term_shape, values)
        flipped = term_of(ops, desc, term_shape, flipped_values)
        q = values["q"]
        units = align_to_window(ops, plain, q, WINDOW_BITS)
        units_flipped = align_to_window(ops, flipped, q, WINDOW_BITS)
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


def encode_odd_query(desc: Descriptor, total_width: int) -> Query:
    """Violation: for units ``s`` (not the minimum) and ``q`` in range,
    ``encode(-s, q) != negated(encode(s, q))``."""
    _, _, fd = formats_of(desc)
    low, high = ranges_of(desc).quantum

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
    if desc.family == "block":
        run = scaled_stages(ops, desc, inputs)
        return [([u.width for u in units], total.width)
                for units, total in zip(run.units, run.totals)], run.total.width
    window = window_stages(ops, desc, inputs)
    return [([u.width for u in window.units], window.total.width)], window.total.width


BLOCK_PATHS = (
    " Block path (MXF8F6F4, groups of one product): both the C-dominant and the product "
    "path are negated as above (c_dominant reads only raws and nonzero flags; the chosen "
    "path has raw <= q + 25 for every nonzero term), and sext-odd carries the chosen sum to "
    "the common width.")


def stage_lemmas(desc: Descriptor, k: int) -> list[Query]:
    """Every lemma of a stage-lemma row, for A and for B (shared ones once)."""
    sums, total = _sums(desc, k)
    extensions = sorted({(w, summed) for widths, summed in sums for w in widths}
                        | {(summed, total) for _, summed in sums if summed != total})
    formats = {fmt.name: fmt for fmt in formats_of(desc)}
    return [*[decode_flip_query(fmt) for fmt in formats.values()],
            flipped_term_query(desc, "product-a"), flipped_term_query(desc, "product-b"),
            flipped_term_query(desc, "c"), specials_query(desc, k, "a"),
            specials_query(desc, k, "b"), *[sext_odd_query(w, wide) for w, wide in extensions],
            *[add_odd_query(w) for w in sorted({summed for _, summed in sums})],
            encode_odd_query(desc, total), apply_specials_query(desc),
            smax_step_query(), *term_lemmas(desc)]


def staged(desc: Descriptor) -> bool:
    """Window paths and block paths whose groups are single products (MXF8F6F4)."""
    if desc.family == "window":
        return True
    rules = rules_for(desc.kind, desc.scaling or "")
    return desc.family == "block" and (rules.product_group, rules.c_dominant_group,
                                       rules.scale_window) == (1, 1, None)


def check(desc: Descriptor, k: int, settings: Settings) -> Row:
    if not staged(desc):
        queries = [sign_query(desc, k, "a"), sign_query(desc, k, "b")]
        return check_queries("sign-symmetry", desc, k, queries, settings)
    if not rebuilds_datapath(desc, k):
        raise ValueError(f"the staged rebuild of {desc.name} is not build_dot's node")
    _, facts = static_facts(desc, k)
    composition = COMPOSITION + (BLOCK_PATHS if desc.family == "block" else "")
    return check_queries("sign-symmetry", desc, k, stage_lemmas(desc, k),
                         settings, LEMMAS, f"{composition} Static: {facts}.")


def applies(desc: Descriptor) -> bool:
    return desc.family in ("window", "block")


PROPERTIES = [Property(
    "sign-symmetry", "negating every A (or B) element and C negates D (zero stays +0, "
    "NaN stays canonical)",
    ("spec.formats", "spec.specials", "spec.accumulate", "spec.convert", "spec.window",
     "spec.blockscaled"),
    REQUIRED, applies, check, fast=(("dense-e2m1", 4), ("dense-mx-e4m3", 32)))]
