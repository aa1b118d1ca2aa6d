"""Output conversion: exact unit sums to the destination word (SEMANTICS.md section 2.7).

One shape serves F32 with truncation (RZ) and F16 with round-to-nearest-even:
the result's last kept bit sits at ``lsb = max(E - F, emin - F)``; the unit
count is shifted to that bit (truncating or rounding), and the word is
``((lsb - (emin - F)) << F) + n``, so a rounding carry walks into the
exponent field by itself and overflow is a comparison with the infinity
pattern. A zero after conversion is ``+0``.
"""

from __future__ import annotations

from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.formats import FloatFormat
from tcspec.spec.specials import infinity

ROUNDINGS = ("rz", "rne")


def shift_round_nearest_even(ops: Ops, x: BV, k: BV) -> BV:
    """``x * 2^k`` rounded to the nearest integer, ties to even (``k`` signed).

    ``x`` must leave one spare bit above the rounded result for the carry.
    """
    up_shift = ops.shl(x, k)
    s = ops.neg(k)
    kept = ops.lshr(x, s)
    dropped = ops.bvand(x, ops.sub(ops.shl(ops.const(1, x.width), s), 1))
    half = ops.shl(ops.const(1, x.width), ops.sub(s, 1))
    half_is_valid = ops.ule(s, x.width)
    odd = ops.bit(kept, 0)
    round_up = ops.and_(half_is_valid, ops.or_(
        ops.ugt(dropped, half), ops.and_(ops.eq(dropped, half), odd)))
    rounded = ops.add(kept, ops.bool_to_bv(round_up, x.width))
    return ops.ite(ops.sge(k, 0), up_shift, rounded)


def encode_float(ops: Ops, units: BV, q: BV, fmt: FloatFormat, rounding: str) -> BV:
    """The ``fmt`` word for the signed value ``units * 2^q`` (``fmt.container_bits`` wide).

    ``rounding`` is ``"rz"`` (truncate) or ``"rne"``. Overflow gives the
    signed infinity, never the largest finite value. Exponent arithmetic has
    ``q``'s width (``EXP_WIDTH``; wider for FP64, SEMANTICS.md section 11.1).
    """
    if rounding not in ROUNDINGS:
        raise ValueError(f"unknown rounding {rounding!r}")
    negative = ops.sign(units)
    magnitude = ops.abs_signed(units)
    length = ops.bitlen(magnitude, q.width)
    exponent = ops.add(ops.sub(length, 1), q)
    lsb_min = fmt.emin - fmt.frac_bits
    lsb = ops.smax(ops.sub(exponent, fmt.frac_bits), lsb_min)
    shift = ops.sub(q, lsb)
    register = ops.zext(magnitude, max(magnitude.width, fmt.frac_bits + 3))
    if rounding == "rz":
        n = ops.shift_signed(register, shift)
    else:
        n = shift_round_nearest_even(ops, register, shift)
    word_width = q.width + fmt.frac_bits + 2
    field = ops.shl(ops.zext(ops.sub(lsb, lsb_min), word_width), fmt.frac_bits)
    body = ops.add(field, ops.resize_unsigned(n, word_width))
    overflow = ops.uge(body, infinity(fmt, False))
    width = fmt.container_bits
    sign_bit = ops.ite(negative, ops.const(1 << (width - 1), width), ops.const(0, width))
    finite = ops.bvor(sign_bit, ops.extract(body, width - 1, 0))
    inf = ops.bvor(sign_bit, infinity(fmt, False))
    word = ops.ite(ops.eq(n, 0), ops.const(0, width), ops.ite(overflow, inf, finite))
    ops.observe("convert", units=units, quantum=q, exponent=exponent, lsb=lsb, kept=n,
                overflow=overflow, word=word, format=fmt, rounding=rounding)
    return word
