"""Special values, decided before any finite arithmetic (SEMANTICS.md section 2.2).

Any NaN operand, Inf x 0, or infinities of both signs give the canonical
NaN; otherwise any infinity (an infinite product or C) gives that signed
infinity. Canonical words depend only on the destination format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.formats import Decoded, FloatFormat, decode_float


@dataclass(frozen=True)
class Specials:
    """The special-value outcome of one dot product."""

    is_nan: Bool
    is_inf: Bool
    inf_negative: Bool


def classify_specials(ops: Ops, pairs: Sequence[tuple[Decoded, Decoded]], c: Decoded,
                      extra_nan: Bool | None = None) -> Specials:
    """Classify the A/B lane pairs and C; ``extra_nan`` adds a NaN cause (a NaN scale)."""
    nan_causes = [c.is_nan] + ([extra_nan] if extra_nan is not None else [])
    positive_inf = [ops.and_(c.is_inf, ops.not_(c.negative))]
    negative_inf = [ops.and_(c.is_inf, c.negative)]
    for a, b in pairs:
        nan_causes += [a.is_nan, b.is_nan]
        nan_causes.append(ops.or_(ops.and_(a.is_inf, b.is_zero), ops.and_(a.is_zero, b.is_inf)))
        infinite = ops.or_(a.is_inf, b.is_inf)
        negative = ops.xor_(a.negative, b.negative)
        positive_inf.append(ops.and_(infinite, ops.not_(negative)))
        negative_inf.append(ops.and_(infinite, negative))
    any_positive, any_negative = ops.any_(positive_inf), ops.any_(negative_inf)
    is_nan = ops.or_(ops.any_(nan_causes), ops.and_(any_positive, any_negative))
    specials = Specials(is_nan, ops.or_(any_positive, any_negative), any_negative)
    ops.observe("specials", specials=specials)
    return specials


def canonical_nan(fmt: FloatFormat) -> int:
    """All exponent and fraction bits set, sign clear (F32 ``0x7FFFFFFF``, F16 ``0x7FFF``)."""
    return (1 << (fmt.exp_bits + fmt.frac_bits)) - 1


def infinity(fmt: FloatFormat, negative: bool) -> int:
    word = fmt.exp_max_field << fmt.frac_bits
    return word | (1 << (fmt.container_bits - 1)) if negative else word


def apply_specials(ops: Ops, specials: Specials, finite: BV, fmt: FloatFormat) -> BV:
    """The canonical special word where one applies, else the finite result."""
    width = fmt.container_bits
    inf = ops.ite(specials.inf_negative, ops.const(infinity(fmt, True), width),
                  ops.const(infinity(fmt, False), width))
    word = ops.ite(specials.is_nan, ops.const(canonical_nan(fmt), width),
                   ops.ite(specials.is_inf, inf, finite))
    ops.observe("result", specials=specials, finite=finite, word=word, format=fmt)
    return word


@dataclass(frozen=True)
class Operands:
    """Decoded A and B lanes, C, scales, and the special-value outcome (section 2.1-2.2)."""

    a: list[Decoded]
    b: list[Decoded]
    c: Decoded
    specials: Specials
    scale_a: list[Decoded] = field(default_factory=list)
    scale_b: list[Decoded] = field(default_factory=list)


def decode_operands(ops: Ops, a_format: FloatFormat, b_format: FloatFormat,
                    c_format: FloatFormat, a: Sequence[BV], b: Sequence[BV], c: BV,
                    scale_format: FloatFormat | None = None, scale_a: Sequence[BV] = (),
                    scale_b: Sequence[BV] = ()) -> Operands:
    """Decode every A, B, scale and C word, then classify the specials (sections 2.1-2.2, 4).

    A NaN in any scale byte is one more cause of the canonical NaN.
    """
    lanes_a = [decode_float(ops, a_format, word) for word in a]
    lanes_b = [decode_float(ops, b_format, word) for word in b]
    scales_a = [decode_float(ops, scale_format, s) for s in scale_a] if scale_format else []
    scales_b = [decode_float(ops, scale_format, s) for s in scale_b] if scale_format else []
    acc = decode_float(ops, c_format, c)
    scales = {"scale_a": scales_a, "scale_b": scales_b} if scale_format else {}
    ops.observe("decode", a=lanes_a, b=lanes_b, c=acc, **scales)
    scale_nan = ops.any_(s.is_nan for s in scales_a + scales_b) if scale_format else None
    specials = classify_specials(ops, list(zip(lanes_a, lanes_b, strict=True)), acc,
                                 extra_nan=scale_nan)
    return Operands(lanes_a, lanes_b, acc, specials, scales_a, scales_b)
