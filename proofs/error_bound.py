"""Error bound of the window datapaths against the exact sum (covers spec/window,
spec/accumulate, spec/convert, spec/formats, spec/specials).

For finite inputs (no special applies) whose D is finite, with ``n = K + 1``
terms (the K products and C; on a sparse path the K/2 lanes it keeps and C) and
``q`` the window quantum: ``|D - exact| < n * 2^q + ulp(D)`` (SEMANTICS.md
sections 2.4-2.7): each term loses less than one quantum to truncation toward
zero, and the RZ conversion loses less than one unit in the last place of D
(``ulp(D)``: ``2^(E-23)`` for a normal D of exponent E, ``2^-149`` for a
subnormal or zero D); an F16 D rounds to nearest, so half of its ulp.
``exact``, ``q`` and the terms are :mod:`proofs.reference`'s, written from
SEMANTICS.md alone: the exact sum of the *untruncated* products and C.

Method ``chain`` (:func:`bound_chain`): one query over the whole datapath and
the wide sum does not finish, and neither do chain steps that state exact
values in the reference's 543-bit register (bit-blasting does not scale
there: the bare triangle inequality on free 543-bit values is not decided in
60 s). So the bit-vector queries state only narrow facts of ``build_dot``'s own
nodes (the quanta, each unit as a floor, the sum of units, D as a floor of the
sum), and the composition into the bound is four queries in linear integer
and real arithmetic over those facts read in units of ``2^q``, where the wide
sum is one real per term. Every query is a solver query; on dense-tf32 at
K=8 the chain proves in about 5 s.

The witness (property ``error-bound-witness``, F32 D) is one query over the
datapath and the reference's wide sum: an input whose error is at least
``(K - 1)(1 - 2^-(fA + fB)) 2^q`` with ``ulp(D) <= 4 * 2^q`` (:func:`witness_query`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from tcspec.proofs import reference
from tcspec.proofs.constants import (
    ARCH_D_FRACTION_BITS,
    ARCH_ZERO_EXPONENT,
    arch_d_fraction_bits,
    arch_steps,
    arch_window_bits,
)
from tcspec.proofs.core import (
    CHAIN,
    MONOLITHIC,
    InternalError,
    Property,
    Query,
    Row,
    Settings,
    Variables,
    arithmetic_query,
    check_queries,
    cover_mismatches,
    dot_inputs,
    every_datapath,
    hypothesis_query,
    layout_variables,
    run_dot,
    summed_lanes,
    uncovered_row,
)
from tcspec.proofs.cutpoints import recorded
from tcspec.proofs.floor import floor_shift_holds, nearest_shift_holds
from tcspec.proofs.reference import BoundParts
from tcspec.proofs.rulebook import sparse as rulebook_sparse
from tcspec.proofs.stages import formats_of, scaled_stages, traced_inputs, window_stages
from tcspec.smt.trace import Node, TraceOps, cut_nodes
from tcspec.spec.accumulate import align_to_window, exact_product
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.descriptor import Descriptor
from tcspec.spec.exact import raw_ceiling
from tcspec.spec.formats import EXP_WIDTH, FORMATS, FloatFormat, Term, decode_float
from tcspec.spec.window import WINDOW_BITS, default_clamp

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


def bound_query(desc: Descriptor, k: int) -> Query:
    """Violation of the bound as one query over the datapath and the reference's wide sum
    (too slow for a solver; replayed on the scalar lowering by the tests)."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        d = run_dot(ops, desc, dot_inputs(desc, k, values))
        parts = reference_parts(ops, desc, k, values, d)
        return parts.violation, {"d": d, "error": parts.error, "bound": parts.bound}

    return Query("error-below-bound", "forall", layout_variables(desc, k), body)


def loss_bits(desc: Descriptor) -> int:
    """``fA + fB``: a product's significand has at most that many fraction bits, so the most
    a product truncates away is ``rho = 1 - 2^-(fA + fB)`` of a quantum (section 2.5)."""
    fa, fb = reference.LAYOUTS[desc.a_format], reference.LAYOUTS[desc.b_format]
    return fa.frac_bits + fb.frac_bits


def witness_query(desc: Descriptor, k: int) -> Query:
    """Witness: finite inputs, finite F32 D with ``ulp(D) <= 4 * 2^q`` (D at the window's top)
    and ``|D - exact| >= (K - 1) rho 2^q`` (K the summed lanes)
    (:func:`loss_bits`), against the reference's wide sum: the bound's ``(K + 1) 2^q`` is
    within ``2 + (K - 1) 2^-(fA + fB)`` quanta of the error some input reaches. To keep the
    search small every A lane repeats lane 0, and every B lane too."""
    bits = loss_bits(desc)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        d = run_dot(ops, desc, inputs)
        parts = reference_parts(ops, desc, k, values, d)
        quantum = parts.fixed.power(ops, parts.quantum)
        width = parts.fixed.width
        lanes = summed_lanes(desc, k)
        need = ops.mul(quantum, ops.const((lanes - 1) * ((1 << bits) - 1), width))
        near = ops.and_(ops.uge(ops.shl(parts.error, bits), need),
                        ops.ule(parts.ulp, ops.mul(quantum, ops.const(4, width))))
        hints = [ops.eq(word, lanes[0]) for lanes in (inputs.a, inputs.b) for word in lanes[1:]]
        return ops.and_(parts.applies, near, *hints), {"d": d, "quantum": parts.quantum,
                                                       **{n: v for n, v in values.items()}}

    return Query("error-near-bound", "exists", layout_variables(desc, k), body)


def term_lemmas(desc: Descriptor) -> list[Query]:
    """Raw ranges, nonzero flags and alignment of the product and C terms."""
    return [query(desc, shape) for query in (raw_range_query, nonzero_query, align_query)
            for shape in ("product", "c")]


def bound_cover(desc: Descriptor, k: int) -> list[str]:
    """The counts the chain covers against the traced DAG: one aligned unit per term of the
    reference (the summed products and C), the ``n`` terms of the composition (issue 30)."""
    ops, inputs = traced_inputs(desc, k)
    _, stages = recorded(ops, lambda: run_dot(ops, desc, inputs))
    if "align" not in stages or "convert" not in stages:
        return ["stages: the chain cuts the align and convert stages, the DAG reports "
                f"{sorted(stages)}"]
    return cover_mismatches([("aligned units (the summed products and C)",
                              summed_lanes(desc, k) + 1, len(stages["align"]["units"]))])


def chain_detail(desc: Descriptor) -> str:
    """The row's method, with the window rules of the other architectures where they apply."""
    if desc.family != "arch":
        return CHAIN_DETAIL
    window = window_of(desc)
    return (f"{CHAIN_DETAIL}; this path by ARCHITECTURES.md 1.3-1.4 (proofs/constants.py): "
            f"F = {window.fraction_bits} in place of 25, every term in R (a zero factor or C "
            f"at {ARCH_ZERO_EXPONENT}), C {window.c_format}, D {window.d_format}")


def check(desc: Descriptor, k: int, settings: Settings) -> Row:
    mismatches = bound_cover(desc, k)
    if mismatches:
        return uncovered_row("error-bound", desc, k, mismatches, CHAIN, chain_detail(desc))
    return check_queries("error-bound", desc, k, bound_chain(desc, k), settings, CHAIN,
                         chain_detail(desc))


def check_witness(desc: Descriptor, k: int, settings: Settings) -> Row:
    bits = loss_bits(desc)
    return check_queries("error-bound-witness", desc, k, [witness_query(desc, k)], settings,
                         MONOLITHIC, "exists, against proofs/reference.py's wide sum: "
                         f"|D - exact| >= (K - 1)(1 - 2^-{bits}) 2^q with ulp(D) <= 4 2^q, "
                         "under the search hint (every A lane equal, every B lane equal); "
                         "refuted means no witness under the hint")


def applies(desc: Descriptor) -> bool:
    """The unscaled window paths (dense, mixed, sparse; F32 or F16 D) and the other
    architectures' one-window fused dots on formats the reference decodes."""
    if desc.family == "arch":
        return (desc.algorithm == "fused-dot" and arch_steps(desc) == 1
                and desc.a_format in reference.LAYOUTS and desc.b_format in reference.LAYOUTS)
    return desc.family == "window"


def witness_applies(desc: Descriptor) -> bool:
    """F32 D only (e8m13 included): an F16 D's half ulp at the window's top is 2^14 quanta,
    so the bound's ``n 2^q`` is beside it too small for a witness to show."""
    return applies(desc) and desc.d_type == "f32"


COVERS = ("spec.window", "spec.accumulate", "spec.convert", "spec.formats", "spec.specials")
REQUIRED = every_datapath(applies)
WITNESS_REQUIRED = every_datapath(witness_applies)

PROPERTIES = [
    Property("error-bound", "|D - exact| < (K+1) 2^q + ulp(D) for finite inputs and finite D "
             "(F16 D, rounded to nearest: ulp(D) / 2)",
             COVERS, REQUIRED, applies, check, fast=(("dense-e2m1", 2),)),
    Property("error-bound-witness", "an input with |D - exact| >= (K-1)(1 - 2^-(fA+fB)) 2^q and "
             "ulp(D) <= 4 2^q (the bound's n 2^q is nearly reached)", COVERS, WITNESS_REQUIRED,
             witness_applies, check_witness, fast=(("dense-e4m3", 2),)),
]


# ------------------------------------------------------------------ the chain

LANES_PER_QUERY = 1
"""Terms per ``aligned`` query: the quantum is cut, so each lane's cone is its own words; one
term a query lets z3 give second opinions within 30 s (eight a query: none)."""


@dataclass(frozen=True)
class BoundRun:
    """One traced run of ``build_dot`` (the nodes its ``align`` and ``convert`` stages report,
    and D) beside the reference of :mod:`proofs.reference` (terms, quantum, D decoded)."""

    parts: BoundParts
    word: BV
    d: reference.Value
    units: list[BV]
    align_q: BV
    convert_q: BV
    total: BV


def window_of(desc: Descriptor) -> reference.Window:
    """The reference's window rules for ``desc``: SEMANTICS.md section 2.4 on tcgen05; on
    the other architectures' one-window fused dots ARCHITECTURES.md 1.3-1.4 (F from the
    table, every term in the maximum with a zero at -126, C in its own format, the e8m13
    accumulator of Ada and Hopper fp8), constants from :mod:`proofs.constants`."""
    if desc.family != "arch":
        return reference.tcgen05_window(desc.a_format, desc.b_format, desc.d_type)
    d_format = "e8m13" if arch_d_fraction_bits(desc) == ARCH_D_FRACTION_BITS["e8m13"] \
        else desc.d_type
    return reference.Window(arch_window_bits(desc), zero_exponent=ARCH_ZERO_EXPONENT,
                            c_format=desc.c_format, d_format=d_format,
                            c_widened=desc.c_format != desc.d_type)


def reference_parts(ops: Ops, desc: Descriptor, k: int, values: Variables, d: BV
                    ) -> BoundParts:
    """:func:`reference.error_bound_parts` on the lanes the datapath sums: every lane of a
    dense path; on a sparse path the lanes the rule book's section 5 compaction keeps
    (:mod:`proofs.rulebook.sparse`), the bound claimed only with every selector legal."""
    inputs = dot_inputs(desc, k, values)
    a, b, legal = inputs.a, inputs.b, None
    if desc.sparse:
        a, b, legal = rulebook_sparse.kept_lanes(ops, desc.name, k, values)
    parts = reference.error_bound_parts(ops, desc.a_format, desc.b_format, a, b, inputs.c, d,
                                        window=window_of(desc))
    if legal is None:
        return parts
    inputs_ok, applies = ops.and_(parts.inputs_ok, legal), ops.and_(parts.applies, legal)
    return replace(parts, inputs_ok=inputs_ok, applies=applies,
                   violation=ops.and_(parts.violation, legal))


def bound_run(ops: Ops, desc: Descriptor, k: int, values: Variables) -> BoundRun:
    inputs = dot_inputs(desc, k, values)
    out, stages = recorded(ops, lambda: run_dot(ops, desc, inputs))
    if "align" not in stages or "convert" not in stages:
        raise InternalError(f"{desc.name}: build_dot reported no align or convert stage")
    word = out
    units = list(stages["align"]["units"])
    parts = reference_parts(ops, desc, k, values, word)
    if len(units) != len(parts.terms):
        raise InternalError(f"{desc.name}: {len(units)} aligned units for "
                            f"{len(parts.terms)} terms (bound_cover rules this out first)")
    return BoundRun(parts, word, reference.decode(ops, window_of(desc).d_format, word), units,
                    stages["align"]["quantum"], stages["convert"]["quantum"],
                    stages["convert"]["units"])


def _not_minimum(ops: Ops, x: BV) -> Bool:
    return ops.ne(x, 1 << (x.width - 1))


def _same_quantum(ops: Ops, spec_q: BV, q: BV) -> Bool:
    return ops.eq(ops.resize_signed(spec_q, q.width), q)


def window_facts(ops: Ops, desc: Descriptor, run: BoundRun, q: BV) -> Bool:
    """Section 2.4 read off the reference at quantum ``q``: ``q`` in its static range and
    every nonzero term at most F above it (``r_i <= q + F``, F = 25 on tcgen05; a widened C
    by its leading bit's exponent)."""
    window = window_of(desc)
    low, high = reference.quantum_range(desc.a_format, desc.b_format, window.c_format, window)
    top = ops.add(q, window.fraction_bits)
    terms = run.parts.terms
    raws = [t.raw for t in terms]
    if window.c_widened:
        raws[-1] = reference.leading_exponent(ops, terms[-1])
    return ops.and_(ops.sge(q, low), ops.sle(q, high),
                    *[ops.implies(t.nonzero, ops.sle(r, top)) for t, r in zip(terms, raws)])


def aligned_fact(ops: Ops, run: BoundRun, i: int, q: BV) -> Bool:
    """Unit ``u_i`` is the term truncated toward zero at ``2^q`` (section 2.5):
    ``|u_i| = floor(mag_i 2^(r_i - f_i - q))``, ``u_i`` has the term's sign or is 0, and is
    not the minimum of its width."""
    t, u = run.parts.terms[i], run.units[i]
    shift = ops.sub(ops.sub(t.raw, t.frac_bits), q)
    signed = ops.ite(t.negative, ops.sle(u, 0), ops.sge(u, 0))
    return ops.and_(_not_minimum(ops, u), signed,
                    floor_shift_holds(ops, t.mag, shift, ops.abs_signed(u)))


def summed_width(run: BoundRun) -> int:
    """A width in which the sum of the units cannot wrap (``n 2^(w-1) <= 2^(W-1)``)."""
    widest = max(max(u.width for u in run.units), run.total.width)
    return widest + len(run.units).bit_length() + 1


def summed_fact(ops: Ops, run: BoundRun) -> Bool:
    """The sum the convert stage encodes is the integer sum of the units (section 2.6):
    equal to it in a register where no sum of the units wraps, and not the minimum."""
    width = summed_width(run)
    exact = ops.sum([ops.sext(u, width) for u in run.units])
    return ops.and_(ops.eq(ops.sext(run.total, width), exact), _not_minimum(ops, run.total))


def encoded_fact(ops: Ops, run: BoundRun, q: BV, nearest: bool) -> Bool:
    """A finite D is ``S 2^q`` at its own LSB ``2^e``, ``e = r_D - f_D`` (section 2.7), and a
    nonzero D has the sign of S: F32 truncates (``mag_D = floor(|S| 2^(q - e))``), F16
    rounds to nearest (``|mag_D - |S| 2^(q - e)| <= 1/2``)."""
    d = run.d
    finite = ops.not_(ops.or_(d.nan, d.inf))
    lsb = ops.sub(d.raw, d.frac_bits)
    signed = ops.implies(d.nonzero, ops.iff(d.negative, ops.sign(run.total)))
    holds = nearest_shift_holds if nearest else floor_shift_holds
    rounded = holds(ops, ops.abs_signed(run.total), ops.sub(q, lsb), d.mag)
    return ops.implies(finite, ops.and_(signed, rounded))


def _label(part: range) -> str:
    return f"t{part.start}" if len(part) == 1 else f"t{part.start}-t{part.stop - 1}"


def _lanes(n: int) -> list[range]:
    return [range(start, min(start + LANES_PER_QUERY, n)) for start in range(0, n, LANES_PER_QUERY)]


def bound_chain(desc: Descriptor, k: int) -> list[Query]:
    """The error bound as a chain (:data:`CHAIN_DETAIL`).

    The bit-vector queries are on ``build_dot``'s own DAG. A later one replaces chosen nodes,
    at every occurrence, by free variables (:func:`smt.trace.cut_nodes`) and assumes on them
    only what earlier queries proved of the real nodes, so the real nodes are one instance
    and each unsat answer holds of the real DAG. The last three queries are in linear
    integer and real arithmetic over the integer readings of those conclusions
    (:func:`compose_script`), where the wide exact sum costs nothing.
    """
    variables = layout_variables(desc, k)
    n = summed_lanes(desc, k) + 1
    nearest = window_of(desc).d_format in reference.NEAREST

    def lift(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        run = bound_run(ops, desc, k, values)
        return run.parts.violation, {"d": run.word, "quantum": run.parts.quantum}

    def cut_query(name: str, cut_at: str, build: Callable[[TraceOps, BoundRun],
                  tuple[dict[int, Node], list[Bool], Bool]]) -> Query:
        def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
            if not isinstance(ops, TraceOps):
                return lift(ops, values)
            run = bound_run(ops, desc, k, values)
            chosen, premises, conclusion = build(ops, run)
            roots = [run.parts.inputs_ok.node, conclusion.node, *(p.node for p in premises)]
            new, _ = cut_nodes(roots, lambda node: chosen.get(node.id), ops=ops)
            inputs_ok, concluded, *assumed = (ops.wrap_bool(r) for r in new)
            return ops.and_(inputs_ok, *assumed, ops.not_(concluded)), {}
        return Query(name, "forall", variables, body, cut_at=cut_at, lift=lift)

    def quantum_cut(ops: TraceOps, run: BoundRun) -> tuple[dict[int, Node], BV]:
        q = ops.variable("cut!q", run.parts.quantum.width)
        chosen = {run.parts.quantum.node.id: q.node}
        for spec_q in (run.align_q, run.convert_q):
            chosen.setdefault(spec_q.node.id, ops.resize_signed(q, spec_q.width).node)
        return chosen, q

    def possible(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        run = bound_run(ops, desc, k, values)
        return run.parts.applies, {"d": run.word, "quantum": run.parts.quantum, **values}

    def window(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        run = bound_run(ops, desc, k, values)
        q = run.parts.quantum
        held = ops.and_(_same_quantum(ops, run.align_q, q), _same_quantum(ops, run.convert_q, q),
                        window_facts(ops, desc, run, q))
        return ops.and_(run.parts.inputs_ok, ops.not_(held)), {"quantum": q}

    def aligned(part: range) -> Callable[[TraceOps, BoundRun], tuple[dict[int, Node],
                                                                      list[Bool], Bool]]:
        def build(ops: TraceOps, run: BoundRun) -> tuple[dict[int, Node], list[Bool], Bool]:
            chosen, q = quantum_cut(ops, run)
            return chosen, [window_facts(ops, desc, run, q)], ops.and_(
                *[aligned_fact(ops, run, i, q) for i in part])
        return build

    def summed(ops: TraceOps, run: BoundRun) -> tuple[dict[int, Node], list[Bool], Bool]:
        chosen, q = quantum_cut(ops, run)
        for i, u in enumerate(run.units):
            if u.node.id in chosen:
                raise InternalError(f"{desc.name}: two cut-points share a node")
            chosen[u.node.id] = ops.variable(f"cut!u{i}", u.width).node
        return chosen, [window_facts(ops, desc, run, q),
                        *[_not_minimum(ops, u) for u in run.units]], summed_fact(ops, run)

    def encoded(ops: TraceOps, run: BoundRun) -> tuple[dict[int, Node], list[Bool], Bool]:
        chosen, q = quantum_cut(ops, run)
        chosen[run.total.node.id] = ops.variable("cut!s", run.total.width).node
        return chosen, [window_facts(ops, desc, run, q), _not_minimum(ops, run.total)], \
            encoded_fact(ops, run, q, nearest)

    lanes = [cut_query(f"aligned {_label(part)} (quantum cut)", "the quantum",
                       aligned(part)) for part in _lanes(n)]
    return [hypothesis_query(variables, possible),
            Query("window", "forall", variables, window, lift=lift),
            *lanes,
            cut_query("summed (units, quantum cut)", "the units and quantum", summed),
            cut_query("encoded (sum, quantum cut)", "the sum and quantum", encoded),
            arithmetic_query("aligned reading", lane_reading_script),
            arithmetic_query(f"sum before the conversion (n = {n})", lambda: before_script(n)),
            arithmetic_query("encoded reading", lambda: encode_reading_script(nearest)),
            arithmetic_query(f"bound (n = {n})", lambda: compose_script(n))]


# ------------------------------------------------------------ the arithmetic steps

CHAIN_DETAIL = (
    "chain on build_dot's own DAG, cut at the quantum, units and sum its align and convert "
    "stages report, against proofs/reference.py (SEMANTICS sections 1, 2.4-2.7; sparse: the "
    "lanes the rule book's section 5 compaction keeps, every selector legal), every query "
    "under finite inputs with some term nonzero: window (both stage quanta are the reference "
    "q, q in range, every nonzero term r_i <= q + 25); aligned, q cut (|u_i| = "
    "floor(mag_i 2^(r_i - f_i - q)), u_i of the term's sign, not the minimum); summed, units "
    "and q cut (S = sum u_i with no wrap); encoded, S and q cut (finite D, e_D = r_D - f_D, "
    "sign of S: F32 mag_D = floor(|S| 2^(q - e_D)); F16 |mag_D - |S| 2^(q - e_D)| <= 1/2). "
    "Then, in linear integer and real arithmetic (z3, cvc5 second), the integer readings of "
    "those facts in units of 2^q, with tau_i = t_i / 2^q, delta = D / 2^q, lambda = ulp(D) / "
    "2^q (F16: half of it): aligned reading (|tau_i - u_i| < 1), sum before the conversion "
    "(|S - sum tau_i| < n), encoded reading (|delta - S| <= lambda), bound (|delta - sum "
    "tau_i| < n + lambda, which is |D - exact| < n 2^q + lambda 2^q)")


def _script(declarations: list[tuple[str, str]], assertions: list[str]) -> str:
    lines = ["(set-logic QF_LIRA)"]
    lines += [f"(declare-const {name} {sort})" for name, sort in declarations]
    lines += [f"(assert {a})" for a in assertions]
    return "\n".join([*lines, "(check-sat)"]) + "\n"


def _abs(x: str) -> str:
    return f"(ite (>= {x} 0.0) {x} (- {x}))"


def lane_reading_script() -> str:
    """Violation of: ``M = |U|`` (an integer), ``U`` of the term's sign (or 0), ``M <= A <
    M + 1`` (``M = floor(A)``, ``A = mag 2^shift >= 0``), ``tau = (-1)^neg A`` imply
    ``|tau - U| < 1``."""
    return _script([("U", "Int"), ("M", "Int"), ("A", "Real"), ("neg", "Bool"),
                    ("tau", "Real")],
                   ["(= M (ite (>= U 0) U (- U)))", "(ite neg (<= U 0) (>= U 0))",
                    "(>= A 0.0)", "(<= (to_real M) A)", "(< A (+ (to_real M) 1.0))",
                    "(= tau (ite neg (- A) A))",
                    f"(not (< {_abs('(- tau (to_real U))')} 1.0))"])


def encode_reading_script(nearest: bool = False) -> str:
    """Violation of the encoded reading in units of ``2^q``, ``|delta| = mag_D 2^(e - q)``:
    truncation (F32) ``|delta| <= |S| < |delta| + lambda`` with ``lambda = 2^(e - q)``;
    rounding to nearest (F16) ``||delta| - |S|| <= lambda`` with ``lambda = 2^(e - q) / 2``;
    with a nonzero D of the sign of S, either implies ``|delta - S| <= lambda``."""
    s = "(to_real S)"
    if nearest:
        rounded = [f"(<= {_abs(f'(- mag {_abs(s)})')} lam)"]
    else:
        rounded = [f"(<= mag {_abs(s)})", f"(< {_abs(s)} (+ mag lam))"]
    return _script([("S", "Int"), ("mag", "Real"), ("lam", "Real"), ("neg", "Bool"),
                    ("delta", "Real")],
                   ["(> lam 0.0)", "(>= mag 0.0)", *rounded,
                    "(= delta (ite neg (- mag) mag))", "(=> (> mag 0.0) (= neg (< S 0)))",
                    f"(not (<= {_abs(f'(- delta {s})')} lam))"])


def _sums(n: int) -> tuple[list[str], list[str], str, str]:
    units = [f"u{i}" for i in range(n)]
    taus = [f"tau{i}" for i in range(n)]
    total = f"(+ {' '.join(taus)})" if n > 1 else taus[0]
    unit_sum = f"(+ {' '.join(units)})" if n > 1 else units[0]
    return units, taus, total, unit_sum


def before_script(n: int) -> str:
    """Violation of: ``|tau_i - u_i| < 1`` for the ``n`` terms and ``S = sum u_i`` imply
    ``|S - sum tau_i| < n`` (the sum before the conversion, section 2.6)."""
    units, taus, total, unit_sum = _sums(n)
    assertions = [f"(< {_abs(f'(- {t} (to_real {u}))')} 1.0)" for t, u in zip(taus, units)]
    assertions += [f"(= S {unit_sum})", f"(not (< {_abs(f'(- (to_real S) {total})')} {n}.0))"]
    declarations = [(u, "Int") for u in units] + [(t, "Real") for t in taus]
    return _script([*declarations, ("S", "Int")], assertions)


def compose_script(n: int) -> str:
    """Violation of: ``|tau_i - u_i| < 1`` for the ``n`` terms, ``S = sum u_i``, ``|delta -
    S| <= lambda`` imply ``|delta - sum tau_i| < n + lambda``."""
    units, taus, total, unit_sum = _sums(n)
    assertions = [f"(< {_abs(f'(- {t} (to_real {u}))')} 1.0)" for t, u in zip(taus, units)]
    assertions += [f"(= S {unit_sum})", "(> lam 0.0)",
                   f"(<= {_abs('(- delta (to_real S))')} lam)",
                   f"(not (< {_abs(f'(- delta {total})')} (+ {n}.0 lam)))"]
    declarations = [(u, "Int") for u in units] + [(t, "Real") for t in taus]
    return _script([*declarations, ("S", "Int"), ("delta", "Real"), ("lam", "Real")],
                   assertions)
