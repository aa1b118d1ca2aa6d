"""Integer datapaths, kind::i8 -> S32 (SEMANTICS.md section 3).

Each byte is u8 or s8 (independently for A and B), C is a two's-complement
S32 word; C and every product are summed exactly, then the sum wraps mod
2^32 or saturates once to ``[-2^31, 2^31 - 1]``. No windows, no specials.
"""

from __future__ import annotations

from collections.abc import Sequence

from tcspec.spec.bitvec import BV, Ops
from tcspec.spec.formats import IntFormat, decode_int

S32_MIN = -(1 << 31)
S32_MAX = (1 << 31) - 1


def integer_dot(ops: Ops, a_format: IntFormat, b_format: IntFormat, a: Sequence[BV],
                b: Sequence[BV], c: BV, *, saturate: bool) -> BV:
    """``D = C + sum(A[k] * B[k])`` exactly, then wrapped or saturated to S32."""
    if len(a) != len(b):
        raise ValueError(f"A has {len(a)} lanes but B has {len(b)}")
    product_width = a_format.bits + b_format.bits + 2
    width = max(32, product_width) + max(1, len(a).bit_length()) + 1
    products = []
    for word_a, word_b in zip(a, b):
        x = ops.sext(decode_int(ops, a_format, word_a), product_width)
        y = ops.sext(decode_int(ops, b_format, word_b), product_width)
        products.append(ops.sext(ops.mul(x, y), width))
    total = ops.sum(products + [ops.sext(c, width)])
    ops.observe("integer", c=c, products=products, total=total, saturate=saturate)
    if not saturate:
        return ops.extract(total, 31, 0)
    clamped = ops.ite(ops.slt(total, S32_MIN), ops.const(S32_MIN, width),
                      ops.ite(ops.sgt(total, S32_MAX), ops.const(S32_MAX, width), total))
    return ops.extract(clamped, 31, 0)
