"""Section 11.1: the FP64 and F32 FMA chains (family ``fma-chain``).

NVIDIA's ``mma m8n8k4.f64`` (sm_80 and later) and ``m16n8k{4,8,16}.f64`` (sm_90), the
AMD f64 instructions (CDNA2, CDNA3) and the AMD f32 instructions (CDNA1-3). A, B, C
and D share one format, f32 or f64 (words of 32 or 64 bits).

``acc = C``; for ``k = 0 .. K-1`` in order ``acc = fma(A[k], B[k], acc)``; D is the
last ``acc``. Each step is one IEEE 754 fusedMultiplyAdd (:func:`fma_word`): the
exact ``a*b + acc`` rounded once to nearest even, subnormals kept, overflow to the
signed infinity.

Specials per step (11.1, as 2.2 with one product): a NaN operand, Inf x 0, or an
infinite product meeting an infinite ``acc`` of the other sign give the canonical
NaN (all exponent and fraction bits set, sign clear: ``0x7FFFFFFF``,
``0x7FFFFFFFFFFFFFFF``); otherwise an infinite product or ``acc`` gives that
infinity. Zeros (IEEE): an exact zero sum is ``+0`` unless the product and ``acc``
are both ``-0``; a nonzero sum that rounds to zero keeps its sign.

The register (11.1, "How the exact sum is formed"). With ``p = 2 (F + 1)`` the
product significand's width and ``T`` the top of the larger nonzero term by its
exponent field (the product is below ``2^(rA + rB + 2)``, C below ``2^(rC + 1)``),
both terms are placed in units of ``2^L``, ``L = T - W``, ``W = p + 3``. The term
whose top is ``T`` fits exactly (its lowest bit is at or above ``2^L``); the other
one, if it has nonzero bits below ``2^L``, is truncated toward zero there and gets
half a unit of its own sign. Here the register counts units of ``2^(L - 1)`` (so the
half unit is an integer) and the half unit is the lost bits OR-ed into the lowest
register bit (bit 0 is then set exactly when a bit at or below ``2^(L - 1)`` was
nonzero: that is ``2 * trunc + 1``). The rule text shows that the result's rounding
unit is at least ``2^(L + 1)``, so every rounding boundary (a representable value, a
midpoint, the overflow threshold) is a multiple of ``2^L`` and the stand-in rounds
like the exact sum, with the same sign and never exactly zero when bits were lost.

Widths. Each placed magnitude is below ``2^(T - (L - 1)) = 2^(W + 1)``: the product
(``p`` bits) sits 4 bits up, C (``F + 1`` bits) at most ``W - F`` bits up. The signed
sum of the two is below ``2^(W + 2)``: :func:`register_bits` = ``W + 3`` bits (54 for
f32, 112 for f64). Exponents are :data:`~tcspec.proofs.rulebook.fields.EXP_BITS`
(16) bits signed: every top, quantum and shift here lies within ``+-4400``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tcspec.spec.bitvec import BV, Bool, Ops

from .fields import Decoded, decode, fmt, special_word
from .names import FMA_CHAIN, Datapath
from .result import Result
from .rounding import F32_RNE, F64_RNE, Destination, convert

REGISTER_SPARE_BITS = 3
"""11.1: ``W = p + 3`` (the rule text: ``p + 2`` already suffices, one bit is spare)."""

DESTINATIONS: dict[str, Destination] = {"f32": F32_RNE, "f64": F64_RNE}
"""11.1: the chain's one format and its IEEE round-to-nearest-even destination."""


def product_bits(format_name: str) -> int:
    """``p = 2 (F + 1)``: width of the exact product's significand (48, 106)."""
    return 2 * fmt(format_name).m_bits


def register_window(format_name: str) -> int:
    """``W = p + 3``: bits of the register below ``2^T`` (51, 109)."""
    return product_bits(format_name) + REGISTER_SPARE_BITS


def register_bits(format_name: str) -> int:
    """Width of the signed register: ``W + 1`` magnitude bits per term in units of
    ``2^(L - 1)``, one bit for the sum of two, one sign bit (54, 112)."""
    return register_window(format_name) + 3


def place(ops: Ops, m: BV, shift: BV, width: int) -> BV:
    """``m * 2^shift`` as a ``width``-bit unsigned count, the lost bits jammed into bit 0.

    ``shift >= 0`` is an exact left shift (the caller bounds the result below
    ``2^width``); ``shift < 0`` truncates and OR-s "some nonzero bit was dropped" into
    the lowest bit, so the count is ``2 * trunc(x / 2) + sticky`` at the scale of one
    bit up: 11.1's truncation toward zero plus half a unit.
    """
    x = ops.zext(m, width)
    left = ops.shl(x, shift)
    drop = ops.neg(shift)
    kept = ops.lshr(x, drop)
    lost = ops.ne(x, ops.shl(kept, drop))
    right = ops.bvor(kept, ops.bool_to_bv(lost, width))
    return ops.ite(ops.sge(shift, 0), left, right)


def signed(ops: Ops, negative: Bool, magnitude: BV, width: int) -> BV:
    """The two's-complement ``width``-bit value ``(-1)^negative * magnitude``."""
    mag = ops.zext(magnitude, width)
    return ops.ite(negative, ops.neg(mag), mag)


def fused_multiply_add(ops: Ops, a: Decoded, b: Decoded, c: Decoded) -> BV:
    """One IEEE 754 fusedMultiplyAdd ``a*b + c`` on decoded operands of one format
    (f32 or f64), rounded to nearest even into that format (11.1). Returns the word."""
    name = a.fmt.name
    if not (b.fmt.name == c.fmt.name == name and name in DESTINATIONS):
        raise ValueError(f"fma needs three operands of one format, f32 or f64; got "
                         f"{a.fmt.name}, {b.fmt.name}, {c.fmt.name}")
    dest = DESTINATIONS[name]
    frac = a.fmt.F
    window = register_window(name)
    mag_bits = window + 1
    reg_bits = register_bits(name)

    # Specials (11.1, 2.2 with one product).
    inf_times_zero = (a.inf & b.zero) | (a.zero & b.inf)
    product_sign = a.sign ^ b.sign
    product_inf = (a.inf | b.inf) & ~(a.nan | b.nan | inf_times_zero)
    nan = a.nan | b.nan | c.nan | inf_times_zero
    pos_inf = (product_inf & ~product_sign) | (c.inf & ~c.sign)
    neg_inf = (product_inf & product_sign) | (c.inf & c.sign)

    # The exact terms: the product m = mA * mB (p bits) at value exponent rA + rB - 2F,
    # below 2^(rA + rB + 2); C at value exponent rC - F, below 2^(rC + 1).
    m_p = ops.mul_wide(a.m, b.m)
    r_p = ops.add(a.r, b.r)
    e_p = ops.sub(r_p, 2 * frac)
    top_p = ops.add(r_p, 2)
    e_c = c.e(ops)
    top_c = ops.add(c.r, 1)
    nz_p = ops.ne(m_p, 0)
    nz_c = ops.ne(c.m, 0)

    # T: the larger top among the nonzero terms; the register counts units of 2^(L-1),
    # L = T - W.
    top = ops.ite(nz_p & nz_c, ops.smax(top_p, top_c), ops.ite(nz_p, top_p, top_c))
    q = ops.sub(top, window + 1)

    units_p = signed(ops, product_sign, place(ops, m_p, ops.sub(e_p, q), mag_bits), reg_bits)
    units_c = signed(ops, c.sign, place(ops, c.m, ops.sub(e_c, q), mag_bits), reg_bits)
    total = ops.add(units_p, units_c)

    finite = convert(ops, total, q, dest)
    # IEEE exact zero: -0 only when the product and C are both -0.
    both_negative_zeros = (a.zero | b.zero) & product_sign & c.zero & c.sign
    finite = ops.ite(both_negative_zeros, ops.const(dest.dformat.sign_mask, dest.width),
                     finite)
    return special_word(ops, dest.dformat, nan, pos_inf, neg_inf, finite)


def fma_word(ops: Ops, a: BV, b: BV, c: BV, format_name: str) -> BV:
    """``fma(a, b, c)`` on raw words of ``format_name`` (``f32``: 32 bits, ``f64``: 64)."""
    f = fmt(format_name)
    return fused_multiply_add(ops, decode(ops, a, f), decode(ops, b, f), decode(ops, c, f))


def fma_chain(ops: Ops, format_name: str, a_words: Sequence[BV], b_words: Sequence[BV],
              c_word: BV) -> BV:
    """11.1: ``acc = C``, then ``acc = fma(A[k], B[k], acc)`` for k in order; the last acc."""
    if len(a_words) != len(b_words):
        raise ValueError("fma_chain needs equally many A and B words")
    acc = c_word
    for a, b in zip(a_words, b_words):
        acc = fma_word(ops, a, b, acc, format_name)
    return acc


def chain(ops: Ops, rec: Datapath, words: Mapping[str, BV]) -> Result:
    """The ``fma-chain`` family function (11.1): one format for A, B, C and D."""
    if not rec.a_format == rec.b_format == rec.c_format == rec.d_format:
        raise ValueError(f"{rec.name}: an FMA chain has one format for A, B, C and D")
    a_words = [words[f"a{i}"] for i in range(rec.k)]
    b_words = [words[f"b{i}"] for i in range(rec.k)]
    return Result(fma_chain(ops, rec.a_format, a_words, b_words, words["c"]), ops.true())


FAMILIES = {FMA_CHAIN: chain}

__all__ = ["chain", "fma_chain", "fma_word", "fused_multiply_add", "place",
           "product_bits", "register_bits", "register_window"]
