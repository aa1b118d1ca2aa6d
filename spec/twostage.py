"""The ``two-stage`` candidate model: products first, then C (SEMANTICS.md section 7).

Stage 1 aligns every product to ``2^(P - product_window)``, ``P`` the largest
raw over nonzero products, truncating toward zero, and sums the units
exactly. Stage 2 aligns that sum and C to ``2^(R - c_window)``, ``R`` the
larger raw of the two nonzero values, truncating, sums, and converts as
section 2.7 (F32 RZ, F16 RNE). The sum's raw is that of its value,
``floor(log2 |sum|)`` (section 1: the raw of a normal number), so a carry
raises it above ``P`` and a cancellation lowers it. The definition states
its windows in full, so no -133 clamp applies.
"""

from __future__ import annotations

from collections.abc import Sequence

from tcspec.spec.accumulate import (
    align_to_quantum,
    align_to_window,
    exact_product,
    exact_sum,
    masked_max,
    window_exponent,
)
from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.convert import encode_float
from tcspec.spec.formats import EXP_WIDTH, FloatFormat, check_exponent_headroom
from tcspec.spec.specials import apply_specials, decode_operands
from tcspec.spec.window import DESTINATIONS, WINDOW_BITS


def two_stage_dot(ops: Ops, a_format: FloatFormat, b_format: FloatFormat,
                  d_format: FloatFormat, a: Sequence[BV], b: Sequence[BV], c: BV, *,
                  product_window: int = WINDOW_BITS, c_window: int = WINDOW_BITS) -> BV:
    """``D = C + sum(A[k] * B[k])`` with a product window, then a product-sum/C window."""
    check_exponent_headroom([a_format, b_format, d_format], 2, max(product_window, c_window))
    operands = decode_operands(ops, a_format, b_format, d_format, a, b, c)
    products = [exact_product(ops, x.term, y.term) for x, y in zip(operands.a, operands.b)]
    product_top = window_exponent(ops, products)
    product_q = ops.sub(product_top, product_window)
    units = exact_sum(ops, [align_to_window(ops, p, product_q, product_window)
                            for p in products])
    magnitude = ops.abs_signed(units)
    partial_raw = ops.add(ops.sub(ops.bitlen(magnitude, EXP_WIDTH), 1), product_q)
    c_term = operands.c.term
    top, _ = masked_max(ops, [partial_raw, c_term.raw], [ops.ne(units, 0), c_term.nonzero])
    quantum = ops.sub(top, c_window)
    partial = align_to_quantum(ops, ops.sign(units), magnitude, product_q, quantum,
                               max(c_window + 2, magnitude.width) + 1)
    total = exact_sum(ops, [partial, align_to_window(ops, c_term, quantum, c_window)])
    finite = encode_float(ops, total, quantum, d_format, DESTINATIONS[d_format.name])
    return apply_specials(ops, operands.specials, finite, d_format)
