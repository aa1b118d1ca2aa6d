"""Exact fixed-point sums of untruncated products, and their correctly rounded words.

The candidate models ``exact-rne`` and ``exact-rz`` (SEMANTICS.md section 7)
sum C and every product exactly and round once. Here the exact sum is a
signed integer in units of a static ``2^lsb``: the smallest value exponent
any product or C of the formats can have, so every term is an exact left
shift. The register is wide enough for every input word, Inf and NaN
patterns included (their value is irrelevant but cannot wrap); for tf32 it
is 533 bits. No window or truncation takes part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tcspec.spec.accumulate import exact_product
from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.convert import encode_float
from tcspec.spec.formats import EXP_WIDTH, FloatFormat, Term
from tcspec.spec.specials import Operands, apply_specials, decode_operands


@dataclass(frozen=True)
class ExactSum:
    """The exact value ``value * 2^lsb``: ``value`` a signed (two's-complement) BV."""

    value: BV
    lsb: int


@dataclass(frozen=True)
class TermRange:
    """Static bounds of a term's value exponent ``raw - frac_offset`` and magnitude width."""

    min_exponent: int
    max_exponent: int
    mag_width: int

    @property
    def top(self) -> int:
        """The value is below ``2^top``."""
        return self.max_exponent + self.mag_width


def raw_ceiling(fmt: FloatFormat) -> int:
    """The largest raw exponent a word of ``fmt`` decodes to (Inf/NaN patterns included)."""
    return fmt.exp_max_field - fmt.bias


def product_range(a_format: FloatFormat, b_format: FloatFormat) -> TermRange:
    offset = a_format.frac_bits + b_format.frac_bits
    return TermRange(a_format.min_raw + b_format.min_raw - offset,
                     raw_ceiling(a_format) + raw_ceiling(b_format) - offset,
                     a_format.sig_bits + b_format.sig_bits)


def operand_range(fmt: FloatFormat) -> TermRange:
    return TermRange(fmt.min_raw - fmt.frac_bits, raw_ceiling(fmt) - fmt.frac_bits, fmt.sig_bits)


def place_exactly(ops: Ops, terms: Sequence[Term], ranges: Sequence[TermRange]) -> ExactSum:
    """The exact sum of ``terms`` (each within its static range), in units of the lowest LSB.

    Positive and negative terms are summed apart and subtracted once, which avoids a wide
    negation per term (solvers find probes against ``exact-rne`` about twice as fast).
    """
    lsb = min(r.min_exponent for r in ranges)
    width = max(r.top for r in ranges) - lsb + max(1, (len(terms) - 1).bit_length()) + 1
    positive, negative = [], []
    zero = ops.const(0, width)
    for term in terms:
        shift = ops.sub(ops.sub(term.raw, term.frac_offset), ops.const(lsb, EXP_WIDTH))
        placed = ops.shl(ops.zext(term.mag, width), shift)
        positive.append(ops.ite(term.negative, zero, placed))
        negative.append(ops.ite(term.negative, placed, zero))
    return ExactSum(ops.sub(ops.sum(positive), ops.sum(negative)), lsb)


def round_exact(ops: Ops, total: ExactSum, fmt: FloatFormat, rounding: str) -> BV:
    """``total`` rounded once to ``fmt`` (``"rne"`` or ``"rz"``): overflow gives the signed
    infinity, a zero result ``+0`` (section 7)."""
    return encode_float(ops, total.value, ops.const(total.lsb, EXP_WIDTH), fmt, rounding)


def exact_operand_sum(ops: Ops, operands: Operands) -> ExactSum:
    """``C + sum(A[k] * B[k])`` of decoded operands, exactly (section 7; specials ignored)."""
    terms = [exact_product(ops, x.term, y.term) for x, y in zip(operands.a, operands.b)]
    terms.append(operands.c.term)
    ranges = [product_range(operands.a[0].fmt, operands.b[0].fmt)] * len(operands.a)
    return place_exactly(ops, terms, [*ranges, operand_range(operands.c.fmt)])


def exact_fixed_point(ops: Ops, a_format: FloatFormat, b_format: FloatFormat,
                      d_format: FloatFormat, a: Sequence[BV], b: Sequence[BV], c: BV
                      ) -> ExactSum:
    """``C + sum(A[k] * B[k])`` exactly, from the raw words (section 7; specials ignored)."""
    return exact_operand_sum(ops, decode_operands(ops, a_format, b_format, d_format, a, b, c))


def exact_dot(ops: Ops, a_format: FloatFormat, b_format: FloatFormat, d_format: FloatFormat,
              a: Sequence[BV], b: Sequence[BV], c: BV, *, rounding: str) -> BV:
    """Candidates ``exact-rne`` / ``exact-rz``: specials as section 2, else one rounding."""
    operands = decode_operands(ops, a_format, b_format, d_format, a, b, c)
    finite = round_exact(ops, exact_operand_sum(ops, operands), d_format, rounding)
    return apply_specials(ops, operands.specials, finite, d_format)
