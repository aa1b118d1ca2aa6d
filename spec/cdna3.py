"""CDNA3 ``v_mfma`` fused dot products: round-down groups chained by F32 RNE (SEMANTICS.md 11.2).

K is cut into consecutive groups (:func:`group_size`: 4 for xf32, ``min(8, K)``
for f16/bf16, 16 for the fnuz FP8 pairs). One group, with C the running F32
value:

1. specials as section 2.2 (any NaN, Inf x 0, opposite infinities: NaN; else
   an infinity), then the huge-product rule: a finite product of magnitude
   at least ``2^128`` is an infinity of its sign (both signs: NaN);
2. product exponents ``eA + eB`` from the factors' unbiased exponents (a
   subnormal's is its format's minimum, a zero's -126, as :mod:`spec.mmasim`);
3. a window over the products only, ``P`` their largest exponent, each
   product truncated toward zero to units of ``2^(P - 24)`` and summed
   exactly; FP8 pairs form two such windows, even and odd K, whose sums are
   floored to units of ``2^(max(P0, P1) - 24)`` and added;
4. ``M = max(P, e_C)``; the product sum is floored to units of ``2^(M - 31)``,
   C to units of ``2^(M - 24)`` (FP8: C is 0 when ``e_C < M - 25``);
5. their exact sum rounded to F32 to nearest even (overflow: Inf), which is
   the next group's C.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tcspec.spec.accumulate import align_to_window, exact_product, exact_sum
from tcspec.spec.bitvec import BV, Bool, Ops
from tcspec.spec.convert import encode_float
from tcspec.spec.formats import EXP_WIDTH, FORMATS, FloatFormat, Term
from tcspec.spec.inputs import DotInputs
from tcspec.spec.mmasim import factor_exponent
from tcspec.spec.specials import Specials, apply_specials, decode_operands

F32 = FORMATS["f32"]

CDNA3_OPERANDS = ("xf32", "f16", "bf16", "e4m3fnuz", "e5m2fnuz")
FP8_FORMATS = ("e4m3fnuz", "e5m2fnuz")


@dataclass(frozen=True)
class Cdna3Params:
    """The parameters of one CDNA3 fused-dot instruction (section 11.2).

    ``group``: products per group; ``fp8``: even/odd product windows and the C drop;
    ``product_bits``, ``sum_bits``, ``c_bits``: fraction bits below the window exponent of
    the product window (RZ), the product sum (RD) and C (RD); ``c_drop``: FP8 keeps C only
    when ``e_C >= M - c_drop``; ``huge``: a product with ``|a*b| >= 2^huge`` is an infinity.
    """

    group: int
    steps: int
    fp8: bool = False
    product_bits: int = 24
    sum_bits: int = 31
    c_bits: int = 24
    c_drop: int = 25
    huge: int = 128


def operand_format(name: str) -> FloatFormat:
    """The table row of a CDNA3 operand format name."""
    if name not in CDNA3_OPERANDS:
        raise ValueError(f"CDNA3 fused dot has no operand format {name!r} "
                         f"(known: {', '.join(CDNA3_OPERANDS)})")
    fmt = FORMATS[name]
    assert isinstance(fmt, FloatFormat)
    return fmt


def group_size(a_format: str, k: int) -> int:
    """Products per group: xf32 4, f16/bf16 ``min(8, K)``, FP8 16 (section 11.2)."""
    if a_format == "xf32":
        return 4
    if a_format in ("f16", "bf16"):
        return min(8, k)
    return 16


def cdna3_params(a_format: str, b_format: str, k: int) -> Cdna3Params:
    """The parameters of the CDNA3 ``v_mfma`` with these operand formats and K."""
    for name in (a_format, b_format):
        operand_format(name)
    fp8 = a_format in FP8_FORMATS
    if fp8 != (b_format in FP8_FORMATS) or (not fp8 and a_format != b_format):
        raise ValueError(f"CDNA3 has no fused dot {a_format} x {b_format}")
    size = group_size(a_format, k)
    if k % size:
        raise ValueError(f"K={k} does not split into groups of {size}")
    return Cdna3Params(group=size, steps=k // size, fp8=fp8)


def floor_shift(ops: Ops, x: BV, k: BV) -> BV:
    """``floor(x * 2^k)`` for a signed ``x`` and signed ``k`` (left shifts must fit)."""
    return ops.ite(ops.sge(k, 0), ops.shl(x, k), ops.ashr(x, ops.neg(k)))


def _window(ops: Ops, products: Sequence[Term], exponents: Sequence[BV], bits: int
            ) -> tuple[BV, BV]:
    """``(P, S)``: the largest product exponent and the exact sum of the products truncated
    toward zero to units of ``2^(P - bits)``."""
    top = ops.smax_all(list(exponents))
    quantum = ops.sub(top, bits)
    units = [align_to_window(ops, p, quantum, bits) for p in products]
    return top, exact_sum(ops, units)


def _huge_products(ops: Ops, products: Sequence[Term], huge_exponent: int) -> Specials:
    """The ``>= 2^128`` rule as a special outcome: NaN when huge products of both signs."""
    positive: list[Bool] = []
    negative: list[Bool] = []
    for p in products:
        top = ops.add(ops.sub(ops.bitlen(p.mag, EXP_WIDTH), 1), ops.sub(p.raw, p.frac_offset))
        huge = ops.and_(p.nonzero, ops.sge(top, huge_exponent))
        positive.append(ops.and_(huge, ops.not_(p.negative)))
        negative.append(ops.and_(huge, p.negative))
    any_positive, any_negative = ops.any_(positive), ops.any_(negative)
    return Specials(ops.and_(any_positive, any_negative), ops.or_(any_positive, any_negative),
                    any_negative)


def cdna3_group(ops: Ops, a_format: FloatFormat, b_format: FloatFormat, a: Sequence[BV],
                b: Sequence[BV], c: BV, params: Cdna3Params) -> BV:
    """One group's F32 word from its A/B words and the running F32 C word (section 11.2)."""
    operands = decode_operands(ops, a_format, b_format, F32, a, b, c)
    products = [exact_product(ops, x.term, y.term) for x, y in zip(operands.a, operands.b)]
    exponents = [ops.add(factor_exponent(ops, x), factor_exponent(ops, y))
                 for x, y in zip(operands.a, operands.b)]
    ops.observe("products", terms=products)
    if params.fp8:
        windows = [_window(ops, products[j::2], exponents[j::2], params.product_bits)
                   for j in (0, 1)]
        top = ops.smax(windows[0][0], windows[1][0])
        floored = [floor_shift(ops, s, ops.sub(p, top)) for p, s in windows]
        total = exact_sum(ops, floored)
    else:
        top, total = _window(ops, products, exponents, params.product_bits)

    acc = operands.c
    c_exponent = factor_exponent(ops, acc)
    m = ops.smax(top, c_exponent)
    extra = params.sum_bits - params.product_bits
    wide = total.width + extra + 2
    s_units = floor_shift(ops, ops.sext(total, wide), ops.add(ops.sub(top, m), extra))
    c_lift = params.c_bits - F32.frac_bits
    c_mag = ops.zext(acc.mag, acc.mag.width + 1 + max(1, c_lift))
    c_signed = ops.ite(acc.negative, ops.neg(c_mag), c_mag)
    c_units = floor_shift(ops, c_signed, ops.add(ops.sub(acc.raw, m), c_lift))
    if params.fp8:
        kept = ops.sge(c_exponent, ops.sub(m, params.c_drop))
        c_units = ops.ite(kept, c_units, ops.const(0, c_units.width))
    c_shift = params.sum_bits - params.c_bits
    width = max(wide, c_units.width + c_shift) + 1
    units = ops.add(ops.sext(s_units, width), ops.shl(ops.sext(c_units, width), c_shift))
    ops.observe("cdna3-join", m=m, sum_units=s_units, c_units=c_units, units=units)
    word = encode_float(ops, units, ops.sub(m, params.sum_bits), F32, "rne")
    sign_bit = ops.const(1 << 31, 32)
    word = ops.ite(ops.and_(ops.eq(word, 0), ops.sign(units)), sign_bit, word)
    word = apply_specials(ops, _huge_products(ops, products, params.huge), word, F32)
    return apply_specials(ops, operands.specials, word, F32)


def cdna3_dot(ops: Ops, a_format: str, b_format: str, a: Sequence[BV], b: Sequence[BV],
              c: BV, params: Cdna3Params | None = None) -> BV:
    """``D`` of a CDNA3 fused-dot ``v_mfma``: the groups in K order, each C the last D."""
    if len(a) != len(b):
        raise ValueError(f"A has {len(a)} lanes but B has {len(b)}")
    params = params or cdna3_params(a_format, b_format, len(a))
    fa, fb = operand_format(a_format), operand_format(b_format)
    acc = ops.extract(c, 31, 0)
    for start in range(0, len(a), params.group):
        acc = cdna3_group(ops, fa, fb, a[start:start + params.group],
                          b[start:start + params.group], acc, params)
        ops.observe("cdna3-group", start=start, acc=acc)
    return acc


def cdna3_rd_dot(ops: Ops, desc: Any, inputs: DotInputs) -> BV:
    """Family ``cdna3-rd``: ``desc.params`` is the instruction's :class:`Cdna3Params`."""
    return cdna3_dot(ops, desc.a_format, desc.b_format, inputs.a, inputs.b, inputs.c,
                     desc.params)
