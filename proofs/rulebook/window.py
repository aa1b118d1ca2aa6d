"""Section 2: unscaled floating point (kind::tf32, kind::f16, kind::f8f6f4) -> F32 or F16.

``D = C + sum_k A[k] * B[k]`` for one output element:

1. decode A[k], B[k] (each with its own format) and C (F32, or F16 when D is F16);
2. specials first (2.2): a NaN operand, Inf x 0, or infinities of both signs
   give the canonical NaN; otherwise an infinite product or C gives that
   signed infinity;
3. exact products: ``m = mA * mB`` (at the two significands' widths), raw
   exponent ``r = rA + rB``, value exponent ``e = eA + eB``;
4. the window: ``R = max(r of every product with m != 0, rC if C != 0)``,
   clamped below at -133 for tf32 and bf16 operands only; ``q = R - 25``;
5. each product and C is aligned alone to signed units of ``2^q``: exact left
   shifts, right shifts truncating the magnitude (toward zero for both signs);
6. the units are summed exactly;
7. ``units * 2^q`` is converted: F32 RZ or F16 RNE (``rounding``).

If no product and no C is nonzero every unit count is 0 and the conversion
gives ``+0`` (F32) / ``0x0000`` (F16), which is 2.4's "the result is +0".

Widths. A product's significand is below ``2^(FA + FB + 2)`` and its value below
``2^(r + 2) <= 2^(R + 2)``; C is below ``2^(rC + 1)``. So every aligned term
has magnitude below ``2^(R + 2 - q) = 2^27``: :data:`TERM_MAG_BITS` = 27 bits of
magnitude, 28 signed. A sum of ``n`` such terms needs ``28 + bitlen(n)`` bits
(K = 32: 34 bits). Exponents are 16-bit signed (``fields.EXP_BITS``).

Sum order: C's units first, then the products in ascending k, left to right
(the sum is exact, so the order is only a choice of presentation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tcspec.spec.bitvec import BV, Bool, Ops

from .fields import EXP_BITS, Decoded, decode, special_word
from .names import WINDOW, Datapath
from .result import Result
from .rounding import F16_RNE, F32_RZ, Destination, convert

WINDOW_FRACTION_BITS = 25
"""2.4: ``q = R - 25``."""

CLAMP_R = -133
"""2.4: for tf32 and bf16 only, ``R = max(R, -133)`` (**(model)**)."""

CLAMPED_FORMATS = ("tf32", "bf16")

TERM_MAG_BITS = WINDOW_FRACTION_BITS + 2
"""Magnitude bits of one aligned term: every term is below ``2^(R + 2)`` (module docstring)."""

NO_TERM_R = -(1 << 14)
"""Stand-in raw exponent of a zero term in the maximum (below every real raw exponent)."""


@dataclass(frozen=True)
class Product:
    """An exact product (2.3): ``sign``, unsigned ``m = mA * mB`` (``mA.width + mB.width``
    bits), signed raw ``r = rA + rB``, value exponent ``e = eA + eB`` and flags."""

    sign: Bool
    m: BV
    r: BV
    e: BV
    nonzero: Bool
    inf: Bool
    nan: Bool


def exact_product(ops: Ops, a: Decoded, b: Decoded) -> Product:
    """The exact product of two decoded operands (2.3) and its special flags (2.2).

    ``nan``: either operand is NaN, or Inf x 0. ``inf``: an infinite product that
    is not NaN. ``nonzero``: ``m != 0`` (non-finite operands decode with m = 0).
    """
    m = ops.mul_wide(a.m, b.m)
    r = ops.add(a.r, b.r)
    e = ops.sub(r, a.fmt.F + b.fmt.F)
    inf_times_zero = (a.inf & b.zero) | (a.zero & b.inf)
    nan = a.nan | b.nan | inf_times_zero
    inf = (a.inf | b.inf) & ~nan
    return Product(a.sign ^ b.sign, m, r, e, ops.ne(m, 0), inf, nan)


def align(ops: Ops, negative: Bool, m: BV, e: BV, q: BV, mag_bits: int) -> BV:
    """``m * 2^e`` in signed units of ``2^q``, the magnitude truncated (2.5).

    ``mag_bits`` must bound the aligned magnitude (``|m * 2^(e - q)| < 2^mag_bits``,
    the caller's proof); the result is ``mag_bits + 1`` bits, two's complement.
    """
    width = max(m.width, mag_bits)
    shift = ops.sub(e, q)
    mag = ops.shift_signed(ops.zext(m, width), shift)
    mag = ops.resize_unsigned(mag, mag_bits)
    mag = ops.zext(mag, mag_bits + 1)
    return ops.ite(negative, ops.neg(mag), mag)


def window_r(ops: Ops, raws: Sequence[tuple[Bool, BV]], clamp: int | None) -> tuple[BV, Bool]:
    """2.4: ``R`` = max of the raw exponents whose term is nonzero, then ``max(R, clamp)``
    when a clamp applies. Returns ``(R, any term nonzero)``; with no nonzero term
    ``R`` is 0 (unused: every unit count is then 0)."""
    candidates = [ops.ite(nz, r, ops.const(NO_TERM_R, EXP_BITS)) for nz, r in raws]
    big_r = ops.smax_all(candidates)
    if clamp is not None:
        big_r = ops.smax(big_r, ops.const(clamp, EXP_BITS))
    any_term = ops.any_(nz for nz, _ in raws)
    return ops.ite(any_term, big_r, ops.const(0, EXP_BITS)), any_term


def window_dot(ops: Ops, a_format: str, b_format: str, d_format: str, a_words: Sequence[BV],
               b_words: Sequence[BV], c_word: BV) -> BV:
    """Section 2 on raw words: the D word (32 bits for ``d_format`` ``f32``, 16 for ``f16``).

    The -133 clamp applies when both operand formats are tf32 or bf16 (kind::tf32 and
    kind::f16 with bf16; section 2 never mixes them with other formats).
    """
    if len(a_words) != len(b_words) or not a_words:
        raise ValueError("window_dot needs equally many A and B words (at least one)")
    dest: Destination = {"f32": F32_RZ, "f16": F16_RNE}[d_format]
    products = [exact_product(ops, decode(ops, a, a_format), decode(ops, b, b_format))
                for a, b in zip(a_words, b_words)]
    c = decode(ops, c_word, d_format)

    # 2.2 specials.
    nan = ops.any_([c.nan] + [p.nan for p in products])
    pos_inf = ops.any_([c.inf & ~c.sign] + [p.inf & ~p.sign for p in products])
    neg_inf = ops.any_([c.inf & c.sign] + [p.inf & p.sign for p in products])

    # 2.4 window.
    clamp = CLAMP_R if a_format in CLAMPED_FORMATS and b_format in CLAMPED_FORMATS else None
    big_r, any_term = window_r(ops, [(p.nonzero, p.r) for p in products] + [(c.nonzero, c.r)],
                               clamp)
    ops.observe("hint", split=any_term)
    q = ops.sub(big_r, WINDOW_FRACTION_BITS)

    # 2.5 alignment, 2.6 exact sum (C first, then k = 0, 1, ...).
    terms = [align(ops, c.sign, c.m, c.e(ops), q, TERM_MAG_BITS)]
    terms += [align(ops, p.sign, p.m, p.e, q, TERM_MAG_BITS) for p in products]
    sum_bits = TERM_MAG_BITS + 1 + len(terms).bit_length()
    total = ops.const(0, sum_bits)
    for t in terms:
        total = ops.add(total, ops.sext(t, sum_bits))

    # 2.7 conversion, then the specials override.
    finite = convert(ops, total, q, dest)
    return special_word(ops, dest.dformat, nan, pos_inf, neg_inf, finite)


def dot(ops: Ops, rec: Datapath, words: Mapping[str, BV]) -> Result:
    """The section-2 family function: ``dense-<f>``, ``mixed-<a>-<b>-<d>``."""
    a_words = [words[f"a{i}"] for i in range(rec.k)]
    b_words = [words[f"b{i}"] for i in range(rec.k)]
    word = window_dot(ops, rec.a_format, rec.b_format, rec.d_format, a_words, b_words,
                      words["c"])
    return Result(word, ops.true())


FAMILIES = {WINDOW: dot}
