"""Error bounds of the architecture fused dots, and how far chaining moves D (issue 20 part 4;
covers spec/fused_dot, spec/mmasim, spec/cdna3, spec/convert, spec/accumulate).

Every constant comes from :mod:`proofs.constants` (ARCHITECTURES.md), the words are decoded
and multiplied by :mod:`proofs.reference` (SEMANTICS.md section 1), and the only spec values
a query reads are the D words of ``build_dot``. With ``E`` the exact sum of C and the K
products, ``R`` the largest term exponent over the whole instruction (C and every product,
a product's exponent ``eA + eB`` with a zero factor's exponent -126,
ARCHITECTURES.md 1.1), ``F`` the window bits and ``m`` the D
fraction bits (23, or 13 for e8m13):

- one NVIDIA window: ``|D - E| < (K + 1) 2^(R - F) + ulp(D)`` (truncation of each term to
  units of ``2^(R - F)``, then RZ to ``m`` bits);
- two split-K steps of ``h = K/2`` lanes: the first step's D1 has ``|D1| < 2^(R + G)``,
  ``G = 2 + ceil(log2(h + 1))``, so its window exponent is at most ``R + G - 1`` and
  ``|D - E| < (h + 1) 2^(R - F) + 2^(R + G - 1 - m) + (h + 1) 2^(R + G - 1 - F) + ulp(D)``;
- CDNA3, ``s`` groups of ``g`` products, F32 RNE between (section 3.2): a group with join
  exponent ``M`` is within ``(g + 3) 2^(M - 24) + 2^(M - 31) + ulp(D_j)`` of its exact
  value (products RZ, fp8 parity floors, sum and C floors or the C drop, RNE), and
  ``M <= R + (j - 1)(G - 1)``, ``G = 2 + ceil(log2(g + 1))``, ``ulp(D_1) <= 2^(R+G-24)``.

``chaining-bound`` states ``|D_chained - D_single| < B_chained + B_single + 2^(R - 32)``
(the last term: :data:`MARGIN`) where
``D_single`` is the same instruction's parameters in one window (split-K: ``steps = 1``;
CDNA3: one group of K). ``chaining-witness`` asks for inputs with ``|D_chained -
D_single| >= B / 2^i`` for growing ``i``: the first witness shows how near the bound the
datapath goes; a threshold proved unreachable above it is a tighter proved bound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from tcspec.proofs import reference as ref
from tcspec.proofs.constants import (
    ARCH_ZERO_EXPONENT,
    CDNA3_C_BITS,
    CDNA3_PRODUCT_BITS,
    CDNA3_SUM_BITS,
    arch_d_fraction_bits,
    arch_steps,
    arch_window_bits,
    cdna3_group,
)
from tcspec.proofs.core import (
    MONOLITHIC,
    PROVED,
    REFUTED,
    UNKNOWN,
    WITNESS,
    Outcome,
    Query,
    Row,
    Settings,
    Variables,
    check_queries,
    decide,
    dot_inputs,
    hypothesis_query,
    layout_variables,
    row_from_outcomes,
    run_dot,
    uncovered_row,
)
from tcspec.spec.bitvec import BV, Bool, Ops

REFERENCE_FORMAT = {"tf32": "tf32", "bf16": "bf16", "f16": "f16", "e4m3": "e4m3",
                    "e5m2": "e5m2", "xf32": "tf32", "f32": "f32"}
"""Operand formats the reference decodes (xf32 is read as tf32, ARCHITECTURES.md 3.2)."""

HEADROOM = 16


def model(desc: Any, k: int) -> Any:
    """``desc`` at logical ``k`` with its parameters unchanged (a model of the instruction
    when ``k != desc.k``: the same steps of ``k / steps`` lanes)."""
    return desc if k == desc.k else dataclasses.replace(desc, k=k)


def single_window(desc: Any) -> Any:
    """The same instruction's parameters in one window: split-K ``steps = 1``, CDNA3 one
    group of K."""
    if desc.algorithm == "cdna3-rd":
        return dataclasses.replace(desc, params=dataclasses.replace(
            desc.params, group=desc.k, steps=1))
    return dataclasses.replace(desc, params=dataclasses.replace(desc.params, steps=1))


def chained_steps(desc: Any) -> int:
    """Windows of the instruction by the table (never ``desc.params``)."""
    if desc.algorithm == "cdna3-rd":
        return desc.k // cdna3_group(desc)
    return arch_steps(desc)


def applies_bound(desc: Any) -> bool:
    """F32 D (or e8m13) NVIDIA fused dots and CDNA3 non-fp8 groups, at most two windows."""
    if getattr(desc, "family", "") != "arch" or desc.d_type != "f32" or desc.c_format != "f32":
        return False
    if desc.algorithm == "fused-dot":
        return desc.a_format in REFERENCE_FORMAT and desc.b_format in REFERENCE_FORMAT
    if desc.algorithm == "cdna3-rd":
        return desc.a_format in ("xf32", "f16", "bf16") and chained_steps(desc) <= 2
    return False


def applies_chaining(desc: Any) -> bool:
    return applies_bound(desc) and chained_steps(desc) == 2


MARGIN = 32
"""The chaining bound is proved as ``B + 2^(R - MARGIN)``: the lemmas' strict inequalities,
read in truncated units, lose a few units of ``2^(R - ANCHOR)`` each (:func:`_lemma_terms`),
so the composition can only conclude the bound plus that negligible term."""

ANCHOR = 40
"""The register's unit is ``u = 2^(R - ANCHOR)``: below every bound term (``2^(R - 31)`` at
the finest), so truncating values to it moves each by less than one unit."""

REACH = 24
"""Bits above ``2^R`` the register holds; a value beyond counts as a violation (sound)."""


COMPOSE_REACH = REACH + 8
"""The compose query's reach: a window lemma proves its D within ``2^(R_w + REACH)`` and
``R_w <= R + G - 1`` with ``G - 1 <= 6``, so at the instruction's ``R`` with 8 more bits
no lemma-constrained value is out of reach (the premise may say so)."""


class Measure:
    """The reference's view of one instruction's inputs: ``R``, finiteness, ``E``, and
    values truncated toward zero to units ``u = 2^(R - ANCHOR)``.

    A query states the *weakened* violation ``|T(x) - T(y)| + slack >= floor(B / u)`` (or a
    value out of the register's reach), where ``T`` truncates to ``u`` and ``slack`` counts
    the units truncation can hide, so its unsat proves ``|x - y| < B``.
    """

    def __init__(self, ops: Ops, desc: Any, inputs: Any, anchor: BV | None = None,
                 reach: int = REACH) -> None:
        fa, fb = REFERENCE_FORMAT[desc.a_format], REFERENCE_FORMAT[desc.b_format]
        k = len(inputs.a)
        terms, values = ref.dot_terms(ops, fa, fb, "f32", inputs.a, inputs.b, inputs.c)
        self.ops = ops
        zero = ops.const(ARCH_ZERO_EXPONENT, ref.EXP)

        def exponent(v: ref.Value) -> BV:
            return ops.ite(v.nonzero, v.raw, zero)

        xs, ys, cv = values[:k], values[k:2 * k], values[-1]
        self.exponents = [ops.add(exponent(x), exponent(y)) for x, y in zip(xs, ys)]
        self.exponents.append(exponent(cv))
        self.top = ops.smax_all(self.exponents)
        self.anchor = self.top if anchor is None else anchor
        self.terms = terms
        self.width = ANCHOR + reach + 8
        self.finite = ops.not_(ops.any_([ops.or_(v.nan, v.inf) for v in values]))
        self.outside: list[Bool] = []

    def place(self, negative: Bool, mag: BV, exponent: BV) -> BV:
        """``(-1)^negative * mag * 2^exponent`` truncated toward zero to units ``u``; a value
        at or beyond ``2^(R + REACH)`` is recorded in :attr:`outside`."""
        ops = self.ops
        shift = ops.sub(ops.resize_signed(exponent, ref.EXP),
                        ops.sub(self.anchor, ANCHOR))
        self.outside.append(ops.and_(ops.ne(mag, 0),
                                     ops.sgt(shift, self.width - 2 - mag.width)))
        wide = ops.shift_signed(ops.zext(mag, self.width), ops.resize_signed(shift,
                                                                             self.width))
        return ops.ite(negative, ops.neg(wide), wide)

    def term(self, t: ref.Product) -> BV:
        placed = self.place(t.negative, t.mag, self.ops.sub(t.raw, t.frac_bits))
        return self.ops.ite(t.nonzero, placed, self.ops.const(0, self.width))

    @property
    def exact(self) -> BV:
        """``T``-truncated terms of ``E`` summed: within ``K + 1`` units of ``E``."""
        return self.ops.sum([self.term(t) for t in self.terms])

    def power(self, offset: int, count: int = 1) -> BV:
        """``floor(count * 2^(R + offset) / u)`` (a constant when the register is anchored
        at this measure's own ``R``)."""
        if self.anchor is self.top:
            assert offset + ANCHOR >= 0
            return self.ops.const(count << (offset + ANCHOR), self.width)
        ops = self.ops
        one = self.place(ops.false(), ops.const(1, 1), ops.add(self.top, offset))
        return ops.mul(one, ops.const(count, self.width))

    def word(self, d: BV) -> tuple[BV, BV, Bool]:
        """``(T(value), raw, finite)`` of an F32 D word."""
        ops = self.ops
        dv = ref.decode(ops, "f32", d)
        return self.term(ref.as_term(dv)), dv.raw, ops.not_(ops.or_(dv.nan, dv.inf))

    def ulp(self, raw: BV, fraction_bits: int) -> BV:
        """``floor(2^(raw - fraction_bits) / u)``."""
        ops = self.ops
        return self.place(ops.false(), ops.const(1, 1), ops.sub(raw, fraction_bits))

    def beyond(self) -> Bool:
        return self.ops.any_(self.outside)


def growth(lanes: int) -> int:
    """``G``: a window of ``lanes`` products and a C below ``2^(R+1)`` sums below
    ``2^(R + G)``."""
    return 2 + lanes.bit_length()


def bound_of(m: Measure, desc: Any, k: int, d_raw: BV, steps: int) -> BV:
    """The module docstring's bound for ``desc``'s arithmetic in ``steps`` windows of the
    table's shape, at the final D's raw exponent ``d_raw``."""
    if desc.algorithm == "cdna3-rd":
        group = k // steps
        g = growth(group)
        per = [m.power(-CDNA3_PRODUCT_BITS, group + 3), m.power(-CDNA3_SUM_BITS)]
        total = m.ops.sum(per)
        if steps == 2:
            lift = g - 1
            total = m.ops.sum([total, m.power(g - CDNA3_C_BITS),
                               m.power(lift - CDNA3_PRODUCT_BITS, group + 3),
                               m.power(lift - CDNA3_SUM_BITS)])
        elif steps != 1:
            raise ValueError(f"{desc.name}: the bound is stated for one or two groups")
        return m.ops.add(total, m.ulp(d_raw, 23))
    f, frac = arch_window_bits(desc), arch_d_fraction_bits(desc)
    if steps == 1:
        return m.ops.add(m.power(-f, k + 1), m.ulp(d_raw, frac))
    if steps != 2:
        raise ValueError(f"{desc.name}: the bound is stated for one or two steps")
    half = k // 2
    g = growth(half)
    return m.ops.sum([m.power(-f, half + 1), m.power(g - 1 - frac),
                      m.power(g - 1 - f, half + 1), m.ulp(d_raw, frac)])


def _runs(ops: Ops, desc: Any, k: int, values: Variables, chained: bool
          ) -> tuple[Measure, BV, BV | None, Bool, BV]:
    """``(measure, D, D_single or None, applies, bound)`` for the rows of this module."""
    inputs = dot_inputs(desc, k, values)
    m = Measure(ops, desc, inputs)
    d = run_dot(ops, desc, inputs)
    _, raw, finite = m.word(d)
    steps = chained_steps(desc) if desc.algorithm == "cdna3-rd" else arch_steps(desc)
    bound = bound_of(m, desc, k, raw, steps)
    applies = ops.and_(m.finite, finite)
    if not chained:
        return m, d, None, applies, bound
    d1 = run_dot(ops, single_window(desc), inputs)
    _, raw1, finite1 = m.word(d1)
    return (m, d, d1, ops.and_(applies, finite1),
            ops.add(bound, bound_of(m, single_window(desc), k, raw1, 1)))


def error_query(desc: Any, k: int) -> Query:
    """Violation: finite inputs and D with ``|D - E|`` at least the bound."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        m, d, _, applies, bound = _runs(ops, desc, k, values, False)
        value, _, _ = m.word(d)
        error = ops.abs_signed(ops.sub(value, m.exact))
        slack = ops.const(k + 2, m.width)
        violation = ops.or_(m.beyond(), ops.uge(ops.add(error, slack), bound))
        return ops.and_(applies, violation), {"d": d, "error_units": error,
                                              "bound_units": bound}

    return Query("error-below-bound", "forall", layout_variables(desc, k), body)


def _difference(ops: Ops, m: Measure, d: BV, d1: BV) -> BV:
    return ops.abs_signed(ops.sub(m.word(d)[0], m.word(d1)[0]))


def chaining_query(desc: Any, k: int) -> Query:
    """Violation: finite inputs, D and D_single with ``|D - D_single| >= B``."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        m, d, d1, applies, bound = _runs(ops, desc, k, values, True)
        assert d1 is not None
        diff = _difference(ops, m, d, d1)
        violation = ops.or_(m.beyond(), ops.uge(ops.add(diff, ops.const(2, m.width)),
                                                ops.add(bound, m.power(-MARGIN))))
        return ops.and_(applies, violation), {"d": d, "d_single": d1,
                                              "difference_units": diff, "bound_units": bound}

    return Query("chaining-below-bound", "forall", layout_variables(desc, k), body)


def witness_query(desc: Any, k: int, shift: int) -> Query:
    """Witness: finite inputs, D and D_single with ``|D - D_single| >= B / 2^shift``."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        m, d, d1, applies, bound = _runs(ops, desc, k, values, True)
        assert d1 is not None
        diff = _difference(ops, m, d, d1)
        wide = m.width + shift + 2
        limit = ops.add(bound, m.power(-MARGIN))
        near = ops.uge(ops.shl(ops.zext(diff, wide), shift),
                       ops.add(ops.zext(limit, wide), ops.const(2 + (2 << shift), wide)))
        return ops.and_(applies, near, ops.not_(m.beyond())), {
            "d": d, "d_single": d1, **values}

    return Query(f"difference-at-least-bound/2^{shift}", "exists",
                 layout_variables(desc, k), body)


def default_k(desc: Any) -> int:
    """Model K: NVIDIA split-K at 2 lanes per step (4), one window at 4 lanes; CDNA3 at the
    instruction's K (its groups are the rule)."""
    if desc.algorithm == "cdna3-rd":
        return desc.k
    return min(desc.k, 4)


def bound_witness(desc: Any, k: int) -> Query:
    """The bound's hypothesis can hold: finite inputs (the reference's decoder) and a finite
    D, shown with D (issue 30: a witness for every hypothesis)."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        _, d, _, applies, _ = _runs(ops, desc, k, values, False)
        return applies, {"d": d, **values}

    return hypothesis_query(layout_variables(desc, k), body)


def check_error(desc: Any, k: int, settings: Settings) -> Row:
    model_desc = model(desc, k)
    f = "cdna3 24/31/24" if desc.algorithm == "cdna3-rd" else f"F={arch_window_bits(desc)}"
    return check_queries("arch-error-bound", desc, k, [bound_witness(model_desc, k),
                                                       error_query(model_desc, k)], settings,
                         MONOLITHIC, f"one query over build_dot's D and proofs.reference's "
                         f"exact sum; constants from proofs.constants ({f}, "
                         f"{chained_steps(desc)} window(s) by the table)")


CHAIN_TIMEOUT = 240.0
"""Per-query floor of the chaining-bound rows: the window lemma at two fp8 lanes needs about
three minutes on the shared two-core machine (docs/proofs-per-arch.md)."""


def check_chaining(desc: Any, k: int, settings: Settings) -> Row:
    """Method ``chain``: the window lemma (proved on one step and on the single window), the
    cut of the chained D at its steps (node identity), the composition with the D words free
    (a solver query), and a satisfiable hypothesis."""
    from tcspec.proofs.core import CHAIN

    model_desc = model(desc, k)
    settings = dataclasses.replace(settings, timeout=max(settings.timeout, CHAIN_TIMEOUT))
    detail = ("|D - D_single| < B_chained + B_single (module docstring); build_dot's chained "
              "D is the step window applied twice (same traced node), so the window lemma at "
              "(C, first lanes) and (D1, last lanes) and at (C, all lanes) compose; the "
              "composition is a query with the three D words free")
    if not steps_rebuild(model_desc, k):
        return uncovered_row("chaining-bound", desc, k, [
            f"steps: the chain covers {chained_steps(desc)} windows of {k // 2} lanes (the "
            "table), build_dot's chained D is not that composition"], CHAIN, detail)
    return check_queries("chaining-bound", desc, k, chaining_chain(model_desc, k), settings,
                         CHAIN, detail)


WITNESS_SHIFTS = (1, 2, 4, 8)


def check_witness(desc: Any, k: int, settings: Settings) -> Row:
    """The first ``B / 2^i`` a witness reaches (replayed); thresholds above it that are
    unsat are tighter proved bounds, reported in the detail."""
    model_desc = model(desc, k)
    share = max(5.0, settings.timeout / 3)
    tried: list[Outcome] = []
    for shift in WITNESS_SHIFTS:
        outcome = decide(witness_query(model_desc, k, shift), settings.solver, share)
        tried.append(outcome)
        if outcome.result == WITNESS:
            break
    notes = [f"B/2^{s}: {o.result}" for s, o in zip(WITNESS_SHIFTS, tried)]
    tighter = [s for s, o in zip(WITNESS_SHIFTS, tried) if o.result == REFUTED]
    detail = ("exists |D - D_single| >= B/2^i, i in " + ", ".join(map(str, WITNESS_SHIFTS))
              + f" ({share:g} s each): " + "; ".join(notes))
    if tighter:
        detail += f"; proved: |D - D_single| < B/2^{max(tighter)}"
    found = [o for o in tried if o.result == WITNESS]
    if found:
        return row_from_outcomes("chaining-witness", desc, k, found, MONOLITHIC, detail)
    row = row_from_outcomes("chaining-witness", desc, k, tried[-1:], MONOLITHIC, detail)
    row.result, row.seconds = UNKNOWN, sum(o.seconds for o in tried)
    return row


def summarise(outcomes: Sequence[Outcome]) -> str:
    return ", ".join(f"{o.query}: {o.result}" for o in outcomes if o.result != PROVED)


# ------------------------------------------------------ the chain behind chaining-bound


def step_desc(desc: Any, lanes: int) -> Any:
    """One window of ``lanes`` products with the instruction's parameters (a split-K step,
    a CDNA3 group, or the single window)."""
    one = single_window(desc)
    if desc.algorithm == "cdna3-rd":
        one = dataclasses.replace(one, params=dataclasses.replace(one.params, group=lanes))
    return dataclasses.replace(one, k=lanes)


def steps_rebuild(desc: Any, k: int) -> bool:
    """Whether ``build_dot``'s chained D is *the same traced node* as the step window applied
    to (C, first lanes), then to (that D, last lanes): the cut the chain substitutes."""
    from tcspec.proofs.stages import traced_inputs

    ops, inputs = traced_inputs(desc, k)
    half = k // 2
    step = step_desc(desc, half)
    first = dataclasses.replace(inputs, a=inputs.a[:half], b=inputs.b[:half])
    d1 = run_dot(ops, step, first)
    second = dataclasses.replace(inputs, a=inputs.a[half:], b=inputs.b[half:], c=d1)
    return run_dot(ops, step, second).node is run_dot(ops, desc, inputs).node


def _lemma_terms(desc: Any, lanes: int) -> int:
    """Units a lemma's conclusion can lose when read at another anchor: D and each of the
    ``lanes + 1`` terms of E truncated (one each), and B's floored terms, ``count`` units
    for a term of ``count * 2^x`` (at most ``lanes + 3``) and one per other term."""
    return 2 * lanes + 12


def window_conclusion(ops: Ops, step: Any, lanes: int, inputs: Any, d: BV,
                      anchor: BV | None, growth_too: bool = True) -> tuple[Bool, Bool]:
    """``(premise, conclusion)`` of the window lemma at these inputs and D word: D finite
    implies ``|D - E_w| < B_w`` and, with ``growth_too`` (the step lemma), finite inputs and
    (D zero or ``raw(D) <= R_w + G - 1``); without it the premise also asks finite inputs
    (the single-window lemma is the error bound alone)."""
    m = Measure(ops, step, inputs, anchor, REACH if anchor is None else COMPOSE_REACH)
    value, raw, finite = m.word(d)
    bound = bound_of(m, step, lanes, raw, 1)
    error = ops.abs_signed(ops.sub(value, m.exact))
    slack = ops.const(lanes + 2 if anchor is None else _lemma_terms(step, lanes), m.width)
    if anchor is None:
        within = ops.and_(ops.not_(m.beyond()), ops.ult(ops.add(error, slack), bound))
    else:
        within = ops.and_(ops.ult(error, ops.add(bound, slack)), ops.not_(m.beyond()))
    if not growth_too:
        return ops.and_(finite, m.finite), within
    dv = ref.decode(ops, "f32", d)
    small = ops.or_(ops.eq(dv.mag, 0), ops.sle(dv.raw, ops.add(m.top, growth(lanes) - 1)))
    return finite, ops.and_(m.finite, within, small)


def lemma_query(desc: Any, lanes: int, label: str, growth_too: bool = True) -> Query:
    """Violation of the window lemma on the step window of ``lanes`` products."""
    step = step_desc(desc, lanes)

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(step, lanes, values)
        d = run_dot(ops, step, inputs)
        premise, conclusion = window_conclusion(ops, step, lanes, inputs, d, None,
                                                growth_too)
        return ops.and_(premise, ops.not_(conclusion)), {"d": d}

    return Query(f"window-lemma ({label}, {lanes} lanes)", "forall",
                 layout_variables(step, lanes), body)


def compose_query(desc: Any, k: int) -> Query:
    """Violation of the chaining bound with the three D words free, constrained only by the
    window lemma at their inputs (the first step's D1 is the second step's C)."""
    half = k // 2
    step, whole = step_desc(desc, half), step_desc(desc, k)
    variables = (*layout_variables(desc, k), ("free!d1", 32), ("free!d", 32), ("free!ds", 32))

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        inputs = dot_inputs(desc, k, values)
        d1, d, ds = values["free!d1"], values["free!d"], values["free!ds"]
        m = Measure(ops, desc, inputs, reach=COMPOSE_REACH)
        first = dataclasses.replace(inputs, a=inputs.a[:half], b=inputs.b[:half])
        second = dataclasses.replace(inputs, a=inputs.a[half:], b=inputs.b[half:], c=d1)
        premises = []
        for win, lanes, ins, word, full in ((step, half, first, d1, True),
                                            (step, half, second, d, True),
                                            (whole, k, inputs, ds, False)):
            finite, conclusion = window_conclusion(ops, win, lanes, ins, word, m.top, full)
            premises.append(ops.implies(finite, conclusion))
        value, raw, finite = m.word(d)
        value_s, raw_s, finite_s = m.word(ds)
        bound = ops.add(bound_of(m, desc, k, raw, 2),
                        bound_of(m, single_window(desc), k, raw_s, 1))
        diff = ops.abs_signed(ops.sub(value, value_s))
        violation = ops.or_(m.beyond(), ops.uge(ops.add(diff, ops.const(2, m.width)),
                                                ops.add(bound, m.power(-MARGIN))))
        return ops.and_(m.finite, finite, finite_s, *premises, violation), {}

    return Query("compose (D words free)", "forall", variables, body)


def nonvacuous_query(desc: Any, k: int) -> Query:
    """Witness that the bound's hypothesis can hold: finite inputs, nonzero finite D."""

    def body(ops: Ops, values: Variables) -> tuple[Bool, dict[str, BV]]:
        _, d, _, applies, _ = _runs(ops, desc, k, values, True)
        return ops.and_(applies, ops.ne(ops.extract(d, 30, 0), 0)), {"d": d}

    return hypothesis_query(layout_variables(desc, k), body)


def chaining_chain(desc: Any, k: int) -> list[Query]:
    """The chain: non-vacuity, the window lemma on a step and on the single window, the
    composition with the D words free (sound by :func:`steps_rebuild`)."""
    if not steps_rebuild(desc, k):
        raise ValueError(f"{desc.name}: the chained D is not the composition of its steps")
    return [nonvacuous_query(desc, k), lemma_query(desc, k // 2, "a step"),
            lemma_query(desc, k, "the single window", growth_too=False),
            compose_query(desc, k)]
