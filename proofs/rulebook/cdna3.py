"""Section 11.2 (with the fnuz FP8 formats of 11.3): CDNA3's round-down fused dot (family
``cdna3-rd``).

Operands xf32 (tf32's layout: an F32 word whose low 13 bits are cleared first), f16,
bf16, and the fnuz FP8 pairs (``e4m3fnuz``, ``e5m2fnuz``); C and D are F32. K is cut
into consecutive groups (:func:`group_size`: xf32 4, f16 and bf16 ``min(8, K)``, FP8
16); the running value starts as C and each group's F32 word is the next group's C
(so Inf and NaN are decided per group, 11.2 "Per group, not per instruction"). One
group (:func:`group_word`):

1. Specials as 2.2 over the group's products and its C: a NaN operand or Inf x 0 gives
   NaN; otherwise infinite products and C give the infinity of their sign (both signs:
   NaN). Then, only where no such special is present, the huge-product rule: a finite
   product with ``|a*b| >= 2^128`` is an infinity of its sign (both signs: NaN). So
   an infinite C (or an infinite product) beats a huge finite product of the other
   sign. NaN is the canonical ``0x7FFFFFFF``.
2. Exponents: a factor's exponent is its raw exponent ``r`` (the format minimum for a
   subnormal: -126, -14, -7, -15) and :data:`ZERO_EXPONENT` (-126) for a zero in every
   format; a product's is the sum of its factors'.
3. Product window (C not in it): ``P`` = the largest product exponent (zeros count);
   each product truncated toward zero to units of ``2^(P - 24)``; summed exactly.
   FP8: even- and odd-indexed products (within the group) are two such windows
   ``P0``, ``P1``; each sum is floored to units of ``2^(max(P0, P1) - 24)``, the two
   are added, ``P = max(P0, P1)``.
4. Join with C: ``M = max(P, e_C)`` (``e_C`` = C's raw exponent, -126 for a zero or
   subnormal C). The product sum is floored to units of ``2^(M - 31)``, C to units of
   ``2^(M - 24)`` (floor: a tiny negative term gives -1 unit). FP8: C counts as 0 when
   ``e_C < M - 25``.
5. The exact sum ``(S + C) * 2^(M - 31)`` is rounded to F32 RNE (subnormals kept,
   overflow to the signed infinity); a zero sum is ``+0``, a negative sum that rounds
   to zero is ``-0`` (``rounding.F32_RNE``'s signed-zero policy).

Quantities. ``m`` of a product is ``mA * mB`` at the significands' own widths; ``r``
is ``xA + xB`` (the step-2 exponents, signed :data:`EXP_BITS` bits); ``P``, ``M`` are
signed exponents; aligned terms and sums are signed two's-complement unit counts.

Widths. A nonzero product is below ``2^(rA + rB + 2) <= 2^(P + 2)``, so in units of
``2^(P - 24)`` its magnitude is below ``2^26`` (:data:`TERM_MAG_BITS`); a window of
``n`` products sums below ``2^(26 + bitlen(n))`` (two FP8 windows of 8, floored and
added: below ``2^30``). Floored to ``2^(M - 31)`` (``P <= M``: at most 7 bits up) the
product sum is below ``2^37``; C (below ``2^24`` units of ``2^(rC - 23)``, ``rC <= M``)
is below ``2^25`` units of ``2^(M - 24)``, ``2^32`` units of ``2^(M - 31)``: the
joined sum fits :data:`JOIN_BITS` = 40 signed bits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tcspec.spec.bitvec import BV, Bool, Ops

from .fields import EXP_BITS, Decoded, decode, fmt, special_word
from .names import CDNA3_RD, Datapath
from .result import Result
from .rounding import F32_RNE, convert
from .window import align

PRODUCT_FRACTION_BITS = 24
"""11.2.3: products truncated to units of ``2^(P - 24)`` (FP8 parity sums floored to
``2^(max(P0, P1) - 24)``)."""

SUM_FRACTION_BITS = 31
"""11.2.4: the product sum floored to units of ``2^(M - 31)``."""

C_FRACTION_BITS = 24
"""11.2.4: C floored to units of ``2^(M - 24)``."""

C_DROP_BELOW = 25
"""11.2.4, FP8 only: C counts as 0 when ``e_C < M - 25``."""

HUGE_EXPONENT = 128
"""11.2.1: a finite product with ``|a*b| >= 2^128`` is an infinity of its sign."""

ZERO_EXPONENT = -126
"""11.2.2: the exponent of a zero factor (and of a zero C) in every format."""

FP8_FORMATS = ("e4m3fnuz", "e5m2fnuz")
"""11.3: the fnuz FP8 operand formats (the even/odd windows and the C drop of 11.2)."""

XF32_GROUP = 4
HALF_GROUP = 8
FP8_GROUP = 16

TERM_MAG_BITS = PRODUCT_FRACTION_BITS + 2
"""Magnitude bits of one truncated product in units of ``2^(P - 24)`` (module docstring)."""

JOIN_BITS = 40
"""Signed width of the joined sum in units of ``2^(M - 31)`` (module docstring: < 2^38)."""

_F32 = "f32"


def group_size(a_format: str, b_format: str, k: int) -> int:
    """11.2's table: xf32 groups of 4, f16/bf16 ``min(8, K)``, fnuz FP8 16."""
    if a_format == b_format == "xf32":
        return XF32_GROUP
    if a_format == b_format and a_format in ("f16", "bf16"):
        return min(HALF_GROUP, k)
    if a_format in FP8_FORMATS and b_format in FP8_FORMATS:
        return FP8_GROUP
    raise ValueError(f"no section-11.2 row for operands {a_format} x {b_format}")


def is_fp8(a_format: str, b_format: str) -> bool:
    """The FP8 rules (parity windows, C drop) apply to the fnuz pairs (11.2, 11.3)."""
    return a_format in FP8_FORMATS and b_format in FP8_FORMATS


@dataclass(frozen=True)
class Product:
    """An exact product: ``sign``; unsigned ``m = mA * mB``; ``r = xA + xB`` (11.2.2's
    exponents, zero factors at -126); ``e`` the value exponent (``value = m * 2^e``);
    the special flags ``nan`` (a NaN factor, or Inf x 0) and ``inf``; ``huge``: finite
    with ``|value| >= 2^128``."""

    sign: Bool
    m: BV
    r: BV
    e: BV
    nan: Bool
    inf: Bool
    huge: Bool


def factor_exponent(ops: Ops, d: Decoded) -> BV:
    """11.2.2: the raw exponent ``r`` (format minimum for a subnormal), -126 for a zero."""
    return ops.ite(d.zero, ops.const(ZERO_EXPONENT, EXP_BITS), d.r)


def exact_product(ops: Ops, a: Decoded, b: Decoded) -> Product:
    """The exact product of two decoded factors, its exponent and flags (11.2.1, 11.2.2)."""
    m = ops.mul_wide(a.m, b.m)
    r = ops.add(factor_exponent(ops, a), factor_exponent(ops, b))
    e = ops.sub(ops.add(a.r, b.r), a.fmt.F + b.fmt.F)
    nan = a.nan | b.nan | (a.inf & b.zero) | (a.zero & b.inf)
    inf = (a.inf | b.inf) & ~nan
    # |value| = m * 2^e >= 2^128  <=>  bitlen(m) - 1 + e >= 128 (m != 0).
    top = ops.add(ops.sub(ops.zext(ops.bitlen(m), EXP_BITS), 1), e)
    huge = ops.ne(m, 0) & ops.sge(top, HUGE_EXPONENT)
    return Product(a.sign ^ b.sign, m, r, e, nan, inf, huge)


def floor_shift(ops: Ops, units: BV, shift: BV, width: int) -> BV:
    """``floor(units * 2^shift)`` for a signed count ``units``, as ``width`` signed bits
    (the caller bounds the result): left shifts exact, right shifts round down."""
    x = ops.sext(units, width)
    return ops.ite(ops.sge(shift, 0), ops.shl(x, shift), ops.ashr(x, ops.neg(shift)))


def window_sum(ops: Ops, products: Sequence[Product]) -> tuple[BV, BV]:
    """11.2.3's window over ``products``: ``(P, S)`` with ``P`` the largest exponent and
    ``S`` the exact sum of the products truncated toward zero to units of ``2^(P - 24)``
    (signed, ``TERM_MAG_BITS + 1 + bitlen(n)`` bits)."""
    big_p = ops.smax_all([p.r for p in products])
    q = ops.sub(big_p, PRODUCT_FRACTION_BITS)
    bits = TERM_MAG_BITS + 1 + len(products).bit_length()
    total = ops.const(0, bits)
    for p in products:
        term = align(ops, p.sign, p.m, p.e, q, TERM_MAG_BITS)
        total = ops.add(total, ops.sext(term, bits))
    return big_p, total


def product_sum(ops: Ops, products: Sequence[Product], fp8: bool) -> tuple[BV, BV]:
    """11.2.3: ``(P, S)``, ``S`` in units of ``2^(P - 24)``. FP8: the even- and odd-indexed
    windows, each sum floored to units of ``2^(max(P0, P1) - 24)``, then added."""
    if not fp8:
        return window_sum(ops, products)
    p0, s0 = window_sum(ops, products[0::2])
    p1, s1 = window_sum(ops, products[1::2])
    big_p = ops.smax(p0, p1)
    bits = max(s0.width, s1.width) + 1
    floored0 = floor_shift(ops, s0, ops.sub(p0, big_p), bits)
    floored1 = floor_shift(ops, s1, ops.sub(p1, big_p), bits)
    return big_p, ops.add(floored0, floored1)


def group_word(ops: Ops, a_format: str, b_format: str, a_words: Sequence[BV],
               b_words: Sequence[BV], c_word: BV) -> BV:
    """One group of 11.2 (steps 1-5) on raw words: the group's F32 D word."""
    fp8 = is_fp8(a_format, b_format)
    fa, fb = fmt(a_format), fmt(b_format)
    products = [exact_product(ops, decode(ops, a, fa), decode(ops, b, fb))
                for a, b in zip(a_words, b_words)]
    c = decode(ops, c_word, _F32)

    # Step 1: specials (2.2), then the huge-product rule where no special is present.
    nan = ops.any_([c.nan] + [p.nan for p in products])
    pos_inf = ops.any_([c.inf & ~c.sign] + [p.inf & ~p.sign for p in products])
    neg_inf = ops.any_([c.inf & c.sign] + [p.inf & p.sign for p in products])
    special = nan | pos_inf | neg_inf
    huge_pos = ops.any_([p.huge & ~p.sign for p in products])
    huge_neg = ops.any_([p.huge & p.sign for p in products])

    # Steps 2-3: the product window (C not in it).
    big_p, s = product_sum(ops, products, fp8)

    # Step 4: join with C at M = max(P, e_C).
    e_c = factor_exponent(ops, c)
    big_m = ops.smax(big_p, e_c)
    s_joined = floor_shift(ops, s, ops.add(ops.sub(big_p, big_m),
                                           SUM_FRACTION_BITS - PRODUCT_FRACTION_BITS),
                           JOIN_BITS)
    c_units = ops.zext(c.m, c.m.width + 1)
    c_units = ops.ite(c.sign, ops.neg(c_units), c_units)
    # C = m_C * 2^(rC - 23) in units of 2^(M - 24): shift by rC - 23 - M + 24.
    c_shift = ops.add(ops.sub(c.e(ops), big_m), C_FRACTION_BITS)
    c_floored = floor_shift(ops, c_units, c_shift, JOIN_BITS)
    if fp8:
        dropped = ops.slt(e_c, ops.sub(big_m, C_DROP_BELOW))
        c_floored = ops.ite(dropped, ops.const(0, JOIN_BITS), c_floored)
    c_joined = ops.shl(c_floored, SUM_FRACTION_BITS - C_FRACTION_BITS)
    total = ops.add(s_joined, c_joined)

    # Step 5: F32 RNE of total * 2^(M - 31).
    finite = convert(ops, total, ops.sub(big_m, SUM_FRACTION_BITS), F32_RNE)
    huge_word = special_word(ops, _F32, ops.false(), huge_pos, huge_neg, finite)
    return ops.ite(special, special_word(ops, _F32, nan, pos_inf, neg_inf, finite), huge_word)


def cdna3_dot(ops: Ops, a_format: str, b_format: str, a_words: Sequence[BV],
              b_words: Sequence[BV], c_word: BV, group: int | None = None) -> BV:
    """11.2 over consecutive groups (``group`` defaults to :func:`group_size`): the running
    value starts as C; each group's F32 word is the next group's C."""
    k = len(a_words)
    if len(b_words) != k or not k:
        raise ValueError("cdna3_dot needs equally many A and B words (at least one)")
    group = group or group_size(a_format, b_format, k)
    if k % group:
        raise ValueError(f"K = {k} is not a multiple of the group size {group}")
    acc = c_word
    for lo in range(0, k, group):
        acc = group_word(ops, a_format, b_format, a_words[lo:lo + group],
                         b_words[lo:lo + group], acc)
    return acc


def dot(ops: Ops, rec: Datapath, words: Mapping[str, BV]) -> Result:
    """The ``cdna3-rd`` family function (11.2)."""
    if rec.c_format != _F32 or rec.d_format != _F32:
        raise ValueError(f"{rec.name}: CDNA3's fused dot has F32 C and D")
    a_words = [words[f"a{i}"] for i in range(rec.k)]
    b_words = [words[f"b{i}"] for i in range(rec.k)]
    word = cdna3_dot(ops, rec.a_format, rec.b_format, a_words, b_words, words["c"])
    return Result(word, ops.true())


FAMILIES = {CDNA3_RD: dot}
