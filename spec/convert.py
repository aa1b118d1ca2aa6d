"""Output conversion: exact unit sums to the destination word (SEMANTICS.md section 2.7).

One shape serves F32 with truncation (RZ) and F16 with round-to-nearest-even:
the result's last kept bit sits at ``lsb = max(E - F, emin - F)``; the unit
count is shifted to that bit (truncating or rounding), and the word is
``((lsb - (emin - F)) << F) + n``, so a rounding carry walks into the
exponent field by itself and overflow is a comparison with the infinity
pattern. A zero after conversion is ``+0``.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.formats import FORMATS, FloatFormat, decode_float
from tcspec.spec.specials import canonical_nan, infinity

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


E8M13 = FloatFormat("f32_e8m13", 8, 13, 127, 22)
"""F32's exponent range with 13 fraction bits: the Ada / Hopper fp8 accumulator output
(SEMANTICS.md section 10), stored in the top 22 bits of an F32 word."""

F32_WORD = FORMATS["f32"]


@dataclass(frozen=True)
class Output:
    """The rounding of an exact sum into a D word: a format and ``rz`` or ``rne``.

    A narrower-than-container format (:data:`E8M13`) is rounded in its own precision and
    placed in the top bits of its :attr:`word_format` word (low fraction bits zero).
    """

    fmt: FloatFormat
    rounding: str

    @property
    def word_format(self) -> FloatFormat:
        return F32_WORD if self.fmt == E8M13 else self.fmt  # type: ignore[return-value]

    @property
    def name(self) -> str:
        return f"{self.fmt.name}-{self.rounding}"


def encode_output(ops: Ops, units: BV, q: BV, output: Output) -> BV:
    """The ``output.word_format`` word of ``units * 2^q`` rounded as ``output`` says."""
    word = encode_float(ops, units, q, output.fmt, output.rounding)
    pad = output.word_format.container_bits - output.fmt.container_bits
    if pad == 0:
        return word
    return ops.concat(word, ops.const(0, pad))


def convert_word(ops: Ops, word: BV, src: FloatFormat, dst: FloatFormat) -> BV:
    """A ``src`` word as the ``dst`` word of the same value (a widening, so exact): C read in
    the D format (SEMANTICS.md section 10). Every nonzero ``src`` value is normal in ``dst``;
    NaN gives ``dst``'s canonical NaN; the sign of zero and infinity is kept."""
    if dst.frac_bits < src.frac_bits or dst.emin > src.emin - src.frac_bits:
        raise ValueError(f"converting {src.name} to {dst.name} is not an exact widening")
    x = decode_float(ops, src, word)
    width = dst.container_bits
    length = ops.bitlen(x.mag, x.raw.width)
    exponent = ops.add(ops.sub(x.raw, src.frac_bits + 1 - dst.bias), length)
    register = ops.zext(x.mag, dst.frac_bits + 1)
    normal = ops.shl(register, ops.resize_unsigned(
        ops.sub(ops.const(dst.frac_bits + 1, x.raw.width), length), register.width))
    fraction = ops.extract(normal, dst.frac_bits - 1, 0)
    field = ops.resize_unsigned(exponent, width - 1 - dst.frac_bits)
    sign = ops.ite(x.negative, ops.const(1 << (width - 1), width), ops.const(0, width))
    finite = ops.bvor(sign, ops.zext(ops.concat(field, fraction), width))
    finite = ops.ite(x.is_zero, sign, finite)
    inf = ops.bvor(sign, infinity(dst, False))
    return ops.ite(x.is_nan, ops.const(canonical_nan(dst), width),
                   ops.ite(x.is_inf, inf, finite))
